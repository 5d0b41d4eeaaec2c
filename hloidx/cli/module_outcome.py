"""One module's analysis as an :class:`Outcome` (document or text lines, errors, exit code):
what ``hloidx maps`` prints for one file, and what each worker of ``--jobs`` returns to
:mod:`.many_files`. Both commands' modules import it; it imports neither."""

from __future__ import annotations

import sys
from typing import Any

import click

from .options import EXIT_BAD_INPUT, EXIT_OK, EXIT_PROBLEMS, progress

__all__ = ["JsonStream", "MapsOptions", "Outcome", "analyse_text"]


class MapsOptions:
    """What `maps` was asked for, in one picklable object (the workers of --jobs get it)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    @property
    def filtered(self) -> bool:
        return bool(self.instructions or self.computations or self.opcodes or self.kind)


class JsonStream:
    """The JSON document of one file written piece by piece as its instructions are analysed,
    so that neither the document nor every analysis is held at once. Error lines go to stderr
    first, as when the document was written whole. The pieces (one per instruction) go out
    in chunks of about :data:`CHUNK` characters: a ``click.echo`` each, with its flush, was 5%
    of ``hloidx maps --format json`` on a large module."""

    CHUNK = 1 << 16

    def __init__(self) -> None:
        self.started = False
        self._pieces: list[str] = []
        self._size = 0

    def begin(self, error_lines: list[str]) -> None:
        for line in error_lines:
            click.echo(line, err=True)
        self.started = True

    def write(self, piece: str) -> None:
        self._pieces.append(piece)
        self._size += len(piece)
        if self._size >= self.CHUNK:
            self.flush()

    def flush(self) -> None:
        """What was written so far, out (also when the analysis stops on an error)."""
        if self._pieces:
            text = "".join(self._pieces)
            self._pieces, self._size = [], 0
            # JSON holds no escape sequence to strip (it escapes control characters): color
            # only spares ``click.echo`` a pass of its pattern over every chunk
            click.echo(text, nl=False, color=True)

    def end(self) -> None:
        self.flush()
        click.echo("")


class Outcome:
    """One module's result: JSON document or text lines, errors, exit code (picklable)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.doc: dict[str, Any] | None = None
        self.html = ""
        self.lines: list[Any] = []
        self.error_lines: list[str] = []
        self.usage_error: str | None = None
        self.exit_code = EXIT_OK
        self.refuted = False
        self.instructions = 0
        self.unknown_opcodes: list[str] = []
        self.seconds = 0.0

    @property
    def status(self) -> str:
        """One word for the files table of ``hloidx maps`` over many files."""
        if self.usage_error:
            return "no match"
        if self.exit_code == EXIT_BAD_INPUT:
            return "bad input"
        if self.refuted:
            return "refuted"
        return "ok"


def analyse_text(
    text: str,
    where: str,
    options: MapsOptions,
    progress_bar: bool = False,
    on_progress: Any = None,
    stream: JsonStream | None = None,
    plain: bool = False,
) -> Outcome:
    """Parse, analyse and render one module; never raises for bad input. With ``stream``, a
    JSON document (without --tree) is written through it instead of kept in ``outcome.doc``.
    With ``plain`` (output to a pipe or a file), text lines are kept as plain strings."""
    from .collector import relaxed_collector

    with relaxed_collector():
        return _analyse_text(text, where, options, progress_bar, on_progress, stream, plain)


def _analyse_text(
    text: str,
    where: str,
    options: MapsOptions,
    progress_bar: bool,
    on_progress: Any,
    stream: JsonStream | None,
    plain: bool = False,
) -> Outcome:
    import time

    from ..hlo.analysis import analyze
    from ..hlo.report import error_to_json, module_to_json
    from ..hlo.selection import SelectionError, select_instructions
    from ..stablehlo import parse_module_lenient
    from .collector import keep_parsed

    started = time.perf_counter()
    outcome = Outcome(where)
    module, errors = parse_module_lenient(text, where, options.language)
    keep_parsed()
    outcome.error_lines = [e.render() for e in errors]
    if module is None:
        outcome.exit_code = EXIT_BAD_INPUT
        outcome.doc = {
            "schema_version": 1,
            "module": None,
            "instructions": [],
            "errors": [error_to_json(e) for e in errors],
        }
        outcome.seconds = time.perf_counter() - started
        return outcome
    try:
        selected = select_instructions(
            module,
            instructions={n.lstrip("%") for n in options.instructions},
            computations=options.computations,
            opcodes=options.opcodes,
            kind=options.kind,
            # JSON is read by programs: every computation unless filtered
            all_computations=options.all_computations or options.fmt == "json",
        )
    except SelectionError as error:
        outcome.usage_error = f"{error.message} in {where}{error.hint}"
        outcome.exit_code = EXIT_BAD_INPUT
        return outcome
    if stream is not None and options.fmt == "json" and not options.tree:
        _stream_json(module, errors, selected, options, on_progress, stream, outcome)
        outcome.seconds = time.perf_counter() - started
        return outcome
    show = progress_bar and options.fmt == "text" and sys.stderr.isatty()
    update, stop = progress(show, "analysing")
    try:
        analysis = analyze(
            module,
            simplify=options.simplify,
            verify=options.verify,
            direction=options.direction,
            progress=update or on_progress,
            only=selected,
        )
    finally:
        stop()
    analysis.errors.extend(errors)
    if getattr(options, "names", "plain") == "roles":
        from ..hlo.role_names import name_module

        analysis = name_module(analysis)
    trees = None
    if options.tree:
        from ..hlo.chains import composition_trees

        trees = composition_trees(analysis, options.spelling, getattr(options, "names", "plain"))
    if options.fmt == "json":
        outcome.doc = module_to_json(analysis, options.spelling)
        if trees is not None:
            outcome.doc["composition_trees"] = trees
    elif options.fmt == "html":
        from ..hlo.summary import summarize
        from ..pictures.html import report
        from ..render.summary import add_estimates, loop_trip_count

        summary = summarize(analysis, trip_counts=loop_trip_count)
        add_estimates(summary, module, "rtx-a6000", "reads")
        outcome.html = report(analysis, summary, options.spelling)
    else:
        from ..render.lines import maps_text_lines

        outcome.lines = maps_text_lines(
            analysis, options.spelling, options.hide_trivial, options.filtered, trees, plain
        )
    for _ in _tallied(analysis.instructions, outcome, errors):
        pass
    outcome.seconds = time.perf_counter() - started
    return outcome


def _stream_json(
    module: Any,
    errors: list[Any],
    selected: Any,
    options: MapsOptions,
    on_progress: Any,
    stream: JsonStream,
    outcome: Outcome,
) -> None:
    """The JSON document written as it is analysed; ``outcome`` gets the same counts and
    verdicts as when the document is built whole."""
    from ..hlo.analysis import analyze_each
    from ..hlo.report import module_json_text

    analyses = analyze_each(
        module,
        simplify=options.simplify,
        verify=options.verify,
        direction=options.direction,
        progress=on_progress,
        only=selected,
    )
    if getattr(options, "names", "plain") == "roles":
        from ..hlo.role_names import name_each

        analyses = name_each(analyses)
    stream.begin(outcome.error_lines)
    try:
        for piece in module_json_text(
            module.name,
            options.direction,
            _tallied(analyses, outcome, errors),
            errors,
            options.spelling,
        ):
            stream.write(piece)
    finally:
        stream.flush()
    stream.end()


def _tallied(analyses: Any, outcome: Outcome, errors: list[Any]) -> Any:
    """``analyses``, passed through while ``outcome`` counts them: instructions, opcodes without
    a rule, a refuted simplification; the exit code once the last one has gone by."""
    unknown: set[str] = set()
    for ins in analyses:
        outcome.instructions += 1
        if any(n.startswith("unknown indexing") for n in ins.notes):
            unknown.add(ins.opcode)
        if ins.has_refuted:
            outcome.refuted = True
        yield ins
    outcome.unknown_opcodes = sorted(unknown)
    outcome.exit_code = EXIT_BAD_INPUT if errors else EXIT_PROBLEMS if outcome.refuted else EXIT_OK
