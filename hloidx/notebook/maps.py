"""An indexing map in a notebook: its text in XLA's format and its domain as a table.

``IndexingMap`` itself lives in :mod:`hloidx.maps`, which knows nothing of HTML; its display
comes from here, registered with IPython's formatters by :func:`register_formatters` (by the
class's module and name, so the registration imports nothing). :class:`MapView` gives the
same display to any map by hand."""

from __future__ import annotations

import sys
from typing import Any

from . import html as h
from .display import Display


def map_html(m: Any, spelling: str = "floordiv") -> str:
    """The map's text (``<pre>``) and its domain: one row per variable with its kind and
    interval, then the constraints."""
    from ..maps.printer import format_expr, format_map, variable_names

    parts = [h.pre(format_map(m, spelling))]
    if m.is_undefined or m.is_known_empty:
        return "".join(parts)
    dims, ranges, rts = variable_names(m)
    rows = []
    for kind, names, variables in (
        ("dimension", dims, m.dim_vars),
        ("range", ranges, m.range_vars),
        ("runtime", rts, m.rt_vars),
    ):
        for name, v in zip(names, variables, strict=True):
            rows.append([h.cell(name, mono=True), h.cell(kind), h.cell(str(v.bounds), mono=True)])
    for expr, bounds in m.constraints:
        text = format_expr(expr, dims, ranges, rts, spelling)
        rows.append([h.cell(text, mono=True), h.cell("constraint"), h.cell(str(bounds), mono=True)])
    if rows:
        parts.append(h.table(["variable", "kind", "in"], rows))
    return "".join(parts)


class MapView(Display):
    """A map shown as its text and its domain: ``str()`` is XLA's text (what the command line
    prints), ``as_dict()`` the text with the domain as data.

    >>> import hloidx
    >>> v = MapView(hloidx.parse_map("(d0) -> (d0 floordiv 4), domain: d0 in [0, 7]"))
    >>> str(v)
    '(d0) -> (d0 floordiv 4), domain: d0 in [0, 7]'
    >>> v.as_dict()["domain"]
    [{'name': 'd0', 'kind': 'dimension', 'lower': 0, 'upper': 7}]
    """

    def __init__(self, indexing_map: Any, spelling: str = "floordiv") -> None:
        self.map = indexing_map
        self.spelling = spelling

    def __repr__(self) -> str:
        return f"<hloidx map {self.text()}>"

    def text(self) -> str:
        from ..maps.printer import format_map

        return format_map(self.map, self.spelling)

    def as_dict(self) -> dict[str, Any]:
        from ..maps.printer import format_expr, variable_names

        m = self.map
        dims, ranges, rts = variable_names(m)
        domain = [
            {"name": n, "kind": kind, "lower": v.bounds.lower, "upper": v.bounds.upper}
            for kind, names, variables in (
                ("dimension", dims, m.dim_vars),
                ("range", ranges, m.range_vars),
                ("runtime", rts, m.rt_vars),
            )
            for n, v in zip(names, variables, strict=True)
        ]
        constraints = [
            {
                "expression": format_expr(e, dims, ranges, rts, self.spelling),
                "lower": b.lower,
                "upper": b.upper,
            }
            for e, b in m.constraints
        ]
        return {"map": self.text(), "domain": domain, "constraints": constraints}

    def html(self) -> str:
        return map_html(self.map, self.spelling)


def _map_html(m: Any) -> str:
    return MapView(m)._repr_html_()


def install_map_display() -> None:
    """Every ``IndexingMap`` shows as its text and domain in a notebook (``_repr_html_``),
    with or without IPython's formatters (those need a running IPython)."""
    from ..maps import indexing_map

    indexing_map.html_display = _map_html


def _map_pretty(m: Any, printer: Any, cycle: bool) -> None:
    printer.text(MapView(m).text())


def register_formatters() -> bool:
    """Give ``IndexingMap`` its notebook display (HTML) and its IPython terminal display
    (XLA's text) in the running IPython, if any; True when registered."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    formatters = shell.display_formatter.formatters
    where = ("hloidx.maps.indexing_map", "IndexingMap")
    formatters["text/html"].for_type_by_name(*where, _map_html)
    formatters["text/plain"].for_type_by_name(*where, _map_pretty)
    return True
