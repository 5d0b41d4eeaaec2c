"""Variable names as metadata: a map's variables named by what they index (``b``, ``m``, ``k``).

A name is never part of what a map *is*: the maps the analysis computes, interns, shares and
simplifies are plain (``d0``, ``s0``, ``rt0``), and a :class:`VarNames` record carried beside a
map names its variables by position only when the map is printed (:func:`named`). Renaming a
named map back by position (:func:`plain`) gives the plain map, equal and printed character for
character as before. XLA's map text takes any declared identifier as a variable name, so a
named map is read back by ``parse_map`` with its names (``Variable.name``).

A role name is a valid identifier that is not one of XLA's reserved spellings (``d3``, ``s0``,
``rt1``, the GPU ids ``th_x`` ... ``bl_z``, ``chunk_id``, ``unroll_id``, ``vector_elem``) nor a
word of the map syntax (``domain``, ``in``, ``mod``, ...); names are made unique in a map.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .indexing_map import IndexingMap, Variable

#: the kinds of variable, as the JSON names them
KINDS = ("dimension", "range", "runtime")

#: XLA's spellings of GPU ids and emitter symbols (hloidx prints them as XLA does)
GPU_NAMES = frozenset(
    {
        "th_x",
        "th_y",
        "th_z",
        "bl_x",
        "bl_y",
        "bl_z",
        "chunk_id",
        "unroll_id",
        "vector_elem",
    }
)

#: words of the map syntax, never a variable's name
_SYNTAX_WORDS = frozenset(
    {
        "domain",
        "in",
        "mod",
        "floordiv",
        "ceildiv",
        "min",
        "max",
        "is_simplified",
        "true",
        "false",
        "UNDEFINED",
        "KNOWN",
        "EMPTY",
    }
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DEFAULT_SPELLING = re.compile(r"(?:d|s|rt)[0-9]+\Z")


def is_role_name(name: str) -> bool:
    """Whether ``name`` may name a variable by its role: an identifier that is none of XLA's
    reserved spellings (default names, GPU ids) nor a word of the syntax."""
    return bool(
        _IDENTIFIER.match(name)
        and not _DEFAULT_SPELLING.match(name)
        and name not in GPU_NAMES
        and name not in _SYNTAX_WORDS
    )


def identifier(text: str) -> str:
    """``text`` made an identifier (``param.3`` -> ``param_3``); "" when nothing is left."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", text)
    if out and out[0].isdigit():
        out = "v" + out
    return out


@dataclass(frozen=True, slots=True)
class VarNames:
    """Names and roles of a map's variables by position ("" = the plain name); one tuple per
    kind. Kept beside a map, never in it."""

    dims: tuple[str, ...] = ()
    ranges: tuple[str, ...] = ()
    rts: tuple[str, ...] = ()
    dim_roles: tuple[str, ...] = ()
    range_roles: tuple[str, ...] = ()
    rt_roles: tuple[str, ...] = ()

    @staticmethod
    def of_map(m: IndexingMap, roles: tuple[tuple[str, ...], ...] = ((), (), ())) -> VarNames:
        """The names a map carries in its variables (a named map read or composed)."""
        return VarNames(
            tuple(v.name for v in m.dim_vars),
            tuple(v.name for v in m.range_vars),
            tuple(v.name for v in m.rt_vars),
            *roles,
        )


def _names_for(group: tuple[Variable, ...], names: tuple[str, ...], taken: set[str]) -> list[str]:
    out = []
    for i, v in enumerate(group):
        name = names[i] if i < len(names) else ""
        if name and not is_role_name(name):
            name = ""
        if name:
            base, k = name, 2
            while name in taken:
                name = f"{base}_{k}"
                k += 1
            taken.add(name)
        # a GPU name already in the map stays: it is XLA's own default spelling
        out.append(name or (v.name if v.name in GPU_NAMES else ""))
    return out


def named(m: IndexingMap, names: VarNames | None) -> IndexingMap:
    """``m`` with its variables named by ``names`` (for printing: an equal relation whose text
    declares the names). Invalid or reserved names are left plain; repeated ones get ``_2``."""
    if names is None or m.is_undefined or m.is_known_empty:
        return m
    if not (any(names.dims) or any(names.ranges) or any(names.rts)):
        return m  # nothing to name: the map as it is (GPU names kept)
    taken = set(GPU_NAMES)
    taken.update(v.name for v in m.all_vars() if v.name in GPU_NAMES)
    groups = []
    for group, given in (
        (m.dim_vars, names.dims),
        (m.range_vars, names.ranges),
        (m.rt_vars, names.rts),
    ):
        chosen = _names_for(group, given, taken)
        groups.append(tuple(Variable(v.bounds, n) for v, n in zip(group, chosen, strict=True)))
    return IndexingMap(m.results, groups[0], groups[1], groups[2], m.constraints, m.state)


def plain(m: IndexingMap, keep_gpu_names: bool = False) -> IndexingMap:
    """``m`` renamed back by position: every variable its default name (``d0``, ``s0``,
    ``rt0``); with ``keep_gpu_names`` XLA's GPU spellings stay."""
    if not any(v.name for v in m.all_vars()):
        return m

    def strip(group: tuple[Variable, ...]) -> tuple[Variable, ...]:
        return tuple(
            v if (not v.name or (keep_gpu_names and v.name in GPU_NAMES)) else Variable(v.bounds)
            for v in group
        )

    return IndexingMap(
        m.results,
        strip(m.dim_vars),
        strip(m.range_vars),
        strip(m.rt_vars),
        m.constraints,
        m.state,
    )


def variables_json(m: IndexingMap, names: VarNames | None) -> list[dict[str, Any]]:
    """Each variable of a (named) map: its printed name, kind and role ("" when unknown)."""
    if m.is_undefined or m.is_known_empty:
        return []
    roles = (
        (names.dim_roles, names.range_roles, names.rt_roles) if names is not None else ((), (), ())
    )
    out = []
    for kind, prefix, group, given in zip(
        KINDS, ("d", "s", "rt"), (m.dim_vars, m.range_vars, m.rt_vars), roles, strict=True
    ):
        for i, v in enumerate(group):
            role = given[i] if i < len(given) else ""
            out.append(
                {
                    "name": v.name or f"{prefix}{i}",
                    "kind": "GPU" if v.name in GPU_NAMES else kind,
                    "role": role,
                }
            )
    return out


__all__ = [
    "GPU_NAMES",
    "KINDS",
    "VarNames",
    "identifier",
    "is_role_name",
    "named",
    "plain",
    "variables_json",
]
