"""The text and JSON document of ``hloidx maps`` over many files (``--jobs``, a directory)."""

from __future__ import annotations

from typing import Any

from .words import plural


def many_files_lines(outcomes: list[Any]) -> Any:
    """The text of ``hloidx maps`` over many files (a :class:`LineBuffer`): each file's
    lines under its name, then a table of the files (with each outcome's ``status``) and the
    totals."""
    from .lines import Line, LineBuffer

    buffer = LineBuffer()
    for outcome in outcomes:
        buffer.print(Line(f"== {outcome.where}", style="bold reverse"))
        buffer.lines.extend(outcome.lines)
        if outcome.usage_error:
            buffer.print(Line(f"  {outcome.usage_error}", style="yellow"))
        buffer.print(Line())
    rows = [("file", "status", "instructions", "without a rule", "seconds")]
    for o in outcomes:
        rows.append(
            (
                o.where,
                o.status,
                str(o.instructions),
                ", ".join(o.unknown_opcodes) or "-",
                f"{o.seconds:.2f}",
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for r in rows:
        text = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        buffer.print(Line(text, style="bold" if r is rows[0] else None))
    total = sum(o.instructions for o in outcomes)
    bad = sum(1 for o in outcomes if o.status not in ("ok", "no match"))
    buffer.print(
        Line(
            f"{plural(len(outcomes), 'file')}, {plural(total, 'instruction')} analysed, "
            f"{plural(bad, 'file')} with problems",
            style="bold",
        )
    )
    return buffer


def many_files_document(outcomes: list[Any]) -> dict[str, Any]:
    """The JSON document of ``hloidx maps --format json`` over many files."""
    return {
        "schema_version": 1,
        "files": [
            {
                "file": o.where,
                "status": o.status,
                "seconds": round(o.seconds, 3),
                "instructions": o.instructions,
                "opcodes_without_rule": o.unknown_opcodes,
                "error": o.usage_error,
                "report": o.doc,
            }
            for o in outcomes
        ],
        "totals": {
            "files": len(outcomes),
            "instructions": sum(o.instructions for o in outcomes),
            "with_problems": sum(1 for o in outcomes if o.status not in ("ok", "no match")),
        },
    }
