"""The ``hloidx`` command line: parse options, call the library, render, return an exit code.

Exit codes (one place): 0 ok; 1 a check found problems (a refuted simplification, a changed
expectation); 2 bad input or usage; 3 an internal error (one line; the traceback only with
``--debug``).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any

import click

from ..version import __version__
from .options import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROBLEMS,
    State,
    console,
    global_options,
    read_text,
    report_error,
    reset_state,
    stdout_is_terminal,
)

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERNAL", "EXIT_OK", "EXIT_PROBLEMS", "cli", "main"]


class _ReaderGone(Exception):
    """Standard output was closed by its reader (`| head`). Not an OSError, so that click's own
    handler (which exits 1 on a closed pipe) lets it through to :func:`main`, which exits 0."""


#: Every command but ``simplify`` and the module that defines it: a module is imported only
#: when its command runs (or ``--help`` lists them all), so ``hloidx simplify`` never loads
#: the analysis layers the other commands need.
_LAZY_COMMANDS = {
    "check": ("check_command", "check"),
    "coalescing": ("gpu_commands", "coalescing"),
    "cost": ("cost_command", "cost"),
    "maps": ("maps_command", "maps"),
    "show": ("show_command", "show"),
    "summary": ("summary_command", "summary"),
    "threads": ("gpu_commands", "threads"),
    "tile": ("tile_command", "tile"),
}


class _Commands(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _LAZY_COMMANDS:
            module, name = _LAZY_COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f".{module}", __package__), name)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as error:  # output written while analysing (streamed JSON)
            raise _ReaderGone from error


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, package_name="hloidx")  # no metadata look-up
@global_options
def cli() -> None:
    """Inspect XLA HLO indexing maps: which input elements an op or fusion reads, and how.

    \b
    Examples:
      hloidx simplify "(d0) -> (d0 floordiv 4, d0 mod 4 + 1), domain: d0 in [0, 3]"
      hloidx maps samples/seed000/reshape_expand.hlo
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo
      hloidx maps samples/corpus/cnn_pool_batchnorm.opt.hlo --instruction '*fusion*' --format json

    Maps are printed in XLA's own text format, so they can be pasted from an XLA log into
    `hloidx simplify` and back. The options above are also accepted after the command name
    (`hloidx maps f.hlo --color never -o out.txt`).
    """


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
@click.option(
    "--canonical-order",
    is_flag=True,
    help="Print every sum in XLA's canonical summand order, even one the simplifier left "
    "unchanged (by default such a sum keeps the order it was written in).",
)
@click.option(
    "--fold-point-dims",
    is_flag=True,
    help="A result that is a dimension of size 1 becomes its value (XLA's default Simplify()); "
    "by default it stays the dimension (XLA's kPreserve).",
)
@click.option(
    "--no-rescale",
    is_flag=True,
    help="Keep range variables pinned to one residue (`s0 mod 6 in [0, 0]`) as they are.",
)
@global_options
def simplify(
    map_text: str | None,
    file_: str | None,
    fmt: str,
    explain: bool,
    no_verify: bool,
    remove_unused: bool,
    floordiv_spelling: str,
    canonical_order: bool,
    fold_point_dims: bool,
    no_rescale: bool,
) -> None:
    """Simplify an indexing map and check that the result is equivalent.

    MAP is a map in XLA's text format (one line or several), `-` to read it from standard
    input, or omitted with --file F. The result is printed in XLA's format with a verdict:
    `proved` (shown symbolically with SymPy), `exhaustive (N points)` (every domain point
    checked), `sampled (N points)` (only a sample checked: not a proof) or `refuted` (a bug:
    exit code 1, with a counterexample).

    The result is never longer (in operations, results and constraints together) than the
    map given; sums come in XLA's canonical order, and a map XLA printed already simplified
    comes back as it was.

    \b
    Example:
      hloidx simplify "(d0) -> (d0 floordiv 4, d0 mod 4 + 1), domain: d0 in [0, 3]"
      (d0) -> (0, d0 + 1), domain: d0 in [0, 3]
      verdict: proved
    """
    from ..maps.map_simplify import SimplifyOptions, keep_given_order, simplify_with_rules
    from ..maps.printer import format_map
    from ..maps.syntax import parse_map

    if file_ is not None and map_text is not None:
        raise click.UsageError("give the map either as an argument or with --file, not both")
    if file_ is not None:
        text, where = read_text(file_, "map file")
    elif map_text is None:
        raise click.UsageError("missing MAP (a map in XLA's text format, or - for stdin)")
    elif map_text == "-":
        text, where = read_text("-", "map")
    else:
        text, where = map_text, "<map>"

    original = parse_map(text, where)
    options = SimplifyOptions(preserve_point_dims=not fold_point_dims, rescale=not no_rescale)
    simplified, rules = simplify_with_rules(original, remove_unused=remove_unused, options=options)
    if not canonical_order:
        # what the simplifier did not change comes back as written, character for character
        simplified = keep_given_order(original, simplified)
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
        import json

        click.echo(json.dumps(json_doc, indent=2))
    elif stdout_is_terminal():
        from ..render.lines import render_simplify

        render_simplify(console(), doc, doc["rules"] if explain else None)
    else:
        from ..render.simplify_text import simplify_lines

        click.echo("\n".join(simplify_lines(doc, doc["rules"] if explain else None)))
    if verdict is not None and verdict.is_refuted:
        if fmt == "text":
            click.echo(
                "error: the simplified map is NOT equivalent to the input (a bug in hloidx)",
                err=True,
            )
        sys.exit(EXIT_PROBLEMS)


@cli.command()
def lsp() -> None:
    """Run the HLO language server on stdin/stdout (for an editor; needs the lsp extra).

    Diagnostics as you type, maps, statuses and costs on hover, definitions, references,
    outline, inlay hints and code lenses for .hlo, XLA dump .txt and StableHLO .mlir files.
    Install: pip install -e '.[lsp]' in hloidx's checkout. The README's section
    "In the editor: hloidx lsp" shows the setup for Neovim, Emacs and VS Code.
    """
    try:
        from ..lsp.server import build_server
    except ImportError as error:
        click.echo(
            f"error: hloidx lsp needs pygls 2: pip install -e '.[lsp]' in hloidx's checkout"
            f" ({error})",
            err=True,
        )
        sys.exit(EXIT_BAD_INPUT)
    build_server().start_io()


def main(argv: list[str] | None = None) -> None:
    """Entry point: every error becomes one line and an exit code, never a traceback.

    Run as the program (``argv`` None: the ``hloidx`` script, ``python -m hloidx``), the
    process ends as soon as the output is flushed: tearing down the interpreter frees every
    object of the analysis one by one (1.2 s after a 55,000-instruction module), and nothing
    is left to clean up (``--output`` files are closed with the command's context, worker
    pools are shut down by their command). Called with ``argv`` (in-process, the tests), it
    raises SystemExit as before.
    """
    try:
        _main(argv)
    except SystemExit as done:
        if argv is None and isinstance(done.code, int | None):
            _leave_now(done.code or 0)
        raise


def _leave_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe, a closed stream
            stream.flush()
    os._exit(code)


def _main(argv: list[str] | None) -> None:
    from ..errors import HloidxError

    reset_state()
    try:
        cli.main(args=argv, prog_name="hloidx", standalone_mode=False)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.exceptions.Abort as error:
        # click turns Ctrl-C into Abort; a shell expects 130 for it
        interrupted = _interrupted(error)
        click.echo("interrupted" if interrupted else "aborted", err=True)
        sys.exit(EXIT_INTERRUPTED if interrupted else EXIT_BAD_INPUT)
    except click.ClickException as error:
        error.show()
        sys.exit(EXIT_BAD_INPUT)
    except HloidxError as error:
        report_error(error)
        sys.exit(EXIT_BAD_INPUT)
    except (BrokenPipeError, _ReaderGone):
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
        if State.debug:
            raise
        click.echo(
            f"internal error: {type(error).__name__}: {error} (run with --debug for a traceback)",
            err=True,
        )
        sys.exit(EXIT_INTERNAL)
    sys.exit(EXIT_OK)


def _interrupted(error: BaseException) -> bool:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, KeyboardInterrupt):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


if __name__ == "__main__":  # pragma: no cover
    main()
