"""Which computations of a module run, where they live and how often: the entry, loop bodies
and conditions (weighted by their trip counts), conditional branches and called computations.

Fused computations and the scalar computations an op applies (a reduce's ``to_apply``) are
not here: their instructions run inside the instruction that names them, which is the one a
memory-traffic table counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .ir import Computation, HloModule, Instruction

#: a while loop's trip count (None: unknown); hloidx.perf.trip_count gives XLA's
TripCounts = Callable[[Instruction], int | None]

#: called-computation attributes whose computations run on their own (not inside the op)
_RUN_ON_THEIR_OWN = {
    "while": ("body", "condition"),
    "conditional": ("branch_computations", "true_computation", "false_computation"),
    "call": ("to_apply",),
    "async-start": ("calls",),
}


@dataclass(frozen=True)
class Place:
    """Where a running computation lives and how many times it runs per run of the entry."""

    computation: Computation
    where: str  # "entry", "body of while.6", "branch 1 of conditional.3", "called by call.2"
    runs: int | None  # None: a loop on the way has an unknown trip count
    at_most: bool = False  # a conditional's branch on the way: it runs only when chosen
    places: int = 1  # how many call sites reach it (its runs are added up)

    @property
    def runs_text(self) -> str:
        """``x10``, ``<=x10`` (behind a branch), ``x?`` (a trip count unknown)."""
        if self.runs is None:
            return "x?"
        return f"{'<=' if self.at_most else ''}x{self.runs:,}"

    def describe(self) -> str:
        more = f" (and {self.places - 1} more call sites)" if self.places > 1 else ""
        return f"{self.where}{more}"


def running_computations(
    module: HloModule, trip_counts: TripCounts | None = None
) -> dict[int, Place]:
    """Every computation that runs, by ``id``, with its place; the entry runs once. Without
    ``trip_counts`` a loop's trip count is unknown."""
    entry = module.entry
    if entry is None:
        return {}
    places: dict[int, Place] = {}

    def visit(comp: Computation, place: Place, on_stack: frozenset[int]) -> None:
        seen = places.get(id(comp))
        if seen is None:
            places[id(comp)] = place
        else:
            runs = None if seen.runs is None or place.runs is None else seen.runs + place.runs
            places[id(comp)] = Place(
                comp, seen.where, runs, seen.at_most or place.at_most, seen.places + 1
            )
        for instr in comp.instructions:
            keys = _RUN_ON_THEIR_OWN.get(instr.opcode)
            if not keys:
                continue
            called = instr.called_computations
            trip = trip_counts(instr) if trip_counts and instr.opcode == "while" else None
            for key in keys:
                for k, child in enumerate(called.get(key, [])):
                    if id(child) in on_stack:
                        continue  # a malformed cycle: never followed
                    runs, where = _child_runs(instr, key, k, place.runs, trip)
                    visit(
                        child,
                        Place(child, where, runs, place.at_most or instr.opcode == "conditional"),
                        on_stack | {id(child)},
                    )

    visit(entry, Place(entry, "entry", 1), frozenset({id(entry)}))
    return places


def _child_runs(
    instr: Instruction, key: str, k: int, runs: int | None, trip: int | None
) -> tuple[int | None, str]:
    if instr.opcode == "while":
        if key == "body":
            count = None if trip is None or runs is None else runs * trip
            return count, f"body of {instr.name}"
        # the condition is evaluated once more than the body runs
        count = None if trip is None or runs is None else runs * (trip + 1)
        return count, f"condition of {instr.name}"
    if instr.opcode == "conditional":
        branch = {"true_computation": "true branch", "false_computation": "false branch"}
        return runs, f"{branch.get(key, f'branch {k}')} of {instr.name}"
    return runs, f"called by {instr.name}"
