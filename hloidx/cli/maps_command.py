"""``hloidx maps``: the maps of one module, or of many (files, directories, XLA dumps)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .options import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    EXIT_PROBLEMS,
    console,
    global_options,
    jobs_option,
    language_option,
    progress,
    read_text,
    report_error,
)


@click.command()
@click.argument("files", metavar="FILE...", nargs=-1, required=True)
@click.option(
    "--instruction",
    "instructions",
    multiple=True,
    metavar="NAME",
    help="Only this instruction (repeatable; a glob such as 'fusion.*'; % optional).",
)
@click.option(
    "--computation",
    "computations",
    multiple=True,
    metavar="NAME",
    help="Only instructions of this computation (repeatable; a glob; % optional).",
)
@click.option(
    "--opcode", "opcodes", multiple=True, metavar="OP", help="Only this opcode (repeatable)."
)
@click.option(
    "--kind",
    type=click.Choice(["fusion", "entry"]),
    help="Only fusions (in any computation), or only the entry computation.",
)
@click.option(
    "--all-computations",
    is_flag=True,
    help="Also fused computations, reducers and bodies (text shows the entry computation "
    "unless this is given or a computation is named; JSON has every computation).",
)
@click.option("--hide-trivial", is_flag=True, help="Leave out operands read by an identity map.")
@click.option(
    "--direction",
    type=click.Choice(["o2i", "i2o", "both"]),
    default="both",
    show_default=True,
    help="Output-to-input, input-to-output, or both (utilization is shown with each).",
)
@click.option("--no-verify", is_flag=True, help="Do not check simplifications (faster).")
@click.option("--no-simplify", is_flag=True, help="Print the maps as the rules build them.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "html"]),
    default="text",
    show_default=True,
    help="html: one self-contained page (summary table, maps, a picture of each operand).",
)
@click.option(
    "--floordiv-spelling",
    type=click.Choice(["floordiv", "/"]),
    default="floordiv",
    show_default=True,
)
@click.option("--from", "from_", metavar="A", help="Compose maps from instruction A ...")
@click.option(
    "--to",
    "to",
    metavar="B",
    help="... to instruction B (an operand chain inside one computation; one path is shown "
    "per distinct map).",
)
@click.option(
    "--tree",
    is_flag=True,
    help="Show how fusion maps were composed, op by op (in JSON: `composition_trees`).",
)
@click.option(
    "--stage",
    type=click.Choice(["before", "after", "all"]),
    default="all",
    show_default=True,
    help="In an XLA dump directory: the modules before optimization, after, or both.",
)
@language_option
@jobs_option("Analyse many files")
@global_options
def maps(
    files: tuple[str, ...],
    instructions: tuple[str, ...],
    computations: tuple[str, ...],
    opcodes: tuple[str, ...],
    kind: str | None,
    all_computations: bool,
    hide_trivial: bool,
    direction: str,
    no_verify: bool,
    no_simplify: bool,
    fmt: str,
    floordiv_spelling: str,
    from_: str | None,
    to: str | None,
    tree: bool,
    stage: str,
    language: str,
    jobs: int,
) -> None:
    """Indexing maps of every instruction of an HLO module, for every operand.

    FILE is HLO text (`-` for stdin): a module XLA dumped,
    `jax.jit(f).lower(...).as_text(dialect="hlo")` output, an optimized module with fusions, or
    a hand-written snippet; or StableHLO, the MLIR text `jax.jit(f).lower(...).as_text()`
    prints (read through the HLO it lowers to, with the same maps). For each operand it shows
    the output-to-input and input-to-output maps (simplified, each simplification verified),
    whether they are exact, the runtime variables, and the operand's utilization: `distinct`
    (fraction of its elements read at least once) and `reads` (reads per element).

    Several files, or a directory (an `--xla_dump_to` directory: its
    `*before_optimizations.txt` and `*after_optimizations.txt` module texts, and any `*.hlo`),
    are analysed one by one (`--jobs N` in parallel) and reported per file, with a table of
    all files at the end; in JSON, one document with a `files` list.

    Instructions whose opcode has no rule say `unknown indexing`. A syntax error is reported
    with file:line:col (exit code 2) and every instruction that could be parsed is still
    analysed. Exit code 1 means a simplification was refuted (a bug in hloidx).

    \b
    Examples:
      hloidx maps samples/seed000/reshape_expand.hlo
      hloidx maps samples/corpus/cnn_pool_batchnorm.opt.hlo --kind fusion --hide-trivial
      hloidx maps samples/corpus/cnn_pool_batchnorm.opt.hlo --format json -o maps.json
      hloidx maps samples/xla_dump --stage after --jobs 2
      hloidx maps samples/stablehlo/softmax.mlir
      hloidx maps samples/corpus/cnn_pool_batchnorm.opt.hlo --format html -o report.html
    """
    from ..hlo.module_files import find_module_files

    options = MapsOptions(
        instructions=instructions,
        computations=computations,
        opcodes=opcodes,
        kind=kind,
        all_computations=all_computations,
        hide_trivial=hide_trivial,
        direction=direction,
        verify=not no_verify,
        simplify=not no_simplify,
        fmt=fmt,
        spelling=floordiv_spelling,
        tree=tree,
        language=language,
    )
    found, missing = find_module_files(files, stage)
    if missing:
        raise click.UsageError(f"no such file or directory: {', '.join(missing)}")
    single = len(files) == 1 and len(found) == 1 and found[0][1]
    if (from_ or to) and not single:
        raise click.UsageError("--from and --to take one file")
    if single:
        sys.exit(_one_file(found[0][0], options, from_, to))
    if fmt == "html" and not single:
        raise click.UsageError("--format html takes one file")
    if not found:
        raise click.UsageError(
            f"no module files under {', '.join(files)} (looked for *.hlo, "
            "*before_optimizations.txt and *after_optimizations.txt)"
        )
    from .many_files import run_many

    sys.exit(run_many([f for f, _ in found], options, jobs))


class MapsOptions:
    """What `maps` was asked for, in one picklable object (the workers of --jobs get it)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    @property
    def filtered(self) -> bool:
        return bool(self.instructions or self.computations or self.opcodes or self.kind)


def _one_file(path: str, options: MapsOptions, from_: str | None, to: str | None) -> int:
    text, where = read_text(path, "HLO file")
    if from_ or to:
        if not (from_ and to):
            raise click.UsageError("--from and --to go together")
        return _chain(text, where, options, from_, to)
    stream = JsonStream()
    plain = not console().is_terminal
    outcome = analyse_text(text, where, options, progress_bar=True, stream=stream, plain=plain)
    if not stream.started:
        for line in outcome.error_lines:
            click.echo(line, err=True)
    if outcome.usage_error is not None:
        raise click.UsageError(outcome.usage_error)
    if stream.started:
        pass  # written as it was analysed
    elif options.fmt == "json":
        click.echo(json.dumps(outcome.doc))
    elif options.fmt == "html":
        click.echo(outcome.html)
    else:
        from .render import LineBuffer, PlainLineBuffer

        buffer = PlainLineBuffer() if plain else LineBuffer()
        buffer.lines = outcome.lines
        buffer.write_to(console())
    if outcome.refuted:
        click.echo(
            "error: a simplification was refuted (a bug in hloidx); see the verdicts above",
            err=True,
        )
    return outcome.exit_code


def _chain(text: str, where: str, options: MapsOptions, from_: str, to: str) -> int:
    from ..hlo.chains import chain_report
    from ..stablehlo import parse_module_lenient

    module, errors = parse_module_lenient(text, where, options.language)
    for error in errors:
        report_error(error)
    if module is None:
        return EXIT_BAD_INPUT
    doc = chain_report(
        module,
        from_.lstrip("%"),
        to.lstrip("%"),
        simplify=options.simplify,
        verify=options.verify,
        spelling=options.spelling,
    )
    if options.fmt == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        from .render import render_chain

        render_chain(console(), doc)
    return EXIT_BAD_INPUT if errors else EXIT_OK


class JsonStream:
    """The JSON document of one file written piece by piece as its instructions are analysed,
    so that neither the document nor every analysis is held at once. Error lines go to stderr
    first, as when the document was written whole."""

    def __init__(self) -> None:
        self.started = False

    def begin(self, error_lines: list[str]) -> None:
        for line in error_lines:
            click.echo(line, err=True)
        self.started = True

    def write(self, piece: str) -> None:
        click.echo(piece, nl=False)

    def end(self) -> None:
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

    started = time.perf_counter()
    outcome = Outcome(where)
    module, errors = parse_module_lenient(text, where, options.language)
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
    trees = None
    if options.tree:
        from ..hlo.chains import composition_trees

        trees = composition_trees(analysis, options.spelling)
    if options.fmt == "json":
        outcome.doc = module_to_json(analysis, options.spelling)
        if trees is not None:
            outcome.doc["composition_trees"] = trees
    elif options.fmt == "html":
        from ..hlo.summary import summarize
        from ..pictures.html import report
        from .summary_command import add_estimates

        summary = summarize(analysis)
        add_estimates(summary, module, "rtx-a6000", "reads")
        outcome.html = report(analysis, summary, options.spelling)
    else:
        outcome.lines = _text_lines(analysis, options, trees, plain)
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
    stream.begin(outcome.error_lines)
    for piece in module_json_text(
        module.name,
        options.direction,
        _tallied(analyses, outcome, errors),
        errors,
        options.spelling,
    ):
        stream.write(piece)
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


def _text_lines(analysis: Any, options: MapsOptions, trees: Any, plain: bool = False) -> list[Any]:
    from .render import Line, LineBuffer, PlainLineBuffer, module_lines, tree_lines

    buffer = PlainLineBuffer() if plain else LineBuffer()
    module_lines(buffer, analysis, options.spelling, hide_trivial=options.hide_trivial)
    if not options.filtered:
        from ..hlo.summary import summarize
        from .summary_command import summary_lines

        # the triage table last, where a long scroll ends (`hloidx summary` alone)
        buffer.print(Line())
        for text in summary_lines(summarize(analysis), 20):
            buffer.print(Line(text))
    if trees is not None:
        tree_lines(buffer, trees)
    return buffer.lines
