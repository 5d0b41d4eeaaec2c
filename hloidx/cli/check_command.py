"""``hloidx check``: compare HLO files' maps with their expectation files (a thin client of
:mod:`hloidx.check.expectations`: parse options, run, render, return the exit code)."""

from __future__ import annotations

import json
import sys

import click

from .options import console, global_options, jobs_option, progress


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--update",
    is_flag=True,
    help="Rewrite expectations from the computed maps (only where the oracle agrees).",
)
@jobs_option("Check files")
@global_options
def check(paths: tuple[str, ...], fmt: str, update: bool, jobs: int) -> None:
    """Check HLO files against their expected maps (NAME.expected beside NAME.hlo).

    PATH is a file or a directory, searched recursively for *.hlo and for the module texts of
    an XLA dump (`--xla_dump_to`: *before_optimizations.txt, *after_optimizations.txt). For a
    file with an expectation, every listed map is compared with the computed one semantically
    (the same relation; a difference fails, with a diff) and textually (a different printed
    form of the same map is only a note). Every simplification is verified. A file without an
    expectation passes when every instruction analyses without error; ops with no rule are
    listed.

    With --update, expectations are rewritten from the computed maps, but only for files whose
    maps the independent oracle (an HLO provenance interpreter) confirms: on every output
    element, or for an instruction too large for that, on 64 sampled output elements with the
    point-wise oracle (the notes say which); an expectation is created only for a file named
    directly on the command line.

    Exit codes: 0 all good; 1 a mismatch, a refuted simplification, an analysis error or a
    refused update; 2 bad input (a syntax error in an HLO or expectation file, file:line:col).

    \b
    Example:
      hloidx check samples/ --jobs 2
    """
    from ..check import expectations as lib

    files, missing = lib.collect_files(paths)
    if missing:
        raise click.UsageError(f"no such file or directory: {', '.join(missing)}")
    if not files:
        raise click.UsageError(
            f"no module files under {', '.join(paths)} (looked for *.hlo, "
            "*before_optimizations.txt and *after_optimizations.txt)"
        )
    show_progress = fmt == "text" and sys.stderr.isatty() and len(files) > 1
    update_progress, stop = progress(show_progress, "checking")
    try:
        results = lib.run_check(files, update=update, jobs=jobs, progress=update_progress)
    finally:
        stop()
    code = lib.exit_code(results)
    if fmt == "json":
        click.echo(json.dumps(lib.report(results), indent=2))
    else:
        from ..render.check import write_check_results

        write_check_results(console(), console(stderr=True), results, lib.summary(results))
    sys.exit(code)
