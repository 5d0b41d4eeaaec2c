"""``hloidx maps``: the maps of one module, or of many (files, directories, XLA dumps)."""

from __future__ import annotations

import json
import sys

import click

from .module_outcome import JsonStream, MapsOptions, analyse_text
from .options import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    console,
    global_options,
    jobs_option,
    language_option,
    names_option,
    read_text,
    report_error,
    stdout_is_terminal,
)

# What each stage takes from a directory, for --help and the README.
STAGE_HELP = (
    "In a directory (an XLA dump): `before` takes the `*before_optimizations.txt` module"
    " texts and StableHLO `*.mlir` (jax 0.12 also dumps `module_NNNN.<name>/module.mlir`),"
    " `after` the `*after_optimizations.txt` texts, `all` both; `*.hlo` files are taken at"
    " every stage."
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
    help=STAGE_HELP,
)
@language_option
@names_option
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
    names: str,
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
    `*before_optimizations.txt` and `*after_optimizations.txt` module texts, StableHLO
    `*.mlir` and any `*.hlo`; `--stage` says which stage each takes),
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
        names=names,
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


def _one_file(path: str, options: MapsOptions, from_: str | None, to: str | None) -> int:
    text, where = read_text(path, "HLO file")
    if from_ or to:
        if not (from_ and to):
            raise click.UsageError("--from and --to go together")
        return _chain(text, where, options, from_, to)
    stream = JsonStream()
    # plain strings for text written to a pipe; JSON and HTML never load Rich at all
    plain = options.fmt != "text" or not stdout_is_terminal()
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
    elif plain:  # a pipe or a file: the lines whole, no styles (and no Rich)
        if outcome.lines:
            sys.stdout.write("\n".join(outcome.lines) + "\n")
    else:
        from ..render.lines import LineBuffer

        buffer = LineBuffer()
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
        names=getattr(options, "names", "plain"),
    )
    if options.fmt == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        from ..render.lines import render_chain

        render_chain(console(), doc)
    return EXIT_BAD_INPUT if errors else EXIT_OK
