"""The ``hloidx`` command line: parse options, call the library, render, return an exit code.

Exit codes (one place): 0 ok; 1 a check found problems (a refuted simplification, a changed
expectation); 2 bad input or usage; 3 an internal error (one line; the traceback only with
``--debug``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class _State:
    debug = False
    color = "auto"


def _console(stderr: bool = False):
    from rich.console import Console

    force = {"always": True, "never": False}.get(_State.color)
    no_color = _State.color == "never" or ("NO_COLOR" in os.environ and _State.color != "always")
    width = None
    if "HLOIDX_WIDTH" in os.environ:
        width = int(os.environ["HLOIDX_WIDTH"])
    return Console(
        stderr=stderr,
        force_terminal=force,
        no_color=no_color,
        width=width,
        highlight=False,
        soft_wrap=True,
    )


def _report_error(error: Exception) -> None:
    from ..errors import HloidxError

    if isinstance(error, HloidxError):
        click.echo(error.render(), err=True)
    else:
        click.echo(f"error: {error}", err=True)


def _read_text(path: str, what: str) -> tuple[str, str]:
    """Text of a file argument or ``-`` (stdin); undecodable bytes become U+FFFD."""
    if path == "-":
        data = (
            sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        )
        return data.decode("utf-8", errors="replace"), "<stdin>"
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", errors="replace"), path
    except OSError as error:
        raise click.UsageError(f"cannot read {what} {path}: {error.strerror}") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="hloidx")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour in text output (NO_COLOR is honoured on auto).",
)
@click.option("--debug", is_flag=True, help="Show Python tracebacks for internal errors.")
def cli(color: str, debug: bool) -> None:
    """Inspect XLA HLO indexing maps: which input elements an op or fusion reads, and how.

    \b
    Examples:
      hloidx simplify "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), \
        domain: d0 in [0, 6], d1 in [0, 14]"
      hloidx maps samples/broadcast.hlo
      hloidx maps model.hlo --instruction fusion.3 --format json

    Maps are printed in XLA's own text format, so they can be pasted from an XLA log into
    `hloidx simplify` and back.
    """
    _State.color = color
    _State.debug = debug


# ---------------------------------------------------------------------------
# simplify
# ---------------------------------------------------------------------------


@cli.command()
@click.argument("map_text", metavar="MAP", required=False)
@click.option("--file", "file_", type=click.Path(dir_okay=False), help="Read the map from a file.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option("--explain", is_flag=True, help="List each rule applied with the map after it.")
@click.option("--no-verify", is_flag=True, help="Skip the equivalence check of the result.")
@click.option(
    "--remove-unused", is_flag=True, help="Also remove unused range and runtime variables."
)
@click.option(
    "--floordiv-spelling",
    type=click.Choice(["floordiv", "/"]),
    default="floordiv",
    show_default=True,
    help="How to print floor division (newer XLA prints '/').",
)
def simplify(
    map_text: str | None,
    file_: str | None,
    fmt: str,
    explain: bool,
    no_verify: bool,
    remove_unused: bool,
    floordiv_spelling: str,
) -> None:
    """Simplify an indexing map and check that the result is equivalent.

    MAP is a map in XLA's text format (one line or several), `-` to read it from standard
    input, or omitted with --file F. The result is printed in XLA's format with a verdict:
    `proved` (shown symbolically with SymPy), `exhaustive (N points)` (every domain point
    checked), `sampled (N points)` (only a sample checked: not a proof) or `refuted` (a bug:
    exit code 1, with a counterexample).

    \b
    Example:
      hloidx simplify "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), \
        domain: d0 in [0, 6], d1 in [0, 14]"
      (d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]
      verdict: proved
    """
    from ..maps.printer import format_map
    from ..maps.simplify import simplify_with_rules
    from ..maps.syntax import parse_map

    if file_ is not None and map_text is not None:
        raise click.UsageError("give the map either as an argument or with --file, not both")
    if file_ is not None:
        text, where = _read_text(file_, "map file")
    elif map_text is None:
        raise click.UsageError("missing MAP (a map in XLA's text format, or - for stdin)")
    elif map_text == "-":
        text, where = _read_text("-", "map")
    else:
        text, where = map_text, "<map>"

    original = parse_map(text, where)
    simplified, rules = simplify_with_rules(original, remove_unused=remove_unused)
    verdict = None
    if not no_verify:
        from ..maps.equivalence import verify

        verdict = verify(original, simplified)
    doc: dict[str, Any] = {
        "schema_version": 1,
        "input": format_map(original, floordiv_spelling),
        "simplified": format_map(simplified, floordiv_spelling),
        "verdict": None,
        "rules": [
            {"name": r.name, "map": format_map(r.map_after, floordiv_spelling)} for r in rules
        ],
    }
    if verdict is not None:
        doc["verdict"] = {**verdict.to_json(), "label": verdict.label}
    if fmt == "json":
        json_doc = dict(doc)
        if json_doc["verdict"] is not None:
            json_doc["verdict"] = {k: v for k, v in json_doc["verdict"].items() if k != "label"}
        click.echo(json.dumps(json_doc, indent=2))
    else:
        from .render import render_simplify

        render_simplify(_console(), doc, doc["rules"] if explain else None)
    if verdict is not None and verdict.is_refuted:
        if fmt == "text":
            click.echo(
                "error: the simplified map is NOT equivalent to the input (a bug in hloidx)",
                err=True,
            )
        sys.exit(EXIT_PROBLEMS)


# ---------------------------------------------------------------------------
# maps
# ---------------------------------------------------------------------------


def _progress(
    enabled: bool, total_hint: str
) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    if not enabled:
        return None, lambda: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn(total_hint),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_console(stderr=True),
        transient=True,
    )
    progress.start()
    task = progress.add_task(total_hint, total=None)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return update, progress.stop


@cli.command()
@click.argument("file", metavar="FILE")
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
    help="Output-to-input, input-to-output, or both.",
)
@click.option("--no-verify", is_flag=True, help="Do not check simplifications (faster).")
@click.option("--no-simplify", is_flag=True, help="Print the maps as the rules build them.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
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
    help="... to instruction B (an operand chain inside one computation).",
)
@click.option("--tree", is_flag=True, help="Show how fusion maps were composed, op by op.")
def maps(
    file: str,
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
) -> None:
    """Indexing maps of every instruction of an HLO file, for every operand.

    FILE is HLO text (`-` for stdin): a module XLA dumped,
    `jax.jit(f).lower(...).as_text(dialect="hlo")` output, an optimized module with fusions, or
    a hand-written snippet. For each operand it shows the output-to-input and input-to-output
    maps (simplified, each simplification verified), whether they are exact, the runtime
    variables, and the operand's utilization: `distinct` (fraction of its elements read at least
    once) and `reads` (reads per element).

    Instructions whose opcode has no rule say `unknown indexing`. A syntax error is reported
    with file:line:col (exit code 2) and every instruction that could be parsed is still
    analysed. Exit code 1 means a simplification was refuted (a bug in hloidx).
    """
    from ..hlo.analysis import analyze
    from ..hlo.report import error_to_json, module_to_json
    from ..hlo.syntax import parse_hlo_lenient

    text, where = _read_text(file, "HLO file")
    module, errors = parse_hlo_lenient(text, where)
    for error in errors:
        _report_error(error)
    if module is None:
        if fmt == "json":
            click.echo(
                json.dumps(
                    {
                        "schema_version": 1,
                        "module": None,
                        "instructions": [],
                        "errors": [error_to_json(e) for e in errors],
                    },
                    indent=2,
                )
            )
        sys.exit(EXIT_BAD_INPUT)
    names = {n.lstrip("%") for n in instructions}
    if from_ or to:
        if not (from_ and to):
            raise click.UsageError("--from and --to go together")
        from ..hlo.chains import chain_report

        doc = chain_report(
            module,
            from_.lstrip("%"),
            to.lstrip("%"),
            simplify=not no_simplify,
            verify=not no_verify,
            spelling=floordiv_spelling,
        )
        if fmt == "json":
            click.echo(json.dumps(doc, indent=2))
        else:
            from .render import render_chain

            render_chain(_console(), doc)
        sys.exit(EXIT_BAD_INPUT if errors else EXIT_OK)
    from ..hlo.selection import SelectionError, select_instructions

    try:
        selected = select_instructions(
            module,
            instructions=names,
            computations=computations,
            opcodes=opcodes,
            kind=kind,
            # JSON is read by programs: every computation unless filtered
            all_computations=all_computations or fmt == "json",
        )
    except SelectionError as error:
        raise click.UsageError(f"{error.message} in {where}{error.hint}") from None
    show_progress = fmt == "text" and sys.stderr.isatty()
    update, stop = _progress(show_progress, "analysing")
    try:
        analysis = analyze(
            module,
            simplify=not no_simplify,
            verify=not no_verify,
            direction=direction,
            progress=update,
            only=selected,
        )
    finally:
        stop()
    analysis.errors.extend(errors)
    if fmt == "json":
        # Compact: one document per run, often megabytes; `| python -m json.tool` pretty-prints.
        click.echo(json.dumps(module_to_json(analysis, floordiv_spelling)))
    else:
        from .render import render_module

        console = _console()
        render_module(console, analysis, floordiv_spelling, hide_trivial=hide_trivial)
        if not (names or computations or opcodes or kind):
            from ..hlo.summary import summarize
            from .summary_command import summary_lines

            # the triage table last, where a long scroll ends (`hloidx summary` alone)
            console.file.write("\n" + "\n".join(summary_lines(summarize(analysis), 20)) + "\n")
        if tree:
            from ..hlo.chains import composition_trees
            from .render import render_trees

            render_trees(console, composition_trees(analysis, floordiv_spelling))
    if errors:
        sys.exit(EXIT_BAD_INPUT)
    if any(i.has_refuted for i in analysis.instructions):
        click.echo(
            "error: a simplification was refuted (a bug in hloidx); see the verdicts above",
            err=True,
        )
        sys.exit(EXIT_PROBLEMS)


from .check_command import check as _check  # noqa: E402
from .summary_command import summary as _summary  # noqa: E402

cli.add_command(_check)
cli.add_command(_summary)


def main(argv: list[str] | None = None) -> None:
    """Entry point: every error becomes one line and an exit code, never a traceback."""
    from ..errors import HloidxError

    try:
        cli.main(args=argv, prog_name="hloidx", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except click.ClickException as error:
        error.show()
        sys.exit(EXIT_BAD_INPUT)
    except HloidxError as error:
        _report_error(error)
        sys.exit(EXIT_BAD_INPUT)
    except BrokenPipeError:
        # `hloidx maps big.hlo | head`: the reader went away; that is not an error.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        sys.exit(EXIT_OK)
    except RecursionError:
        click.echo("error: input nested too deeply to process", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except SystemExit:
        raise
    except Exception as error:
        if _State.debug:
            raise
        click.echo(
            f"internal error: {type(error).__name__}: {error} (run with --debug for a traceback)",
            err=True,
        )
        sys.exit(EXIT_INTERNAL)
    sys.exit(EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()
