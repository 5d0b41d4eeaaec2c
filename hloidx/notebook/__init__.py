"""The display layer: the public result objects of ``hloidx.analyze``, ``hloidx.show``,
``hloidx.tile``, ``hloidx.threads``, ``hloidx.coalescing`` and ``hloidx.cost``.

Each result prints as the command line does (``str()``: the command's text; ``as_dict()``:
its JSON document), shows as HTML in Jupyter (``_repr_html_``), as text in IPython terminals
(``_repr_pretty_``) and Rich consoles (``__rich__``), and the tables become DataFrames
(``to_pandas()``, with the ``notebook`` extra). The analyses below (``hlo``, ``gpu``,
``tiling``, ``perf``) never import this layer, pictures or HTML; this layer reaches the
text renderers of :mod:`hloidx.render` (and so Rich) only lazily, when text is asked for.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: each public name and its module (imported when first asked for: ``import hloidx`` in a
#: kernel registers the map formatters without loading the analyses)
_WHERE = {
    "COLUMNS": "analysis",
    "Analysis": "analysis",
    "InstructionView": "analysis",
    "OperandView": "analysis",
    "Summary": "analysis",
    "analyze": "api",
    "coalescing": "api",
    "cost": "api",
    "show": "api",
    "threads": "api",
    "tile": "api",
    "MapView": "maps",
    "register_formatters": "maps",
    "CoalescingView": "results",
    "CostView": "results",
    "Picture": "results",
    "ThreadsView": "results",
    "TileView": "results",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


__all__ = sorted(_WHERE)
