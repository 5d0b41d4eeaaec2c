"""The module as a program: the entry computation in order, with its loops, calls,
conditionals and collectives (issue 36).

``walk_module`` gives a :class:`Program`: a tree of :class:`Node` (one per instruction of a
computation, in the text's order, which is XLA's schedule when the module says
``is_scheduled=true``), every kernel row with how many times it runs per step (``count``: the
product of the enclosing loops' trip counts), the module's loops with their trip counts and how
each was found, and its conditionals. A loop whose trip count is unknown is counted as one
trip, and says so. A call's computation runs in place (XLA inlines it). A
conditional's branches are all walked; which one counts is decided once they are costed
(``step.py``: the most expensive).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .kernels import FREE, LIBRARY_OPS, Kernel, Skipped, copies_before, kernel_of
from .trip_count import TripCount, trip_count

if TYPE_CHECKING:
    from ..hlo.ir import Computation, HloModule, Instruction

#: collectives that synchronise the compute stream when not split into start and done
SYNC_COLLECTIVES = frozenset(
    {
        "all-reduce",
        "all-gather",
        "reduce-scatter",
        "all-to-all",
        "collective-permute",
        "collective-broadcast",
        "ragged-all-to-all",
    }
)
ASYNC_STARTS = frozenset(f"{op}-start" for op in SYNC_COLLECTIVES)
ASYNC_DONES = frozenset(f"{op}-done" for op in SYNC_COLLECTIVES)
#: communication or host transfers that are not collectives the step model estimates
OTHER_TRANSFERS = frozenset(
    {
        "send",
        "send-done",
        "recv",
        "recv-done",
        "copy-start",
        "copy-done",
        "infeed",
        "outfeed",
    }
)
MAX_DEPTH = 16


@dataclass
class Loop:
    """A ``while`` of the module."""

    name: str
    trip_count: TripCount
    #: times the loop itself runs per step (the enclosing loops' counted trips)
    count: int
    depth: int

    @property
    def counted_trips(self) -> int:
        """The trips its body is counted with: the trip count, or 1 when unknown."""
        value = self.trip_count.value
        return 1 if value is None else value

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "trip_count": self.trip_count.value,
            "how": self.trip_count.how,
            "found": self.trip_count.describe(),
            "reason": self.trip_count.reason or None,
            "xla_trip_count": self.trip_count.xla_value,
            "count": self.count,
            "counted_trips": self.counted_trips,
            "depth": self.depth,
        }


@dataclass
class Node:
    """One instruction of a computation, in order.

    ``kind``: ``kernel``, ``free`` (launches nothing), ``collective`` (synchronous),
    ``start`` / ``done`` (an asynchronous collective's two halves), ``loop``, ``call``,
    ``conditional``, ``other`` (not estimated: ``reason``)."""

    name: str
    instruction: Instruction
    kind: str
    kernel: Kernel | None = None
    #: a loop's or a call's body; a loop's condition
    body: list[Node] = field(default_factory=list)
    condition: list[Node] = field(default_factory=list)
    branches: list[list[Node]] = field(default_factory=list)
    branch_names: list[str] = field(default_factory=list)
    loop: Loop | None = None
    #: the collective a start or a synchronous collective performs (an async-start's wrapped
    #: instruction, else the instruction itself); a done's start
    collective: Instruction | None = None
    start: Node | None = None
    reason: str = ""
    #: runs per step
    count: int = 1


@dataclass
class Program:
    module: HloModule
    nodes: list[Node]
    kernels: list[Kernel]
    skipped: list[Skipped]
    loops: list[Loop]
    conditionals: list[Node]
    collectives: list[Node]

    @property
    def scheduled(self) -> bool:
        return self.module.attributes.get("is_scheduled", "").lower() == "true"


def _wrapped_collective(instr: Instruction) -> Instruction | None:
    """The collective an ``async-start`` wraps, if it wraps one."""
    for comps in instr.called_computations.values():
        for comp in comps:
            root = comp.root
            if root is not None and root.opcode in SYNC_COLLECTIVES:
                return root
    return None


class _Walker:
    def __init__(self, module: HloModule, model: str) -> None:
        self.module = module
        self.model = model
        self.kernels: list[Kernel] = []
        self.skipped: list[Skipped] = []
        self.loops: list[Loop] = []
        self.conditionals: list[Node] = []
        self.collectives: list[Node] = []

    def walk(self, comp: Computation, prefix: str, count: int, depth: int) -> list[Node]:
        nodes: list[Node] = []
        starts: dict[int, Node] = {}
        for instr in comp.instructions:
            if self.model != "xla":  # XLA's copy insertion: a copy before an in-place kernel
                for copy in copies_before(instr, self.module, prefix, count):
                    self.kernels.append(copy)
                    nodes.append(Node(copy.name, copy.instruction, "kernel", kernel=copy))
                    nodes[-1].count = count
            node = self._node(instr, prefix + instr.name, count, depth, starts)
            node.count = count
            nodes.append(node)
        return nodes

    def _skip(self, name: str, instr: Instruction, reason: str) -> None:
        self.skipped.append(Skipped(name, instr.opcode, reason))

    def _node(
        self, instr: Instruction, name: str, count: int, depth: int, starts: dict[int, Node]
    ) -> Node:
        op = instr.opcode
        if op in FREE or op == "async-update":
            self._skip(name, instr, "launches no kernel (cost 0)")
            return Node(name, instr, "free")
        if op in SYNC_COLLECTIVES:
            node = Node(name, instr, "collective", collective=instr)
            self.collectives.append(node)
            self._skip(name, instr, f"a collective ({op}): a row of its own, kind collective")
            return node
        if op in ASYNC_STARTS or op == "async-start":
            wrapped = instr if op in ASYNC_STARTS else _wrapped_collective(instr)
            if wrapped is None:
                self._skip(name, instr, f"{op} of no collective: not estimated")
                return Node(name, instr, "other", reason="an async op that is not a collective")
            node = Node(name, instr, "start", collective=wrapped)
            starts[id(instr)] = node
            self.collectives.append(node)
            self._skip(name, instr, f"a collective ({op}): a row of its own, kind collective")
            return node
        if op in ASYNC_DONES or op == "async-done":
            start = starts.get(id(instr.operands[0])) if instr.operands else None
            if start is None:
                self._skip(name, instr, f"{op} of no collective start: not estimated")
                return Node(name, instr, "other", reason="a done without its start")
            self._skip(name, instr, f"an async done ({op}): waits for {start.name}")
            return Node(name, instr, "done", start=start)
        if op in OTHER_TRANSFERS:
            reason = f"{op}: a host transfer or point-to-point op, not estimated"
            self._skip(name, instr, reason)
            return Node(name, instr, "other", reason=reason)
        if depth >= MAX_DEPTH and op in ("while", "call", "conditional"):
            reason = f"{op} nested deeper than {MAX_DEPTH}: not estimated"
            self._skip(name, instr, reason)
            return Node(name, instr, "other", reason=reason)
        if op == "while":
            return self._while(instr, name, count, depth)
        if op == "call":
            body = (instr.called_computations.get("to_apply") or [None])[0]
            if body is None:
                self._skip(name, instr, "a call of no computation")
                return Node(name, instr, "other", reason="a call of no computation")
            self._skip(name, instr, f"a call (XLA inlines it): its kernels are rows {name}/...")
            inner = self.walk(body, name + "/", count, depth + 1)
            return Node(name, instr, "call", body=inner)
        if op == "conditional":
            return self._conditional(instr, name, count, depth)
        if op == "fusion" or op in LIBRARY_OPS:
            kernel = kernel_of(instr, self.module, name, count)
        else:
            # an unfused op: its one-op fusion is made when it is estimated (report.py), not
            # for each of the thousands of equal ops of a module before optimization
            kernel = Kernel(instr, "op", None, name, count)
        self.kernels.append(kernel)
        return Node(name, instr, "kernel", kernel=kernel)

    def _while(self, instr: Instruction, name: str, count: int, depth: int) -> Node:
        called = instr.called_computations
        body = (called.get("body") or [None])[0]
        condition = (called.get("condition") or [None])[0]
        if body is None or condition is None:
            self._skip(name, instr, "a while without its body or condition: not estimated")
            return Node(name, instr, "other", reason="no body or condition")
        trips = trip_count(instr, self.model)
        loop = Loop(name, trips, count, depth)
        self.loops.append(loop)
        n = loop.counted_trips
        if trips.value is None:
            what = f"trip count unknown ({trips.reason}): counted as one trip"
        else:
            what = f"{trips.value} trips ({trips.describe()})"
        self._skip(name, instr, f"a while loop, {what}; its kernels are rows {name}/...")
        inner = self.walk(body, name + "/", count * n, depth + 1)
        cond = self.walk(condition, name + "/condition/", count * (n + 1), depth + 1)
        return Node(name, instr, "loop", body=inner, condition=cond, loop=loop)

    def _conditional(self, instr: Instruction, name: str, count: int, depth: int) -> Node:
        called = instr.called_computations
        comps = list(called.get("branch_computations") or [])
        if not comps:
            comps = [*called.get("true_computation", []), *called.get("false_computation", [])]
        if not comps:
            self._skip(name, instr, "a conditional without branches: not estimated")
            return Node(name, instr, "other", reason="no branches")
        node = Node(name, instr, "conditional")
        for comp in comps:
            node.branch_names.append(comp.name)
            node.branches.append(self.walk(comp, f"{name}/{comp.name}/", count, depth + 1))
        self.conditionals.append(node)
        self._skip(
            name,
            instr,
            f"a conditional of {len(comps)} branches: the most expensive is counted, the others "
            "are rows with count 0",
        )
        return node


def walk_module(module: HloModule, model: str = "hloidx") -> Program:
    """The entry computation as a program (see the module's docstring)."""
    walker = _Walker(module, model)
    nodes = walker.walk(module.entry, "", 1, 0) if module.entry is not None else []
    return Program(
        module,
        nodes,
        walker.kernels,
        walker.skipped,
        walker.loops,
        walker.conditionals,
        walker.collectives,
    )


def subtree_kernels(nodes: list[Node]) -> list[Kernel]:
    """Every kernel under ``nodes`` (bodies, conditions and branches included)."""
    out: list[Kernel] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.kernel is not None:
            out.append(node.kernel)
        stack.extend(node.body)
        stack.extend(node.condition)
        for branch in node.branches:
            stack.extend(branch)
    return out


def subtree_collectives(nodes: list[Node]) -> list[Node]:
    out: list[Node] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.kind in ("collective", "start"):
            out.append(node)
        stack.extend(node.body)
        stack.extend(node.condition)
        for branch in node.branches:
            stack.extend(branch)
    return out
