"""hloidx: inspect XLA HLO indexing maps.

The public API (tests and tools call these; the CLI is a thin client of them):

* :func:`parse_map` / :func:`format_map` — XLA's indexing-map text format, in and out;
* :func:`simplify` — range-aware simplification; :func:`verify` — is a simplification sound;
* :func:`parse_hlo` — HLO text into a typed IR; :func:`parse_stablehlo` — StableHLO (MLIR)
  text into the same IR; :func:`from_jax` — the module of a JAX function;
* :func:`analyze` — every instruction's indexing maps and operand utilization;
* :func:`show`, :func:`tile`, :func:`threads`, :func:`coalescing`, :func:`cost` — a heatmap,
  tiles, thread maps, coalescing and the cost table of a module.

Every result prints as the command line does (``str()`` is the command's text, ``as_dict()``
its JSON document), shows as HTML in Jupyter, and its tables become DataFrames
(``to_pandas()``, ``pip install -e '.[notebook]'``). In a notebook::

    a = hloidx.analyze(hloidx.from_jax(f, x, optimized=True))
    a                                   # the triage table
    a.instruction("fusion").operands[0] # maps, verdicts, heatmap

Imports are lazy so that ``hloidx --help`` starts fast.
"""

from __future__ import annotations

import sys as _sys
from typing import TYPE_CHECKING, Any

from .version import __version__

if TYPE_CHECKING:
    from .hlo.ir import HloModule
    from .maps.indexing_map import IndexingMap
    from .notebook import (
        Analysis,
        CoalescingView,
        CostView,
        Picture,
        ThreadsView,
        TileView,
    )

# In IPython (a notebook's kernel), maps show as their text and domain: the formatters are
# registered by the class's name, so no map code is imported for it.
if "IPython" in _sys.modules:  # pragma: no cover - depends on the host
    from .notebook.maps import register_formatters as _register

    _register()


def parse_map(text: str, name: str = "<map>") -> IndexingMap:
    """Parse a map in XLA's text format (raises ``MapSyntaxError`` with a location); in a
    notebook the map shows as its text and its domain (``_repr_html_``)."""
    global _map_display
    from .maps.syntax import parse_map as _parse

    if not _map_display:
        from .notebook.maps import install_map_display

        install_map_display()
        _map_display = True
    return _parse(text, name)


#: whether maps have their notebook display yet (set by the first ``parse_map``)
_map_display = False


def format_map(
    indexing_map: IndexingMap, floordiv_spelling: str = "floordiv", multiline: bool = False
) -> str:
    """Print a map exactly as XLA does (one line, or one domain entry per line)."""
    from .maps.printer import format_map as _format

    return _format(indexing_map, floordiv_spelling=floordiv_spelling, multiline=multiline)


def simplify(indexing_map: IndexingMap, *, remove_unused: bool = False) -> IndexingMap:
    """The simplified map; ``remove_unused`` also drops unused range and runtime variables."""
    from .maps.simplify import simplify as _simplify

    return _simplify(indexing_map, remove_unused=remove_unused)


def simplify_with_rules(
    indexing_map: IndexingMap, *, remove_unused: bool = False
) -> tuple[IndexingMap, list[Any]]:
    """The simplified map and the rules applied, each with the map after it (``AppliedRule``)."""
    from .maps.simplify import simplify_with_rules as _simplify_with_rules

    return _simplify_with_rules(indexing_map, remove_unused=remove_unused)


def verify(original: IndexingMap, simplified: IndexingMap, **options: Any) -> Any:
    """A ``Verdict``: proved, exhaustive, sampled or refuted (with a counterexample)."""
    from .maps.equivalence import verify as _verify

    return _verify(original, simplified, **options)


def clear_caches() -> None:
    """Forget every memoised result; every memo table is bounded, this empties them all."""
    from .caches import clear_caches as _clear

    _clear()


def register_custom_call(target: str, as_plain_op: Any) -> None:
    """Give custom-calls to ``target`` the maps of an ordinary op: ``as_plain_op(instruction)``
    returns the plain instruction it stands for (same operands, e.g. a ``dot`` with its
    dimension numbers in ``attributes``). See ``hloidx.hlo.rules.custom_calls``."""
    from .hlo.rules import load_custom_call_families
    from .hlo.rules.custom_calls import register_custom_call as _register

    load_custom_call_families()  # the built-in targets first, so that this one wins
    _register(target, as_plain_op)


def parse_hlo(text: str, name: str = "<string>", *, verify: bool = True) -> HloModule:
    """Parse HLO text (a module, a computation or a bare list of instructions).

    With ``verify`` (the default) a shape or opcode XLA would reject is a located error too;
    ``verify=False`` checks the syntax only.
    """
    from .hlo.syntax import parse_hlo as _parse

    return _parse(text, name, verify=verify)


def parse_stablehlo(text: str, name: str = "<string>") -> HloModule:
    """Parse StableHLO (the MLIR text ``jax.jit(f).lower(x).as_text()`` prints) into the same
    IR as HLO text; errors are located in the MLIR text."""
    from .stablehlo import parse_stablehlo as _parse

    return _parse(text, name)


def from_jax(fn: Any, *example_args: Any, optimized: bool = False) -> HloModule:
    """The module of a JAX function: the StableHLO JAX lowers ``fn`` to (before XLA's
    optimizations), or with ``optimized`` the HLO XLA compiles it to (fusions and all).

    ``hloidx.analyze(hloidx.from_jax(f, x))`` in a notebook. Needs jax (``pip install -e
    '.[jax]'`` in hloidx's checkout).
    """
    try:
        import jax
    except ImportError:
        from .errors import HloidxError

        raise HloidxError(
            "from_jax needs jax: pip install -e '.[jax]' in hloidx's checkout"
        ) from None
    lowered = jax.jit(fn).lower(*example_args)
    name = getattr(fn, "__name__", "fn")
    if optimized:
        return parse_hlo(lowered.compile().as_text(), f"<jax {name}, optimized>")
    return parse_stablehlo(lowered.as_text(), f"<jax {name}>")


def tile(module: Any, instruction: str, sizes: Any = "symbolic") -> TileView:
    r"""The tile of every operand that an output tile of ``instruction`` needs (``hloidx
    tile``): ``sizes`` is a tuple of tile sizes per output dimension, ``"symbolic"`` (XLA's
    SymbolicTile form) or ``"auto"``. The result's ``.operands`` are
    ``hloidx.tiling.operand_tiles.OperandTile``; ``as_dict()`` is the JSON document.

    >>> import hloidx
    >>> m = hloidx.parse_hlo("ENTRY e { p = f32[8,8] parameter(0)\n"
    ...                      "ROOT t = f32[8,8] transpose(p), dimensions={1,0} }")
    >>> print(hloidx.tile(m, "t", (2, 4)).as_dict()["operands"][0]["rectangle"])
    True
    """
    from .notebook import tile as _tile

    return _tile(module, instruction, sizes)


def analyze(module: Any, **options: Any) -> Analysis:
    r"""Indexing maps, verdicts and utilization for every instruction of a module (an
    ``HloModule``, HLO or StableHLO text, or a file's name or ``pathlib.Path``).

    The result iterates over its instructions entry computation first; ``.instruction(name)``
    (``%`` optional), ``.entry()``, ``.fusions()``, ``.summary()``, ``.to_pandas()``;
    ``str()`` is ``hloidx maps FILE``, ``as_dict()`` its JSON. Options: ``verify``,
    ``simplify``, ``direction`` (as ``hloidx maps``).

    >>> import hloidx
    >>> a = hloidx.analyze("ENTRY e { p = f32[8] parameter(0)\n"
    ...                    "ROOT s = f32[4] slice(p), slice={[0:8:2]} }")
    >>> print(a.instruction("%s").operands[0].output_to_input[0])
    (d0) -> (d0 * 2), domain: d0 in [0, 3]
    """
    from .notebook import analyze as _analyze

    return _analyze(module, **options)


def show(module: Any, instruction: str, operand: int = 0, **options: Any) -> Picture:
    r"""The heatmap of one operand of ``instruction`` (``hloidx show``): every element
    coloured by how often it is read; the SVG in a notebook, ``.svg()`` as a file. Options
    ``dims``, ``output_element``, ``tile``/``tile_index``, ``warp``/``device``.

    >>> import hloidx
    >>> pic = hloidx.show("ENTRY e { p = f32[8] parameter(0)\n"
    ...                   "ROOT s = f32[4] slice(p), slice={[0:8:2]} }", "s")
    >>> [c["count"] for c in pic.as_dict()["cells"][0]]
    [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    """
    from .notebook import show as _show

    return _show(module, instruction, operand, **options)


def threads(module: Any, fusion: str, device: str = "rtx-a6000", **options: Any) -> ThreadsView:
    """Thread-id maps of a fusion on a GPU (``hloidx threads``): which element each thread
    writes and reads. ``device``: ``rtx-a6000``, ``a100`` or ``h100``.

    >>> import hloidx
    >>> t = hloidx.threads(hloidx.parse_hlo('''
    ... HloModule m
    ... f { p = f32[1024] parameter(0)
    ...     ROOT n = f32[1024] negate(p) }
    ... ENTRY e { x = f32[1024] parameter(0)
    ...     ROOT fusion = f32[1024] fusion(x), kind=kLoop, calls=f }'''), "fusion")
    >>> t.as_dict()["emitter"]
    'loop'
    """
    from .notebook import threads as _threads

    return _threads(module, fusion, device, **options)


def coalescing(module: Any, device: str = "rtx-a6000", **options: Any) -> CoalescingView:
    """Whether each fusion's reads of each operand are coalesced on a GPU (``hloidx
    coalescing``).

    >>> import hloidx
    >>> c = hloidx.coalescing(hloidx.parse_hlo('''
    ... HloModule m
    ... f { p = f32[1024] parameter(0)
    ...     ROOT n = f32[1024] negate(p) }
    ... ENTRY e { x = f32[1024] parameter(0)
    ...     ROOT fusion = f32[1024] fusion(x), kind=kLoop, calls=f }'''))
    >>> c.as_dict()["fusions"][0]["operands"][0]["coalesced"]
    True
    """
    from .notebook import coalescing as _coalescing

    return _coalescing(module, device, **options)


def cost(
    module: Any, device: str | None = None, *, model: str = "hloidx", **options: Any
) -> CostView:
    """What each kernel of a module costs on a GPU (``hloidx cost``; estimates from XLA's GPU
    cost model, labelled so): a table in a notebook, ``to_pandas()`` one row per kernel.
    ``device``: rtx-a6000 unless given (or given by a profile); ``model``: ``"hloidx"``
    (bytes from the maps) or ``"xla"``; options ``sort`` (time, bytes, flops, name),
    ``limit`` and ``profile`` (a measured profile joined onto the rows, ``--profile``).

    >>> import hloidx
    >>> c = hloidx.cost(hloidx.parse_hlo('''
    ... HloModule m
    ... f { p = f32[1024] parameter(0)
    ...     ROOT n = f32[1024] negate(p) }
    ... ENTRY e { x = f32[1024] parameter(0)
    ...     ROOT fusion = f32[1024] fusion(x), kind=kLoop, calls=f }'''), "h100")
    >>> [k["name"] for k in c.as_dict()["kernels"]]
    ['fusion']
    """
    from .notebook import cost as _cost

    return _cost(module, device, model=model, **options)


__all__ = [
    "__version__",
    "analyze",
    "clear_caches",
    "coalescing",
    "cost",
    "format_map",
    "from_jax",
    "parse_hlo",
    "parse_map",
    "parse_stablehlo",
    "register_custom_call",
    "show",
    "simplify",
    "simplify_with_rules",
    "threads",
    "tile",
    "verify",
]
