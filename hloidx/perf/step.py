"""The step: the module's program on a timeline, as XLA's latency-hiding scheduler sees a
schedule (issue 36).

The entry computation runs in its text's order (XLA's schedule when the module says
``is_scheduled=true``). Kernels run one after another on the compute stream. An asynchronous
collective runs on the communication stream from its ``-start`` to its ``-done``, beside the
kernels scheduled between them, and the ``-done`` waits for it; a synchronous collective stops
the compute stream until it ends. Collectives run one at a time on the communication stream.
The start and the done of an asynchronous collective each take XLA's ``kLowCost`` (1 µs) of
the compute stream (``SolLatencyEstimator::NodeCost``). A loop runs its condition and body
``trips`` times and its condition once more; a call runs its computation in place; a
conditional runs its most expensive branch (and says so). A loop's body, a call's computation
and a branch are timed on their own, once, and placed as one block: a collective in flight
across them does not delay the collectives inside them.

The durations come from outside: ``kernel_ns(kernel)`` for one launch of a kernel row, and
``collective_time(instruction)`` for a collective (``None``: not estimated). **Exposed
communication** is the time the compute stream waits for communication: at a ``-done`` whose
collective has not finished, and the whole of a synchronous collective. The step time is the
compute stream's busy time plus the exposed communication.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .kernels import Kernel
    from .loops import Node, Program

#: XLA's ``kLowCost``: what an async collective's start and done cost the compute stream
START_DONE_COST_NS = 1000.0


@dataclass(frozen=True)
class CollectiveTime:
    """One run of a collective, as a collective model estimates it."""

    time_ns: float
    bytes: int | None = None
    participants: int | None = None
    #: ``single-host`` or ``multi-host``
    communication: str | None = None
    notes: tuple[str, ...] = ()


CollectiveTimer = Callable[["Instruction"], "CollectiveTime | None"]
KernelTimer = Callable[["Kernel"], "float | None"]


@dataclass
class Slice:
    """One span of a stream: a kernel, a collective, a loop or a call."""

    name: str
    lane: str  # "compute" or "communication"
    start_ns: float
    end_ns: float
    kind: str
    args: dict[str, Any] = field(default_factory=dict)
    #: nesting level (a loop's first iteration is drawn one level below the loop)
    depth: int = 0

    def shifted(self, by: float, depth: int = 0) -> Slice:
        return Slice(
            self.name,
            self.lane,
            self.start_ns + by,
            self.end_ns + by,
            self.kind,
            self.args,
            self.depth + depth,
        )


@dataclass
class CollectiveRow:
    """A collective of the module with its estimate (one row, kind ``collective``)."""

    name: str
    opcode: str
    #: runs per step (0: in a branch that is not counted)
    count: int
    estimate: CollectiveTime | None
    #: how long the compute stream waits for one run
    exposed_ns: float = 0.0
    asynchronous: bool = False
    operand_bytes: int = 0
    #: why the collective model gave no estimate (its ``why_not``), where it says
    why_not: str | None = None

    @property
    def exec_time_ns(self) -> float | None:
        return None if self.estimate is None else self.estimate.time_ns

    @property
    def time_ns(self) -> float:
        return (self.exec_time_ns or 0.0) * self.count

    @property
    def total_exposed_ns(self) -> float:
        return self.exposed_ns * self.count

    def as_json(self) -> dict[str, Any]:
        e = self.estimate
        return {
            "name": self.name,
            "opcode": self.opcode,
            "kind": "collective",
            "count": self.count,
            "asynchronous": self.asynchronous,
            "exec_time_ns": None if e is None else round(e.time_ns, 3),
            "bytes": self.operand_bytes if e is None or e.bytes is None else e.bytes,
            "bytes_counted": "the operands' bytes" if e is None or e.bytes is None else "model",
            "participants": None if e is None else e.participants,
            "communication": "not estimated" if e is None else e.communication,
            "exposed_ns": None if e is None else round(self.exposed_ns, 3),
            "notes": ([self.why_not] if self.why_not else []) if e is None else list(e.notes),
        }


@dataclass
class Segment:
    """A list of nodes run once: its time and its slices, relative to its start."""

    time_ns: float = 0.0
    compute_ns: float = 0.0
    communication_ns: float = 0.0
    exposed_ns: float = 0.0
    slices: list[Slice] = field(default_factory=list)
    #: collective rows by name (per run), and the kernels of branches not counted
    rows: dict[str, CollectiveRow] = field(default_factory=dict)
    inactive: set[str] = field(default_factory=set)
    choices: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class StepResult:
    time_ns: float
    compute_ns: float
    communication_ns: float
    exposed_ns: float
    scheduled: bool
    slices: list[Slice]
    collectives: list[CollectiveRow]
    #: kernel rows in a conditional's branches that are not counted
    inactive_kernels: set[str]
    conditionals: list[dict[str, Any]]
    #: collectives without an estimate (communication then counts only the estimated ones)
    not_estimated: int

    @property
    def order(self) -> str:
        return "schedule" if self.scheduled else "text"

    def top_exposed(self, n: int = 5) -> list[CollectiveRow]:
        rows = [r for r in self.collectives if r.total_exposed_ns > 0]
        return sorted(rows, key=lambda r: r.total_exposed_ns, reverse=True)[:n]

    def as_json(self) -> dict[str, Any]:
        return {
            "time_ns": round(self.time_ns, 3),
            "compute_ns": round(self.compute_ns, 3),
            "communication_ns": None if self._no_estimate else round(self.communication_ns, 3),
            "exposed_communication_ns": None if self._no_estimate else round(self.exposed_ns, 3),
            "order": self.order,
            "collectives": len(self.collectives),
            "collectives_not_estimated": self.not_estimated,
            "top_exposed": [
                {"name": r.name, "exposed_ns": round(r.total_exposed_ns, 3), "count": r.count}
                for r in self.top_exposed()
            ],
            "conditionals": self.conditionals,
        }

    @property
    def _no_estimate(self) -> bool:
        return bool(self.collectives) and self.not_estimated == len(self.collectives)


def _operand_bytes(instr: Instruction) -> int:
    from .fusion_model import shape_bytes

    return sum(shape_bytes(o.shape) for o in instr.operands)


class _Simulator:
    def __init__(
        self,
        kernel_ns: KernelTimer,
        collective_time: CollectiveTimer | None,
        keep_slices: bool,
    ) -> None:
        self.kernel_ns = kernel_ns
        self.collective_time = collective_time
        self.keep_slices = keep_slices
        self.estimates: dict[int, CollectiveTime | None] = {}

    def estimate(self, instr: Instruction) -> CollectiveTime | None:
        key = id(instr)
        if key not in self.estimates:
            found = None if self.collective_time is None else self.collective_time(instr)
            self.estimates[key] = found
        return self.estimates[key]

    def _row(self, seg: Segment, node: Node, estimate: CollectiveTime | None) -> CollectiveRow:
        collective = node.collective or node.instruction
        row = CollectiveRow(
            node.name,
            node.instruction.opcode,
            node.count,
            estimate,
            asynchronous=node.kind == "start",
            operand_bytes=_operand_bytes(collective),
            why_not=None
            if estimate is not None
            else getattr(self.collective_time, "why_not", {}).get(collective.name),
        )
        seg.rows[node.name] = row
        return row

    def _add(self, seg: Segment, s: Slice) -> None:
        if self.keep_slices:
            seg.slices.append(s)

    def run(self, nodes: list[Node]) -> Segment:
        seg = Segment()
        t = 0.0
        lane_free = 0.0
        in_flight: dict[int, tuple[float, CollectiveRow]] = {}
        for node in nodes:
            kind = node.kind
            if kind == "kernel":
                assert node.kernel is not None
                d = self.kernel_ns(node.kernel) or 0.0
                self._add(seg, Slice(node.name, "compute", t, t + d, "kernel"))
                t += d
                seg.compute_ns += d
            elif kind == "collective":
                estimate = self.estimate(node.instruction)
                row = self._row(seg, node, estimate)
                d = 0.0 if estimate is None else estimate.time_ns
                begin = max(t, lane_free)
                end = begin + d
                self._add(seg, Slice(node.name, "communication", begin, end, "collective"))
                if end > t:
                    self._add(seg, Slice(f"waits for {node.name}", "compute", t, end, "wait"))
                row.exposed_ns = end - t
                seg.exposed_ns += end - t
                seg.communication_ns += d
                t = lane_free = end
            elif kind == "start":
                assert node.collective is not None
                estimate = self.estimate(node.collective)
                row = self._row(seg, node, estimate)
                self._add(seg, Slice(node.name, "compute", t, t + START_DONE_COST_NS, "start"))
                t += START_DONE_COST_NS
                seg.compute_ns += START_DONE_COST_NS
                d = 0.0 if estimate is None else estimate.time_ns
                begin = max(t, lane_free)
                end = lane_free = begin + d
                seg.communication_ns += d
                self._add(seg, Slice(node.name, "communication", begin, end, "collective"))
                in_flight[id(node)] = (end, row)
            elif kind == "done":
                assert node.start is not None
                end, row = in_flight.pop(id(node.start), (t, None))  # type: ignore[arg-type]
                wait = max(0.0, end - t)
                if row is not None:
                    row.exposed_ns = wait
                if wait > 0:
                    what = f"waits for {node.start.name}"
                    self._add(seg, Slice(what, "compute", t, end, "wait"))
                seg.exposed_ns += wait
                t = max(t, end)
                self._add(seg, Slice(node.name, "compute", t, t + START_DONE_COST_NS, "done"))
                t += START_DONE_COST_NS
                seg.compute_ns += START_DONE_COST_NS
            elif kind == "call":
                t = self._nested(seg, node, [self.run(node.body)], [1], t, "call")
            elif kind == "loop":
                assert node.loop is not None
                n = node.loop.counted_trips
                cond, body = self.run(node.condition), self.run(node.body)
                t = self._nested(seg, node, [cond, body, cond], [n, n, 1], t, "loop")
            elif kind == "conditional":
                branches = [self.run(b) for b in node.branches]
                chosen = max(range(len(branches)), key=lambda i: branches[i].time_ns)
                for i, other in enumerate(branches):
                    if i != chosen:
                        seg.inactive.update(_names(node.branches[i]))
                        seg.inactive.update(other.inactive)
                seg.choices.append(
                    {
                        "name": node.name,
                        "branches": [
                            {"computation": c, "time_ns": round(b.time_ns, 3)}
                            for c, b in zip(node.branch_names, branches, strict=True)
                        ],
                        "counted": node.branch_names[chosen],
                        "why": "the most expensive branch is counted (which one runs is "
                        "decided at run time)",
                    }
                )
                t = self._nested(seg, node, [branches[chosen]], [1], t, "conditional")
        for end, row in in_flight.values():
            # started here and never waited for here: the step still waits for its end
            wait = max(0.0, end - t)
            row.exposed_ns = wait
            seg.exposed_ns += wait
            t = max(t, end)
        seg.time_ns = t
        return seg

    def _nested(
        self,
        seg: Segment,
        node: Node,
        parts: list[Segment],
        times: list[int],
        t: float,
        kind: str,
    ) -> float:
        """Runs ``parts`` (each ``times`` times) in place at ``t`` and returns the new time;
        their first run is drawn under the node's slice."""
        total = sum(p.time_ns * n for p, n in zip(parts, times, strict=True))
        args: dict[str, Any] = {}
        if node.loop is not None:
            args = {
                "trip_count": node.loop.trip_count.value,
                "counted_trips": node.loop.counted_trips,
                "found": node.loop.trip_count.describe(),
                "iteration_ns": round(parts[0].time_ns + parts[1].time_ns, 3),
            }
        self._add(seg, Slice(node.name, "compute", t, t + total, kind, args))
        offset = t
        seen: set[int] = set()
        for part, n in zip(parts, times, strict=True):
            if id(part) not in seen:
                seen.add(id(part))
                seg.rows.update(part.rows)
                seg.inactive.update(part.inactive)
                seg.choices.extend(part.choices)
                if self.keep_slices and n:
                    seg.slices.extend(s.shifted(offset, 1) for s in part.slices)
            seg.compute_ns += part.compute_ns * n
            seg.communication_ns += part.communication_ns * n
            seg.exposed_ns += part.exposed_ns * n
            offset += part.time_ns if n else 0.0
        return t + total


def _names(nodes: list[Node]) -> set[str]:
    from .loops import subtree_kernels

    return {k.name for k in subtree_kernels(nodes)}


def simulate_step(
    program: Program,
    kernel_ns: KernelTimer,
    collective_time: CollectiveTimer | None = None,
    keep_slices: bool = True,
) -> StepResult:
    """The step of ``program`` with these durations (see the module's docstring)."""
    sim = _Simulator(kernel_ns, collective_time, keep_slices)
    seg = sim.run(program.nodes)
    rows = list(seg.rows.values())
    for row in rows:
        if any(row.name.startswith(prefix) for prefix in _inactive_prefixes(seg)):
            row.count = 0
    not_estimated = sum(1 for r in rows if r.estimate is None)
    return StepResult(
        seg.time_ns,
        seg.compute_ns,
        seg.communication_ns,
        seg.exposed_ns,
        program.scheduled,
        seg.slices,
        rows,
        seg.inactive,
        seg.choices,
        not_estimated,
    )


def _inactive_prefixes(seg: Segment) -> list[str]:
    out = []
    for choice in seg.choices:
        for branch in choice["branches"]:
            if branch["computation"] != choice["counted"]:
                out.append(f"{choice['name']}/{branch['computation']}/")
    return out
