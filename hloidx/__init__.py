"""hloidx: inspect XLA HLO indexing maps.

The public API (tests and tools call these; the CLI is a thin client of them):

* :func:`parse_map` / :func:`format_map` — XLA's indexing-map text format, in and out;
* :func:`simplify` — range-aware simplification; :func:`verify` — is a simplification sound;
* :func:`parse_hlo` — HLO text into a typed IR; :func:`parse_stablehlo` — StableHLO (MLIR)
  text into the same IR; :func:`from_jax` — the module of a JAX function;
* :func:`analyze` — every instruction's indexing maps and operand utilization.

Imports are lazy so that ``hloidx --help`` starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .hlo.ir import HloModule
    from .maps.indexing_map import IndexingMap


def parse_map(text: str, name: str = "<map>") -> IndexingMap:
    """Parse a map in XLA's text format (raises ``MapSyntaxError`` with a location)."""
    from .maps.syntax import parse_map as _parse

    return _parse(text, name)


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
    from .hlo.rules.custom_calls import register_custom_call as _register

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

    ``hloidx.analyze(hloidx.from_jax(f, x))`` in a notebook. Needs jax (``pip install
    'hloidx[jax]'``).
    """
    try:
        import jax
    except ImportError:
        from .errors import HloidxError

        raise HloidxError("from_jax needs jax: pip install 'hloidx[jax]'") from None
    lowered = jax.jit(fn).lower(*example_args)
    name = getattr(fn, "__name__", "fn")
    if optimized:
        return parse_hlo(lowered.compile().as_text(), f"<jax {name}, optimized>")
    return parse_stablehlo(lowered.as_text(), f"<jax {name}>")


def tile(module: HloModule, instruction: str, sizes: Any = "symbolic") -> Any:
    """The tile of every operand that an output tile of ``instruction`` needs: ``sizes`` is a
    tuple of tile sizes per output dimension, or ``"symbolic"`` (XLA's SymbolicTile form).
    Returns ``hloidx.tiling.operand_tiles.InstructionTiles``;
    ``hloidx.tiling.report.tiles_document`` gives its JSON."""
    from .errors import HloidxError
    from .tiling.operand_tiles import tile_instruction

    found = module.instruction(instruction)
    if found is None:
        raise HloidxError(f"no instruction named {instruction.lstrip('%')!r}")
    return tile_instruction(found, None if sizes == "symbolic" else tuple(sizes))


def analyze(module: HloModule, **options: Any) -> Any:
    """Indexing maps and utilization for every instruction of a module."""
    from .hlo.analysis import analyze as _analyze

    return _analyze(module, **options)


__all__ = [
    "__version__",
    "analyze",
    "clear_caches",
    "format_map",
    "from_jax",
    "parse_hlo",
    "parse_map",
    "parse_stablehlo",
    "register_custom_call",
    "simplify",
    "simplify_with_rules",
    "tile",
    "verify",
]
