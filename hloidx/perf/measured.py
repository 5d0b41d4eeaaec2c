"""A measured profile beside the estimates: each kernel row's measured time (joined on the
instruction name of one program: never on kernel names), the collectives apart (their span
includes waiting for peers), what could not be joined, and how close the estimates are.

The profile comes as a ``hloidx.profiles.ProgramProfile`` (read by ``hloidx.profiles``);
this module reads its ``ops`` (instruction -> mean_ns, per_step, samples), ``executions``,
``warmup``, ``step_ns`` and ``timeline`` and names no type of it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hlo.ir import HloModule
    from .report import CostReport

#: how many of the largest mispredictions the document and the text show
MISPREDICTIONS = 10


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties)."""
    if len(xs) < 2:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    vy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return None if vx == 0 or vy == 0 else cov / (vx * vy)


def accuracy(rows: list[tuple[float | None, float, float]]) -> dict[str, Any]:
    """``rows``: (estimate per launch or None, measured per launch, measured per step), one
    per kernel (collectives apart). within_2x: the share of measured time whose estimate is
    within a factor 2; spearman: rank correlation of per-launch times; median_abs_log2: the
    median over kernels of |log2(estimate / measured)|. Kernels without an estimate count as
    not within 2x and are left out of the other two."""
    total = sum(w for _, _, w in rows)
    within = sum(w for e, m, w in rows if e is not None and m > 0 and 0.5 <= e / m <= 2.0)
    pairs = [(e, m) for e, m, _ in rows if e is not None and e > 0 and m > 0]
    logs = sorted(abs(math.log2(e / m)) for e, m in pairs)
    rho = spearman([e for e, _ in pairs], [m for _, m in pairs])
    median = None
    if logs:
        mid = len(logs) // 2
        median = logs[mid] if len(logs) % 2 else (logs[mid - 1] + logs[mid]) / 2
    return {
        "within_2x": None if total == 0 else round(within / total, 4),
        "spearman": None if rho is None else round(rho, 4),
        "median_abs_log2": None if median is None else round(median, 4),
        "kernels": len(rows),
        "kernels_compared": len(pairs),
    }


@dataclass
class MeasuredJoin:
    """The profile's figures joined onto a cost report's rows."""

    source: str
    path: str
    program: Any
    #: kernel or collective row name -> the op timing (mean_ns, per_step, samples)
    rows: dict[str, Any] = field(default_factory=dict)
    #: row name -> the profile's instruction names joined to it (async-wrapped ops)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    collectives: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    accuracy: dict[str, Any] = field(default_factory=dict)
    mispredictions: list[dict[str, Any]] = field(default_factory=list)

    def row_json(self, name: str) -> dict[str, Any] | None:
        op = self.rows.get(name)
        return None if op is None else op.as_json()

    def annotate(self, doc: dict[str, Any]) -> None:
        """Adds ``measured`` to each joined row of a report's JSON and to the document."""
        for row in doc["kernels"]:
            found = self.row_json(row["name"])
            if found is not None:
                row["measured"] = found
        doc["measured"] = self.as_json()

    def as_json(self) -> dict[str, Any]:
        p = self.program
        collectives = []
        for name in sorted(self.collectives):
            op = self.rows[name]
            collectives.append({"name": name, **op.as_json(), "joined": self.aliases.get(name)})
        return {
            "source": f"{self.source} {self.path}",
            "module": p.module,
            "program_id": p.program_id,
            "executions": p.executions,
            "warmup_dropped": p.warmup,
            "devices": len(p.devices),
            "step_ns": None if p.step_ns is None else round(p.step_ns, 1),
            "times": "steady means per launch of the innermost thunk (all its kernels "
            "together), warm-up executions dropped",
            "accuracy": self.accuracy,
            "collectives": collectives,
            "largest_mispredictions": self.mispredictions,
            "notes": self.notes,
        }


def _async_starts(module: HloModule) -> dict[str, str]:
    """Inner instruction name -> its async ``*-start`` (the IR keeps the async computation)."""
    out: dict[str, str] = {}
    for instr in module.instructions():
        if not instr.opcode.endswith("-start"):
            continue
        for comps in instr.called_computations.values():
            for comp in comps:
                for inner in comp.instructions:
                    if inner.opcode != "parameter":
                        out.setdefault(inner.name, instr.name)
    return out


def join_measured(
    report: CostReport, module: HloModule, program: Any, source: str, path: str
) -> MeasuredJoin:
    """Each kernel row and each collective row of ``report`` with the measured timing of its
    instruction; async-wrapped ops joined to their ``*-start``; notes for the rest."""
    join = MeasuredJoin(source, path, program)
    ops = dict(program.ops)
    kernel_names = {k.name for k in report.kernels}
    collective_names = {c.name for c in report.collective_rows()}
    names = {i.name for i in module.instructions()}
    inner = _async_starts(module)
    for name in list(ops):
        target = name if name in kernel_names | collective_names else inner.get(name)
        if target is None or (target not in kernel_names and target not in collective_names):
            continue
        op = ops.pop(name)
        join.aliases.setdefault(target, []).append(name)
        if target in join.rows:  # several wrapped ops of one start: their times add
            old = join.rows[target]
            op = type(op)(target, old.mean_ns + op.mean_ns, old.per_step, old.samples)
        join.rows[target] = op
    # the text folds async computations into their *-start: pair the rest by order
    unjoined_starts = [
        i
        for i in module.entry.instructions
        if i.opcode.endswith("-start") and i.name in collective_names and i.name not in join.rows
    ]
    wrapped = sorted((n for n in ops if n not in names), key=lambda n: (ops[n].offset_ns or 0.0, n))
    paired = 0
    for start in unjoined_starts:
        kind = start.opcode.removesuffix("-start")
        match = next((n for n in wrapped if n.split(".")[0] == kind), None)
        if match is None:
            continue
        wrapped.remove(match)
        op = ops.pop(match)
        join.rows[start.name] = op
        join.aliases[start.name] = [match]
        paired += 1
    if paired:
        join.notes.append(
            f"{paired} async-wrapped ops joined to their *-start by order (the HLO text "
            "folds async computations into their start)"
        )
    join.collectives = {n for n in join.rows if n in collective_names}
    missing = sorted(n for n in ops if n not in names)
    if missing:
        join.notes.append(
            f"{len(missing)} instructions of the profile are not in the HLO: "
            + ", ".join(missing[:8])
            + (" ..." if len(missing) > 8 else "")
        )
    no_row = sorted(n for n in ops if n in names)
    if no_row:
        join.notes.append(
            f"{len(no_row)} measured instructions have no kernel row: "
            + ", ".join(no_row[:8])
            + (" ..." if len(no_row) > 8 else "")
        )
    unmeasured = sorted(n for n in kernel_names if n not in join.rows)
    if unmeasured:
        join.notes.append(
            f"{len(unmeasured)} kernel rows have no measurement: "
            + ", ".join(unmeasured[:8])
            + (" ..." if len(unmeasured) > 8 else "")
        )
    join.notes.extend(program.notes)
    rows = []
    misses = []
    for k in report.kernels:
        op = join.rows.get(k.name)
        if op is None:
            continue
        rows.append((k.exec_time_ns, op.mean_ns, op.mean_ns * op.per_step))
        if k.exec_time_ns is not None and k.exec_time_ns > 0 and op.mean_ns > 0:
            ratio = k.exec_time_ns / op.mean_ns
            misses.append((abs(math.log2(ratio)) * op.mean_ns * op.per_step, k, op, ratio))
    join.accuracy = accuracy(rows)
    misses.sort(key=lambda m: m[0], reverse=True)
    join.mispredictions = [
        {
            "name": k.name,
            "estimate_ns": round(k.exec_time_ns, 1),
            "measured_ns": round(op.mean_ns, 1),
            "ratio": round(ratio, 3),
            "per_step": op.per_step,
        }
        for _, k, op, ratio in misses[:MISPREDICTIONS]
    ]
    return join
