"""Expected indexing maps beside HLO files, and checking the analysis against them.

An *expectation file* ``NAME.expected`` sits next to ``NAME.hlo`` and lists, for some
instructions of the module, every output-to-input and input-to-output map of every operand,
in XLA's ``operand id = N`` style::

    // Free comments start with //; the ones before the first record are kept on --update.
    instruction probs in main
      output_to_input operand id = 0: (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 64]
      input_to_output operand id = 0: (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 64]

Each map is one line in XLA's text format (``UNDEFINED`` when the op has no rule). An operand
may have several maps (a fusion reading a parameter twice): the maps of one (instruction,
direction, operand) are a *set*. Records are sorted when written and compared as sets, so the
file is stable when instructions or maps are reordered.

:func:`check_file` compares a file's maps with its expectation twice: *semantically* (the same
relation: enumerated when the domain is small, :func:`hloidx.maps.equivalence.verify` otherwise) and
*textually* (the same printed form). A semantic difference is a failure; a textual one
(``floordiv`` printed as ``/``, summands in another order) is only a note. Every simplification
the analysis made is verified; a refuted one is a failure. A file without an expectation passes
when every instruction analyses without error (ops with no rule are listed, not failures).

Expectations are written (:func:`update_file`) only after the independent oracle
(:mod:`hloidx.check.oracle`, a provenance interpreter that shares no code with the map rules) agrees
with the maps; otherwise the update is refused with the reason. Nothing here imports Click or
Rich: results are plain dataclasses that pickle across a process pool.
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HloidxError
from ..hlo.binary_hlo import hlo_text_from_bytes
from ..hlo.module_files import find_module_files
from ..hlo.report import error_to_json
from ..maps.indexing_map import IndexingMap
from ..maps.printer import format_map
from ..source import Source
from .confirmation import confirmation, oracle_record, sampled_names, wrap_comment
from .evidence import (
    MapSetComparison,
    OracleOutcome,
    compare_map_sets,
    maps_equivalent,
    oracle_check,
)
from .expectation_file import (
    DIRECTIONS,
    EXPECTATION_SUFFIX,
    FORMAT_VERSION,
    UNDEFINED_TEXT,
    Expectation,
    ExpectationSyntaxError,
    ExpectedMap,
    expectation_path,
    format_expectation,
    parse_expectation,
)

# ---------------------------------------------------------------------------
# The expectation file
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Comparing maps
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The oracle (adapter)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Checking one file
# ---------------------------------------------------------------------------


@dataclass
class Mismatch:
    instruction: str
    direction: str
    operand: int
    expected: list[str]
    actual: list[str]
    diff: str

    def to_json(self) -> dict[str, Any]:
        return {
            "instruction": self.instruction,
            "direction": self.direction,
            "operand": self.operand,
            "expected": self.expected,
            "actual": self.actual,
            "diff": self.diff,
        }


@dataclass
class FileResult:
    """Everything ``hloidx check`` learned about one HLO file (plain data, picklable)."""

    path: str
    expectation: str | None = None
    status: str = "ok"
    instructions: int = 0
    maps_compared: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    textual: list[str] = field(default_factory=list)
    refuted: list[str] = field(default_factory=list)
    analysis_errors: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    #: located input errors, rendered (``file:line:col: error: ...`` + excerpt) and as JSON
    errors: list[str] = field(default_factory=list)
    error_locations: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: on --update: which oracle confirmed (or did not confirm) each covered instruction
    oracle: list[dict[str, Any]] = field(default_factory=list)
    updated: bool = False
    update_refused: str | None = None
    seconds: float = 0.0

    @property
    def is_bad_input(self) -> bool:
        return bool(self.errors)

    @property
    def has_problems(self) -> bool:
        return bool(self.mismatches or self.refuted or self.analysis_errors or self.update_refused)

    def finish(self) -> FileResult:
        if self.is_bad_input:
            self.status = "bad input"
        elif self.update_refused:
            self.status = "update refused"
        elif self.mismatches:
            self.status = "mismatch"
        elif self.refuted:
            self.status = "refuted"
        elif self.analysis_errors:
            self.status = "analysis error"
        elif self.updated:
            self.status = "updated"
        elif self.textual:
            self.status = "ok (textual differences)"
        elif self.expectation is None:
            self.status = "ok (no expectation)"
        else:
            self.status = "ok"
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "expectation": self.expectation,
            "status": self.status,
            "instructions": self.instructions,
            "maps_compared": self.maps_compared,
            "mismatches": [m.to_json() for m in self.mismatches],
            "textual_differences": list(self.textual),
            "refuted": list(self.refuted),
            "analysis_errors": list(self.analysis_errors),
            "unsupported": list(self.unsupported),
            "errors": list(self.error_locations),
            "notes": list(self.notes),
            "oracle": [dict(o) for o in self.oracle],
            "updated": self.updated,
            "update_refused": self.update_refused,
            "seconds": round(self.seconds, 3),
        }


def _add_error(result: FileResult, error: HloidxError) -> None:
    result.errors.append(error.render())
    result.error_locations.append(error_to_json(error))


def _is_failure_note(note: str) -> bool:
    body = note.split(": ", 1)[1] if note.startswith("operand ") and ": " in note else note
    return body.startswith(("error:", "internal error"))


def _read(path: str) -> str:
    with open(path, "rb") as handle:
        data = handle.read()
    # XLA's binary HLO (a dump's *.hlo.pb) as its text; BinaryHloError is an HloidxError
    text = hlo_text_from_bytes(data, path)
    return data.decode("utf-8", errors="replace") if text is None else text


def _analysis_maps(ins: Any) -> dict[tuple[str, int], list[tuple[str, IndexingMap]]]:
    """The maps of an analysed instruction by (direction, operand), with their printed form."""
    out: dict[tuple[str, int], list[tuple[str, IndexingMap]]] = {}
    for op in ins.operands:
        for direction, maps in (
            ("output_to_input", op.output_to_input),
            ("input_to_output", op.input_to_output),
        ):
            # No map at all means no rule (or a failed one): recorded as XLA's UNDEFINED.
            out[(direction, op.index)] = (
                [(format_map(m), m) for m in maps]
                if maps
                else [(UNDEFINED_TEXT, IndexingMap.undefined())]
            )
    return out


def _lookup(module: Any, name: str, computation: str | None) -> Any:
    """The instruction called ``name`` (in ``computation`` when given), or None / 'ambiguous'."""
    found = []
    for comp in module.computations.values():
        if computation is not None and comp.name != computation:
            continue
        for instr in comp.instructions:
            if instr.name == name:
                found.append(instr)
    if len(found) > 1:
        return "ambiguous"
    return found[0] if found else None


def default_instructions(module: Any) -> list[tuple[str, str | None]]:
    """What a new expectation covers: every ENTRY instruction that has operands."""
    entry = module.entry or (
        list(module.computations.values())[-1] if module.computations else None
    )
    if entry is None:
        return []
    names = [i.name for i in module.instructions()]
    out = []
    for instr in entry.instructions:
        if instr.operands:
            out.append((instr.name, entry.name if names.count(instr.name) > 1 else None))
    return out


@dataclass
class _Analysed:
    module: Any
    analysis: Any
    by_instruction: dict[int, Any]


def _analyse(path: str, result: FileResult) -> _Analysed | None:
    from ..hlo.analysis import analyze
    from ..stablehlo import parse_module_lenient

    text = _read(path)
    module, errors = parse_module_lenient(text, path)
    for error in errors:
        _add_error(result, error)
    if module is None:
        return None
    analysis = analyze(module)
    result.instructions = len(analysis.instructions)
    by_instruction = {id(ins.instruction): ins for ins in analysis.instructions}
    for ins in analysis.instructions:
        where = f"{ins.name} ({ins.opcode})"
        for op in ins.operands:
            for verdict in op.verdicts:
                if getattr(verdict, "is_refuted", False):
                    detail = getattr(verdict, "detail", "") or getattr(
                        verdict, "counterexample", ""
                    )
                    result.refuted.append(f"{where} operand {op.index}: refuted {detail}".rstrip())
        for note in ins.notes:
            if _is_failure_note(note):
                result.analysis_errors.append(f"{where}: {note}")
            else:
                result.unsupported.append(f"{ins.name} ({ins.opcode}): {note}")
    return _Analysed(module, analysis, by_instruction)


def _section(maps: Sequence[str], direction: str, operand: int) -> list[str]:
    return [f"{direction} operand id = {operand}: {t}" for t in sorted(maps)]


def _compare(result: FileResult, analysed: _Analysed, expectation: Expectation) -> None:
    by_key: dict[tuple[str, str | None], list[ExpectedMap]] = {
        k: [] for k in expectation.instructions
    }
    for m in expectation.maps:
        by_key[(m.instruction, m.computation)].append(m)
    for key, records in by_key.items():
        name, comp = key
        instr = _lookup(analysed.module, name, comp)
        if instr is None or instr == "ambiguous":
            why = "no instruction" if instr is None else "more than one instruction"
            line = expectation.lines.get(key, 1)
            source = expectation.source or Source(expectation.path, "")
            start = sum(len(x) + 1 for x in source.text.split("\n")[: line - 1])
            hint = "" if instr is None else " (add 'in COMPUTATION')"
            _add_error(
                result,
                ExpectationSyntaxError(
                    f"{why} named {name}"
                    + (f" in {comp}" if comp else "")
                    + f" in {result.path}{hint}",
                    source.span(start, start + len(name)),
                ),
            )
            continue
        ins = analysed.by_instruction.get(id(instr))
        if ins is None:
            continue
        actual = _analysis_maps(ins)
        expected: dict[tuple[str, int], list[tuple[str, IndexingMap]]] = {}
        for m in records:
            expected.setdefault((m.direction, m.operand), []).append((m.text, m.map))
        for slot in sorted(
            set(actual) | set(expected), key=lambda s: (DIRECTIONS.index(s[0]), s[1])
        ):
            exp, act = expected.get(slot, []), actual.get(slot, [])
            result.maps_compared += len(exp)
            comparison = compare_map_sets(exp, act)
            direction, operand = slot
            result.notes.extend(
                f"{name} {direction} operand {operand}: {n}" for n in comparison.notes
            )
            if not comparison.semantic_equal:
                exp_lines = _section([t for t, _ in exp], direction, operand)
                act_lines = _section([t for t, _ in act], direction, operand)
                diff = "\n".join(
                    difflib.unified_diff(
                        exp_lines,
                        act_lines,
                        fromfile=f"{expectation.path} ({name})",
                        tofile=f"computed ({name})",
                        lineterm="",
                    )
                )
                result.mismatches.append(
                    Mismatch(
                        name, direction, operand, [t for t, _ in exp], [t for t, _ in act], diff
                    )
                )
            elif not comparison.textual_equal:
                result.textual.append(
                    f"{name} {direction} operand {operand}: same maps, printed differently: "
                    f"expected {sorted(t for t, _ in exp)}, computed {sorted(t for t, _ in act)}"
                )


def check_file(path: str, update: bool = False, create: bool = False) -> FileResult:
    """Check one HLO file against its expectation (if any); with ``update``, rewrite it.

    ``create`` allows ``update`` to write an expectation that does not exist yet. Never
    raises for bad input: every problem ends up in the returned :class:`FileResult`.
    """
    started = time.perf_counter()
    result = FileResult(path)
    try:
        _check_file(path, update, create, result)
    except HloidxError as error:
        _add_error(result, error)
    except OSError as error:
        result.errors.append(f"{path}: error: cannot read: {error.strerror}")
        result.error_locations.append(
            {"message": f"cannot read: {error.strerror}", "location": path}
        )
    except RecursionError:
        result.errors.append(f"{path}: error: input nested too deeply to process")
        result.error_locations.append({"message": "input nested too deeply", "location": path})
    result.seconds = time.perf_counter() - started
    return result.finish()


def _check_file(path: str, update: bool, create: bool, result: FileResult) -> None:
    exp_path = expectation_path(path)
    expectation: Expectation | None = None
    if exp_path.exists():
        result.expectation = str(exp_path)
        expectation = parse_expectation(_read(str(exp_path)), str(exp_path))
    analysed = _analyse(path, result)
    if analysed is None or result.errors:
        return
    if expectation is not None:
        _compare(result, analysed, expectation)
    if update and (expectation is not None or create):
        update_file(path, analysed, expectation, result)


def _oracle_gate(
    analysed: _Analysed, keys: Sequence[tuple[str, str | None]]
) -> tuple[str | None, dict[str, OracleOutcome]]:
    """(None when the oracle agrees with every covered instruction, else why not; the outcome
    of every instruction it was asked about, by name)."""
    reasons = []
    outcomes: dict[str, OracleOutcome] = {}
    for name, comp in keys:
        instr = _lookup(analysed.module, name, comp)
        if instr is None or instr == "ambiguous":
            reasons.append(f"{name}: not found in the module")
            continue
        outcome = oracle_check(instr, analysed.by_instruction.get(id(instr)))
        outcomes[name] = outcome
        if not outcome.agrees:
            reasons.append(
                f"{name}: oracle {outcome.status} ({outcome.description}): "
                + "; ".join(outcome.details[:3])
            )
    return ("; ".join(reasons) if reasons else None), outcomes


def records_for(analysed: _Analysed, keys: Sequence[tuple[str, str | None]]) -> list[ExpectedMap]:
    out: list[ExpectedMap] = []
    for name, comp in keys:
        instr = _lookup(analysed.module, name, comp)
        ins = analysed.by_instruction.get(id(instr))
        if ins is None:
            continue
        for (direction, operand), maps in _analysis_maps(ins).items():
            out.extend(ExpectedMap(name, comp, direction, operand, t, m) for t, m in maps)
    return out


def update_file(
    path: str, analysed: _Analysed, expectation: Expectation | None, result: FileResult
) -> None:
    """Rewrite ``path``'s expectation from the computed maps, if the oracle agrees with them.

    The whole-tensor oracle checks every output element; an instruction too large for it is
    checked by the point-wise oracle on sampled output elements, and the note (and a new
    file's header) says so. Only when neither can confirm, an expectation whose every map was
    just shown equal in meaning to the committed one is rewritten in the current printed form.
    """
    if result.refuted:
        result.update_refused = "a simplification was refuted; fix hloidx before updating"
        return
    keys = (
        expectation.instructions
        if expectation is not None
        else default_instructions(analysed.module)
    )
    reason, outcomes = _oracle_gate(analysed, keys)
    result.oracle = [oracle_record(name, outcome) for name, outcome in outcomes.items()]
    if reason is not None:
        if expectation is None or result.mismatches or result.errors:
            result.update_refused = f"the oracle does not confirm the maps: {reason}"
            return
        # The oracle cannot confirm (a module too large to enumerate), but every computed map
        # was just shown equal in meaning to a committed one, slot by slot: only the printed
        # form changes, and what was confirmed when it was committed still holds.
        result.notes.append(
            "rewritten in the current printed form without the oracle (it could not confirm: "
            f"{reason[:160]}); every map is equal in meaning to the committed one"
        )
    else:
        for name in sampled_names(outcomes):
            result.notes.append(
                f"{name}: confirmed by {outcomes[name].description} (too large for the "
                "whole-tensor oracle)"
            )
    comments = (
        expectation.comments
        if expectation is not None
        else [
            f"// Expected indexing maps of {Path(path).name} "
            f"(hloidx expectation format {FORMAT_VERSION}).",
            *wrap_comment(f"Written by `hloidx check --update` after {confirmation(outcomes)}."),
        ]
    )
    text = format_expectation(comments, keys, records_for(analysed, keys))
    target = expectation_path(path)
    old = target.read_text() if target.exists() else None
    if old != text:
        target.write_text(text)
        result.updated = True
        result.expectation = str(target)
    result.mismatches.clear()
    result.textual.clear()


# ---------------------------------------------------------------------------
# Many files
# ---------------------------------------------------------------------------


def collect_files(
    paths: Sequence[str], stage: str = "all"
) -> tuple[list[tuple[str, bool]], list[str]]:
    """``(file, named explicitly)`` for every argument (directories: every ``*.hlo`` and XLA
    dump module text below them, sorted), and the arguments that do not exist."""
    return find_module_files([p for p in paths if p != "-"], stage) if paths else ([], [])


def _worker(item: tuple[str, bool, bool]) -> FileResult:
    path, update, explicit = item
    return check_file(path, update=update, create=explicit)


def run_check(
    files: Sequence[tuple[str, bool]],
    *,
    update: bool = False,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    """Check every file (in a process pool when ``jobs > 1``); results in input order."""
    items = [(path, update, explicit) for path, explicit in files]
    results: list[FileResult | None] = [None] * len(items)
    if jobs <= 1 or len(items) <= 1:
        for n, item in enumerate(items):
            results[n] = _worker(item)
            if progress is not None:
                progress(n + 1, len(items))
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        # Biggest files first, so one large module does not start last and finish alone.
        order = sorted(range(len(items)), key=lambda i: -_size(items[i][0]))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_worker, items[i]): i for i in order}
            for done, future in enumerate(as_completed(futures), 1):
                results[futures[future]] = future.result()
                if progress is not None:
                    progress(done, len(items))
    return [r for r in results if r is not None]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def summary(results: Sequence[FileResult]) -> dict[str, int]:
    return {
        "files": len(results),
        "with_expectation": sum(r.expectation is not None for r in results),
        "ok": sum(not r.has_problems and not r.is_bad_input for r in results),
        "problems": sum(r.has_problems and not r.is_bad_input for r in results),
        "bad_input": sum(r.is_bad_input for r in results),
        "maps_compared": sum(r.maps_compared for r in results),
        "updated": sum(r.updated for r in results),
    }


def exit_code(results: Sequence[FileResult]) -> int:
    """2 when some input was bad, else 1 when a check found problems, else 0."""
    if any(r.is_bad_input for r in results):
        return 2
    if any(r.has_problems for r in results):
        return 1
    return 0


def report(results: Sequence[FileResult]) -> dict[str, Any]:
    """The ``--format json`` document."""
    return {
        "schema_version": 1,
        "files": [r.to_json() for r in results],
        "summary": summary(results),
        "exit_code": exit_code(results),
    }


__all__ = [
    "EXPECTATION_SUFFIX",
    "Expectation",
    "ExpectationSyntaxError",
    "ExpectedMap",
    "FileResult",
    "MapSetComparison",
    "OracleOutcome",
    "check_file",
    "collect_files",
    "compare_map_sets",
    "expectation_path",
    "format_expectation",
    "maps_equivalent",
    "oracle_check",
    "parse_expectation",
    "report",
    "run_check",
]
