"""``hloidx check``: compare HLO files' maps with their expectation files (a thin client of
:mod:`hloidx.check.expectations`: parse options, run, render, return the exit code)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .options import console, global_options, jobs_option, plural, progress


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
        _render(results, lib.summary(results))
    sys.exit(code)


_STATUS_STYLE = {
    "ok": "green",
    "ok (no expectation)": "green",
    "ok (textual differences)": "yellow",
    "updated": "cyan",
    "bad input": "bold red",
    "mismatch": "bold red",
    "refuted": "bold red",
    "analysis error": "red",
    "update refused": "red",
}


def _render(results: list[Any], totals: dict[str, int]) -> None:
    from rich.table import Table
    from rich.text import Text

    out = console()
    err = console(stderr=True)
    table = Table(title="hloidx check", show_lines=False)
    table.add_column("file", overflow="fold")
    table.add_column("status", no_wrap=True)
    for column in ("instructions", "maps", "unsupported", "seconds"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(
            Text(r.path),
            Text(r.status, style=_STATUS_STYLE.get(r.status, "")),
            str(r.instructions),
            str(r.maps_compared),
            str(len(r.unsupported)),
            f"{r.seconds:.2f}",
        )
    if out.is_terminal:
        out.print(table)
    else:
        # a pipe or a file: whole file names, one line per file, columns a script can split
        rows = [("file", "status", "instructions", "maps", "unsupported", "seconds")]
        rows += [
            (
                r.path,
                r.status,
                str(r.instructions),
                str(r.maps_compared),
                str(len(r.unsupported)),
                f"{r.seconds:.2f}",
            )
            for r in results
        ]
        widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
        for row in rows:
            out.file.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            out.file.write("\n")
    for r in results:
        for error in r.errors:
            err.print(Text(error))
        for m in r.mismatches:
            out.print(
                Text(
                    f"{r.path}: {m.instruction} {m.direction} operand {m.operand}: "
                    "the maps differ in meaning",
                    style="bold red",
                )
            )
            for line in m.diff.splitlines():
                style = "red" if line.startswith("-") else "green" if line.startswith("+") else ""
                out.print(Text(line, style=style))
        for item in r.refuted:
            out.print(Text(f"{r.path}: {item}", style="bold red"))
        for item in r.analysis_errors:
            out.print(Text(f"{r.path}: {item}", style="red"))
        if r.update_refused:
            out.print(Text(f"{r.path}: update refused: {r.update_refused}", style="red"))
        for item in r.textual:
            out.print(Text(f"{r.path}: note: {item}", style="yellow"))
        for item in r.notes:
            out.print(Text(f"{r.path}: note: {item}", style="yellow"))
        if r.unsupported:
            shown = ", ".join(u.split(":", 1)[0] for u in r.unsupported[:8])
            more = f" and {len(r.unsupported) - 8} more" if len(r.unsupported) > 8 else ""
            out.print(Text(f"{r.path}: no indexing rule for {shown}{more}", style="dim"))
    line = (
        f"{plural(totals['files'], 'file')}, {totals['with_expectation']} with expectations, "
        f"{plural(totals['maps_compared'], 'map')} compared: {totals['ok']} ok, "
        f"{totals['problems']} with problems, {totals['bad_input']} bad input"
    )
    if totals["updated"]:
        line += f", {plural(totals['updated'], 'expectation')} updated"
    out.print(Text(line))
