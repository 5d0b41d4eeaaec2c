"""Evidence that two sets of maps agree: the same relation (enumerated when small, the verifier
otherwise), and the provenance oracle's confirmation before an expectation is written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import EnumerationLimitError, HloidxError
from ..maps.indexing_map import IndexingMap
from .expectation_file import (
    normalize_text,
)

#: largest domain enumerated to compare two maps; larger ones go to equivalence.verify
ENUMERATION_LIMIT = 200_000


#: most (output, operand) reads the oracle is asked to interpret for one instruction
ORACLE_READ_LIMIT = 1_000_000


def maps_equivalent(
    a: IndexingMap, b: IndexingMap, limit: int = ENUMERATION_LIMIT
) -> tuple[bool | None, str]:
    """Whether ``a`` and ``b`` denote the same relation: (answer or None if undecided, how).

    Small domains are enumerated with :func:`hloidx.maps.domain.relation` (runtime variables are
    part of the key, so maps are compared for every fixed choice of runtime values); larger
    ones are handed to :func:`hloidx.maps.equivalence.verify`.
    """
    if a == b:
        return True, "identical"
    if a.is_undefined or b.is_undefined:
        return a.is_undefined and b.is_undefined, "undefined"
    if (a.num_dims, a.num_results, a.num_rt_vars) != (b.num_dims, b.num_results, b.num_rt_vars):
        return False, "different numbers of dimensions, results or runtime variables"
    from ..maps.domain import relation

    try:
        same = relation(a, limit, with_runtime=True) == relation(b, limit, with_runtime=True)
        return same, "enumerated"
    except EnumerationLimitError:
        pass
    from ..maps.equivalence import verify

    verdict = verify(a, b)
    if verdict.kind in ("proved", "exhaustive"):
        return True, verdict.label
    if verdict.kind == "sampled":
        return True, verdict.label
    if verdict.is_refuted:
        return False, verdict.label
    return None, f"undecided ({verdict.detail or verdict.kind})"


@dataclass
class MapSetComparison:
    semantic_equal: bool
    textual_equal: bool
    #: expected maps with no equivalent actual map, and actual maps with no expected one
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def compare_map_sets(
    expected: Sequence[tuple[str, IndexingMap]], actual: Sequence[tuple[str, IndexingMap]]
) -> MapSetComparison:
    """Compare two sets of (printed text, map): as sets of relations, and as sets of texts."""
    textual = sorted(normalize_text(t) for t, _ in expected) == sorted(
        normalize_text(t) for t, _ in actual
    )
    left = list(expected)
    right = list(actual)
    notes: list[str] = []
    # Textually equal pairs first (cheap), then semantic matching for the rest.
    for item in list(left):
        for other in right:
            if normalize_text(item[0]) == normalize_text(other[0]):
                left.remove(item)
                right.remove(other)
                break
    for item in list(left):
        for other in right:
            same, how = maps_equivalent(item[1], other[1])
            if same:
                if how.startswith("sampled"):
                    notes.append(f"equal only on a sample ({how}): {item[0]}")
                left.remove(item)
                right.remove(other)
                break
    missing = [t for t, _ in left]
    unexpected = [t for t, _ in right]
    return MapSetComparison(not missing and not unexpected, textual, missing, unexpected, notes)


@dataclass
class OracleOutcome:
    """``agrees``, ``disagrees``, ``refused`` (too large, or an op it cannot interpret) or
    ``unavailable`` (no oracle in this build).

    ``method`` says which oracle answered: ``"whole"`` (the whole-tensor provenance oracle,
    every output element) or ``"sampled"`` (the point-wise oracle on ``points`` sampled output
    elements, for instructions too large for the whole one).
    """

    status: str
    details: list[str] = field(default_factory=list)
    method: str = "whole"
    points: int = 0

    @property
    def agrees(self) -> bool:
        return self.status == "agrees"

    @property
    def description(self) -> str:
        """Which oracle, in words: "the whole-tensor provenance oracle" or "the point-wise
        provenance oracle on N sampled output points"."""
        if self.method == "sampled":
            return f"the point-wise provenance oracle on {self.points} sampled output points"
        return "the whole-tensor provenance oracle"


#: output points the sampled check asks the point-wise oracle about, per output leaf
SAMPLED_POINTS = 64


def oracle_check(
    instruction: Any, analysed: Any = None, *, sampled_points: int = SAMPLED_POINTS
) -> OracleOutcome:
    """Ask the provenance oracle whether our maps for ``instruction`` are what it really reads.

    The single point where :mod:`hloidx.check.expectations` meets :mod:`hloidx.check.oracle`.
    Two checks:
    ``oracle.check_instruction(instr)`` compares the op rules' (or the composition's)
    output-to-input maps with the interpreted reads; then, when ``analysed`` (the
    :class:`~hloidx.hlo.analysis.InstructionAnalysis`) is given, the *simplified* maps that an
    expectation records are compared with the same reads directly — output-to-input, and
    input-to-output read backwards — for every operand whose maps have no runtime variables
    (maps with runtime variables rest on the first check plus the verified simplification).
    Equal when the operand is exact, a superset otherwise.

    An instruction too large for the whole-tensor oracle (more than ``ORACLE_READ_LIMIT``
    reads, or a tensor beyond its limit) is checked instead by the point-wise oracle on
    ``sampled_points`` output elements per output leaf (:mod:`hloidx.check.sampled_check`),
    when ``analysed`` is given; the outcome's ``method`` is then ``"sampled"``.
    """
    try:
        from . import oracle
    except ImportError:
        return OracleOutcome("unavailable", ["hloidx.check.oracle is not available in this build"])
    if analysed is not None:
        size = sum(m.box_size() for op in analysed.operands for m in op.output_to_input)
        if size > ORACLE_READ_LIMIT:
            # The whole oracle enumerates every read in Python: ~10 s per million.
            return _sampled(
                instruction,
                analysed,
                sampled_points,
                f"about {size} reads, more than {ORACLE_READ_LIMIT}",
            )
    try:
        try:
            evaluation = oracle.reads(instruction)
        except EnumerationLimitError as error:
            return _sampled(instruction, analysed, sampled_points, error.message)
        try:
            mismatches = list(oracle.check_maps(instruction, evaluation=evaluation))
        except HloidxError as error:
            return OracleOutcome("refused", [error.message])
        errors = [str(m) for m in mismatches if m.is_error]
        if errors:
            return OracleOutcome("disagrees", errors)
        notes = [str(m) for m in mismatches]
        if analysed is not None:
            problems = _direct_oracle_check(oracle, instruction, analysed, notes, evaluation)
            if problems:
                return OracleOutcome("disagrees", problems)
    except EnumerationLimitError as error:
        return _sampled(instruction, analysed, sampled_points, error.message)
    except HloidxError as error:
        return OracleOutcome("refused", [error.message])
    except Exception as error:
        return OracleOutcome("refused", [f"oracle failed: {type(error).__name__}: {error}"])
    if any(m.kind == "unchecked" for m in mismatches):
        return OracleOutcome("refused", notes)
    return OracleOutcome("agrees", notes)


def _sampled(instruction: Any, analysed: Any, points: int, too_large: str) -> OracleOutcome:
    """The sampled check, for an instruction too large for the whole-tensor oracle."""
    refusal = f"too large for the whole-tensor oracle: {too_large}"
    if analysed is None:
        return OracleOutcome("refused", [refusal])
    from .sampled_check import sampled_oracle_check

    try:
        outcome = sampled_oracle_check(instruction, analysed, points=points)
    except HloidxError as error:
        return OracleOutcome("refused", [refusal, f"the sampled check failed: {error.message}"])
    except Exception as error:
        return OracleOutcome(
            "refused", [refusal, f"the sampled check failed: {type(error).__name__}: {error}"]
        )
    if outcome.problems:
        return OracleOutcome("disagrees", outcome.problems, "sampled", outcome.points)
    if outcome.unchecked:
        return OracleOutcome(
            "refused",
            [
                refusal,
                f"the point-wise oracle could not confirm it ({outcome.checked_points} of "
                f"{outcome.points} sampled output points checked): "
                + "; ".join(outcome.unchecked[:3]),
            ],
            "sampled",
            outcome.points,
        )
    return OracleOutcome("agrees", [refusal], "sampled", outcome.points)


Pair = tuple[tuple[int, ...], tuple[int, ...]]


def _direct_oracle_check(
    oracle: Any, instruction: Any, analysed: Any, notes: list[str], evaluation: Any
) -> list[str]:
    """Compare the simplified maps of ``analysed`` with the oracle's reads (see oracle_check)."""
    from ..maps.domain import relation

    problems: list[str] = []
    for op in analysed.operands:
        if instruction.operands[op.index].shape.is_tuple:
            notes.append(f"operand {op.index}: tuple-shaped, left to check_instruction")
            continue
        truth: set[Pair] = set()
        for out_id in range(len(evaluation.outputs)):
            truth |= oracle.oracle_relation(instruction, op.index, out_id, evaluation=evaluation)
        for direction, maps in (
            ("output_to_input", op.output_to_input),
            ("input_to_output", op.input_to_output),
        ):
            if not maps or any(m.is_undefined or m.rt_vars for m in maps):
                notes.append(
                    f"operand {op.index} {direction}: not compared directly "
                    "(runtime variables or no map)"
                )
                continue
            claimed: set[Pair] = set()
            for m in maps:
                pairs = relation(m, 1_000_000)
                claimed |= pairs if direction == "output_to_input" else {(o, i) for i, o in pairs}
            missing, extra = truth - claimed, claimed - truth
            if missing:
                problems.append(
                    f"operand {op.index} {direction}: {len(missing)} read(s) the maps "
                    f"miss, e.g. {sorted(missing)[:3]}"
                )
            if extra and op.exact:
                problems.append(
                    f"operand {op.index} {direction}: exact maps claim {len(extra)} "
                    f"read(s) the op does not make, e.g. {sorted(extra)[:3]}"
                )
    return problems
