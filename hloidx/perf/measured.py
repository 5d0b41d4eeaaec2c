"""A measured profile beside the estimates: each kernel row's measured time (joined on the
instruction name of one program: never on kernel names), the collectives apart (their span
includes waiting for peers), what could not be joined, and how close the estimates are.

The profile comes as a ``hloidx.profiles.ProgramProfile`` (read by ``hloidx.profiles``);
this module reads its ``ops`` (instruction -> mean_ns, per_step, samples), ``executions``,
``warmup``, ``step_ns`` and ``timeline`` and names no type of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .accuracy import AccuracyRow, accuracy

if TYPE_CHECKING:
    from ..hlo.ir import HloModule
    from .report import CostReport

#: how many of the largest mispredictions the document and the text show
MISPREDICTIONS = 10


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

    def slices(self) -> list[Any]:
        """The first steady execution's launches as timeline slices from its first kernel:
        the collectives (and the ops wrapped in their starts) on the communication lane."""
        from .step import Slice

        launches = list(self.program.timeline)
        if not launches:
            return []
        zero = min(launch.start_ns for launch in launches)
        wrapped = {inner for n in self.collectives for inner in self.aliases.get(n, [])}
        out = []
        for launch in launches:
            collective = launch.instruction in self.collectives or launch.instruction in wrapped
            out.append(
                Slice(
                    launch.instruction,
                    "communication" if collective else "compute",
                    launch.start_ns - zero,
                    launch.start_ns - zero + launch.duration_ns,
                    "collective" if collective else "kernel",
                    {"kernels": launch.kernels},
                    0,
                )
            )
        return out

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
    """Inner instruction name -> the instruction that runs it: its async ``*-start`` (when the
    IR keeps the async computation), or its fusion (XLA names a thunk of a multi-output
    reduction fusion after the reduction inside it)."""
    out: dict[str, str] = {}
    for instr in module.instructions():
        if not instr.opcode.endswith("-start") and instr.opcode != "fusion":
            continue
        for comps in instr.called_computations.values():
            for comp in comps:
                for inner in comp.instructions:
                    if inner.opcode != "parameter":
                        out.setdefault(inner.name, instr.name)
    return out


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def join_measured(
    report: CostReport,
    module: HloModule,
    program: Any,
    source: str,
    path: str,
    wrapped: dict[str, str] | None = None,
) -> MeasuredJoin:
    """Each kernel row and each collective row of ``report`` with the measured timing of its
    instruction; async-wrapped ops joined to their ``*-start`` (``wrapped``: inner name ->
    start, from the binary HLO; else from the IR, else by order); notes for the rest."""
    join = MeasuredJoin(source, path, program)
    ops = dict(program.ops)
    kernel_names = {k.name for k in report.kernels}
    collective_names = {c.name for c in report.collective_rows()}
    names = {i.name for i in module.instructions()}
    inner = {**_async_starts(module), **(wrapped or {})}
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
    through = sum(1 for target, names in join.aliases.items() for n in names if n != target)
    if through:
        join.notes.append(
            f"{through} measured instructions joined to the instruction that runs them (an "
            "async *-start, or the fusion whose reduction names the thunk): their times add"
        )
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
    for c in report.collective_rows():
        op = join.rows.get(c.name)
        if op is not None:
            rows.append(AccuracyRow(c.exec_time_ns, op.mean_ns, True, op.per_step))
    for k in report.kernels:
        op = join.rows.get(k.name)
        if op is None:
            continue
        spread = getattr(k, "exec_time_range_ns", None)
        rows.append(
            AccuracyRow(
                k.exec_time_ns,
                op.mean_ns,
                False,
                op.per_step,
                None if spread is None else tuple(spread),
            )
        )
        if k.exec_time_ns is not None and k.exec_time_ns > 0 and op.mean_ns > 0:
            ratio = k.exec_time_ns / op.mean_ns
            misses.append((abs(k.exec_time_ns - op.mean_ns) * op.per_step, k, op, ratio))
    join.accuracy = _rounded(accuracy(rows))
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
