"""The display layer: the public result objects of ``hloidx.analyze``, ``hloidx.show``,
``hloidx.tile``, ``hloidx.threads``, ``hloidx.coalescing`` and ``hloidx.cost``.

Each result prints as the command line does (``str()``: the command's text; ``as_dict()``:
its JSON document), shows as HTML in Jupyter (``_repr_html_``), as text in IPython terminals
(``_repr_pretty_``) and Rich consoles (``__rich__``), and the tables become DataFrames
(``to_pandas()``, with the ``notebook`` extra). The analyses below (``hlo``, ``gpu``,
``tiling``, ``perf``) never import this layer, pictures or HTML; this layer reaches the
command line's text renderers (and so Click and Rich) only lazily, when text is asked for.
"""

from __future__ import annotations

from .analysis import COLUMNS, Analysis, InstructionView, OperandView, Summary
from .api import analyze, coalescing, cost, show, threads, tile
from .maps import MapView, register_formatters
from .results import CoalescingView, CostView, Picture, ThreadsView, TileView

__all__ = [
    "COLUMNS",
    "Analysis",
    "CoalescingView",
    "CostView",
    "InstructionView",
    "MapView",
    "OperandView",
    "Picture",
    "Summary",
    "ThreadsView",
    "TileView",
    "analyze",
    "coalescing",
    "cost",
    "register_formatters",
    "show",
    "threads",
    "tile",
]
