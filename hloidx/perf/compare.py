"""``compare_reports``: the same kernels of two modules (before and after a change), matched by
name, else by the structure of their fused computation, sorted by the change of their time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .text import human_bytes, human_time

if TYPE_CHECKING:
    from .costs import KernelCost
    from .report import CostReport


@dataclass
class KernelChange:
    before: KernelCost | None
    after: KernelCost | None
    matched_by: str  # "name", "structure", "only before", "only after"

    @property
    def name(self) -> str:
        if (
            self.before is not None
            and self.after is not None
            and self.before.name != self.after.name
        ):
            return f"{self.before.name} -> {self.after.name}"
        return (self.before or self.after).name  # type: ignore[union-attr]

    @property
    def delta_ns(self) -> float:
        return (self.after.time_ns if self.after else 0.0) - (
            self.before.time_ns if self.before else 0.0
        )

    def as_json(self) -> dict[str, Any]:
        def side(k: KernelCost | None) -> dict[str, Any] | None:
            if k is None:
                return None
            return {
                "name": k.name,
                "exec_time_ns": None if k.exec_time_ns is None else round(k.exec_time_ns, 3),
                "bytes_read": k.bytes_read,
                "bytes_written": k.bytes_written,
                "flops": k.flops,
                "tile_sizes": k.tile_sizes,
                "why": k.why,
            }

        return {
            "name": self.name,
            "matched_by": self.matched_by,
            "delta_time_ns": round(self.delta_ns, 3),
            "before": side(self.before),
            "after": side(self.after),
        }


@dataclass
class Comparison:
    before: CostReport
    after: CostReport
    changes: list[KernelChange] = field(default_factory=list)

    @property
    def delta_ns(self) -> float:
        return self.after.total_time_ns - self.before.total_time_ns

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "device": self.after.device.name,
            "model": self.after.model,
            "before": {
                "module": self.before.module,
                "total_time_ns": round(self.before.total_time_ns, 3),
            },
            "after": {
                "module": self.after.module,
                "total_time_ns": round(self.after.total_time_ns, 3),
            },
            "delta_time_ns": round(self.delta_ns, 3),
            "kernels": [c.as_json() for c in self.changes],
        }

    def text(self, limit: int | None = None) -> str:
        lines = [
            f"{self.before.module} -> {self.after.module} on {self.after.device.name}, model "
            f"{self.after.model} (estimates, not measurements)",
            "",
        ]
        shown = self.changes if limit is None else self.changes[:limit]
        for c in shown:
            b, a = c.before, c.after
            before = human_time(b.exec_time_ns) if b else "-"
            after = human_time(a.exec_time_ns) if a else "-"
            bytes_b = human_bytes(b.bytes_read + b.bytes_written) if b else "-"
            bytes_a = human_bytes(a.bytes_read + a.bytes_written) if a else "-"
            sign = "+" if c.delta_ns >= 0 else "-"
            lines.append(
                f"{c.name}  [{c.matched_by}]  {before} -> {after} "
                f"({sign}{human_time(abs(c.delta_ns))})"
                f"  bytes {bytes_b} -> {bytes_a}"
            )
            if a is not None and b is not None and a.tile_sizes != b.tile_sizes:
                lines.append(f"    tiles {b.tile_sizes} -> {a.tile_sizes}")
            if a is not None and (b is None or a.why != b.why):
                lines.append(f"    why now: {a.why}")
            elif b is not None and a is None:
                lines.append(f"    was: {b.why}")
        sign = "+" if self.delta_ns >= 0 else "-"
        lines.append("")
        lines.append(
            f"total: {human_time(self.before.total_time_ns)} -> "
            f"{human_time(self.after.total_time_ns)} ({sign}{human_time(abs(self.delta_ns))}); "
            f"kernels {len(self.before.kernels)} -> {len(self.after.kernels)}"
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def compare_reports(before: CostReport, after: CostReport) -> Comparison:
    """The kernels of ``before`` and ``after`` matched by name, else by fused-computation
    structure; sorted by the size of the change in estimated time."""
    changes: list[KernelChange] = []
    remaining = {k.name: k for k in after.kernels}
    unmatched: list[KernelCost] = []
    for k in before.kernels:
        other = remaining.pop(k.name, None)
        if other is not None:
            changes.append(KernelChange(k, other, "name"))
        else:
            unmatched.append(k)
    by_structure: dict[Any, list[KernelCost]] = {}
    for k in remaining.values():
        if k.fingerprint is not None:
            by_structure.setdefault(k.fingerprint, []).append(k)
    used: set[str] = set()
    for k in unmatched:
        candidates = by_structure.get(k.fingerprint) if k.fingerprint is not None else None
        if candidates:
            other = candidates.pop(0)
            used.add(other.name)
            changes.append(KernelChange(k, other, "structure"))
        else:
            changes.append(KernelChange(k, None, "only before"))
    for name, k in remaining.items():
        if name not in used:
            changes.append(KernelChange(None, k, "only after"))
    changes.sort(key=lambda c: -abs(c.delta_ns))
    return Comparison(before, after, changes)
