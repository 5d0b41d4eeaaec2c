"""The text of ``hloidx check`` (its results table, problems and totals)."""

from __future__ import annotations

from typing import Any

from .words import plural

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


def write_check_results(out: Any, err: Any, results: list[Any], totals: dict[str, int]) -> None:
    """``hloidx check``'s text on the consoles ``out`` and ``err``: a table on a terminal,
    plain columns a script can split elsewhere, then every problem and the totals."""
    from rich.table import Table
    from rich.text import Text

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
