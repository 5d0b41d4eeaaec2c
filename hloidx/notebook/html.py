"""HTML fragments for notebook cells: tables, map text, pictures. Self-contained (inline CSS
scoped to ``.hloidx``, no script, no network), no wider than a notebook column (wide tables
scroll inside their box), and escaped as the HTML report escapes (``html.escape`` on every
piece of text, map and HLO text in ``<pre>``/``<code>``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

#: the status colours of the HTML report (``hloidx maps --format html``), scoped to a cell
STYLE = """
.hloidx { font-family: system-ui, sans-serif; font-size: 13px; max-width: 100%; }
.hloidx .box { max-width: 100%; overflow-x: auto; }
.hloidx code, .hloidx pre, .hloidx table td.mono { font-family: ui-monospace, monospace;
  font-size: 12px; }
.hloidx table { border-collapse: collapse; margin: 0.3em 0 0.8em; font-size: 13px; }
.hloidx table th, .hloidx table td { border: 1px solid #ccc; padding: 2px 6px;
  text-align: left; vertical-align: top; }
.hloidx table th { background: #f0f0f0; }
.hloidx table td.num { text-align: right; white-space: nowrap; }
.hloidx pre { margin: 0.2em 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.hloidx .exact, .hloidx .never-read, .hloidx .never { color: #2a7d2a; }
.hloidx .unknown { color: #b36b00; font-weight: bold; }
.hloidx .over-approximation { color: #b36b00; } .hloidx .note { color: #777; }
.hloidx .refuted { color: #c00; font-weight: bold; } .hloidx .sampled { color: #b36b00; }
.hloidx svg { max-width: 100%; height: auto; }
"""


def fragment(body: str) -> str:
    """``body`` in a scoped box with its style: what ``_repr_html_`` returns."""
    return f'<div class="hloidx"><style>{STYLE}</style>{body}</div>'


def status_class(status: str | None) -> str:
    """The CSS class of a status or verdict (``never read`` -> ``never-read``)."""
    text = (status or "unknown").split(" (")[0]
    return escape(text.replace(" ", "-"))


def status(text: str | None) -> str:
    value = text or "unknown"
    return f'<span class="{status_class(value)}">{escape(value)}</span>'


def cell(value: Any, *, mono: bool = False, raw: bool = False, num: bool = False) -> str:
    """One ``td``: numbers right-aligned, None as ``?``, text escaped (``raw``: HTML given;
    ``num``: text that stands for a number, such as ``65.5 kB``)."""
    if num:
        return f'<td class="num">{escape(str(value))}</td>'
    if raw:
        return f"<td>{value}</td>"
    if value is None:
        return '<td class="num">?</td>'
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, int | float):
        text = f"{value:.4g}" if isinstance(value, float) else f"{value:,}"
        return f'<td class="num">{escape(text)}</td>'
    cls = ' class="mono"' if mono else ""
    return f"<td{cls}>{escape(str(value))}</td>"


def table(
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    total: int | None = None,
    more: str = "",
    caption: str = "",
) -> str:
    """A table of ``rows`` (each a list of ``td`` strings from :func:`cell`); when ``total``
    rows exist but fewer are given, a line says how many were left out and ``more`` where to
    find them."""
    body = ["<tr>" + "".join(r) + "</tr>" for r in rows]
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    out = (
        f'<div class="box"><table>{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )
    if total is not None and total > len(body):
        out += f'<p class="note">{total - len(body):,} more rows not shown{escape(more)}</p>'
    return out


def pre(text: str) -> str:
    return f"<pre>{escape(text)}</pre>"


def heading(text: str, level: int = 4) -> str:
    return f"<h{level}><code>{escape(text)}</code></h{level}>"


def note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'
