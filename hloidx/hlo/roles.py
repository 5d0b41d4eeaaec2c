"""What each variable of an op's maps indexes, as a name and a role (``--names roles``).

* Output dimensions (the dimension variables of every output-to-input map) are named forward
  from the op's semantics: a dot's batch dims ``b``, its lhs and rhs free dims ``m`` / ``n``; a
  convolution's batch ``b``, output feature ``f`` and spatial dims ``x0, x1, ...`` from its
  ``dim_labels``; a parameter of a fused computation takes the names of the fusion's operand.
  Every other op takes its operands' names through its own map: an output dimension that is
  the only one in one operand result (an elementwise op, a transpose, a broadcast, a slice, a
  reduce's kept dims, a gather's offset dims) keeps that name; one of several in one result
  is a split (``m_hi``, ``m_lo``); one that appears in several results alone is a merge
  (``b_m``). What none of these says stays plain.
* Range variables are named by the rule that introduces them: a dot's contracting ``k``, a
  reduce's reduced ``r``, a reduce-window's window ``w0, w1``, a convolution's window
  ``w0, w1`` and input feature ``fi``. Runtime variables are named after the value they hold
  (the instruction the offset or index is read from).

Nothing here changes a map: names are returned beside the maps (:mod:`hloidx.maps.var_names`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import HloidxError
from ..maps.expr import VarKind, variables
from ..maps.indexing_map import IndexingMap, Variable
from ..maps.traversal import evaluate, is_affine
from ..maps.var_names import identifier
from .ir import Instruction

#: (name, role) of one variable; ("", "") when nothing is known
Named = tuple[str, str]
_NONE: Named = ("", "")


def _numbered(prefix: str, count: int) -> list[str]:
    return [prefix] if count == 1 else [f"{prefix}{i}" for i in range(count)]


def dot_output_names(instr: Instruction) -> tuple[Named, ...] | None:
    """A dot's output dims: batch ``b``, lhs free ``m``, rhs free ``n`` (numbered when several)."""
    try:
        numbers = instr.dot_dimension_numbers
        lhs, rhs = instr.operands[0].shape.dims, instr.operands[1].shape.dims
    except (HloidxError, AttributeError, IndexError):
        return None
    batch = len(numbers.lhs_batch)
    lhs_free = len(lhs) - batch - len(numbers.lhs_contracting)
    rhs_free = len(rhs) - batch - len(numbers.rhs_contracting)
    if batch + lhs_free + rhs_free != len(instr.shape.dims):
        return None
    out = [(n, "batch") for n in _numbered("b", batch)]
    out += [(n, "lhs free") for n in _numbered("m", lhs_free)]
    out += [(n, "rhs free") for n in _numbered("n", rhs_free)]
    return tuple(out)


def convolution_output_names(instr: Instruction) -> tuple[Named, ...] | None:
    try:
        dn = instr.convolution_dimension_numbers
    except HloidxError:
        return None
    rank = len(instr.shape.dims)
    if dn is None or len(dn.output_spatial) + 2 != rank:
        return None
    out = [_NONE] * rank
    out[dn.output_batch] = ("b", "batch")
    out[dn.output_feature] = ("f", "output feature")
    for k, d in enumerate(dn.output_spatial):
        out[d] = (f"x{k}", f"output spatial dim {k}")
    return tuple(out)


def gather_output_names(instr: Instruction, carried: list[Named]) -> tuple[Named, ...] | None:
    """A gather's output dims: its batch dims ``g`` (one per gathered slice), its offset dims
    the names carried from the operand or else ``o0, o1, ...``."""
    try:
        offsets = instr.gather_dimension_numbers.offset_dims
    except (HloidxError, AttributeError):
        return None
    rank = len(instr.shape.dims)
    if len(carried) != rank:
        return None
    batch = [d for d in range(rank) if d not in offsets]
    batch_names = _numbered("g", len(batch))
    out = list(carried)
    for d in range(rank):
        if out[d][0]:
            continue
        if d in offsets:
            k = offsets.index(d)
            out[d] = (f"o{k}", f"offset dim {k} of the slice")
        else:
            out[d] = (batch_names[batch.index(d)], "gather batch")
    return tuple(out)


def _result_dims(m: IndexingMap) -> list[frozenset[int]]:
    return [frozenset(v.index for v in variables(r) if v.kind == VarKind.DIM) for r in m.results]


def _by_stride(expr: Any, dims: frozenset[int]) -> list[int] | None:
    """The dims of an affine ``expr`` by falling stride (a split's high part first); None
    when the expression is not affine or two strides are equal."""
    if not is_affine(expr):
        return None

    def at(unit: int | None) -> Any:
        return evaluate(expr, lambda v: 1 if v.kind == VarKind.DIM and v.index == unit else 0)

    base = at(None)
    stride = {d: at(d) - base for d in dims}
    if len(set(stride.values())) != len(stride):
        return None
    return sorted(dims, key=lambda d: -abs(stride[d]))


def names_through(m: IndexingMap, operand: tuple[Named, ...]) -> list[Named]:
    """Output dim names carried through an op's map to an operand whose dims are named."""
    out = [_NONE] * m.num_dims
    if len(operand) != m.num_results or not any(n for n, _ in operand):
        return out
    used = _result_dims(m)
    places: list[list[int]] = [[] for _ in range(m.num_dims)]
    for p, ds in enumerate(used):
        for d in ds:
            places[d].append(p)
    for d, ps in enumerate(places):
        if not ps:
            continue
        if len(ps) == 1:
            p = ps[0]
            name, role = operand[p]
            if not name:
                continue
            if used[p] == {d}:
                out[d] = (name, role)
                continue
            parts = _by_stride(m.results[p], used[p])
            if parts is None:
                continue
            k = parts.index(d)
            if len(parts) == 2:
                out[d] = (
                    f"{name}_{'hi' if k == 0 else 'lo'}",
                    f"{'high' if k == 0 else 'low'} part of {name}",
                )
            else:
                out[d] = (f"{name}_{k}", f"part {k} of {name}")
        elif all(used[p] == {d} for p in ps) and all(operand[p][0] for p in ps):
            merged = [operand[p][0] for p in ps]
            out[d] = _merged(merged)
    return out


def _merged(names: list[str]) -> Named:
    """The name of dims merged back into one: the parts of one split (``m_hi``, ``m_lo`` in
    that order) are that dim again (``m``); other names joined (``b_m``)."""
    base = names[0].rpartition("_")[0]
    parts = ["hi", "lo"] if len(names) == 2 else [str(k) for k in range(len(names))]
    if base and names == [f"{base}_{p}" for p in parts]:
        return base, f"{base}, its parts merged again"
    return "_".join(names), "merge of " + ", ".join(names)


def _range_places(m: IndexingMap) -> list[int | None]:
    """For each range variable, the one result (operand dim) it appears in; None otherwise."""
    places: list[int | None] = [None] * m.num_range_vars
    seen = [0] * m.num_range_vars
    for p, r in enumerate(m.results):
        for v in variables(r):
            if v.kind == VarKind.RANGE:
                places[v.index] = p
                seen[v.index] += 1
    return [p if n == 1 else None for p, n in zip(places, seen, strict=True)]


#: what an attention rule's logical indices are named (:mod:`.rules.attention`)
_ATTENTION: dict[str, Named] = {
    "b": ("b", "batch"),
    "s": ("sq", "query position"),
    "t": ("skv", "key/value position"),
    "h": ("h", "query head"),
    "hk": ("hkv", "key/value head"),
    "hg": ("hg", "query head within its key/value group"),
    "a": ("dqk", "Q/K head dim"),
    "e": ("dv", "V head dim"),
}


def _is_attention(instr: Instruction) -> bool:
    if instr.opcode != "custom-call":
        return False
    from .rules.attention import KERNELS

    return instr.attributes.get("custom_call_target", "").strip('" ') in KERNELS


def attention_output_names(instr: Instruction, out_id: int) -> tuple[Named, ...] | None:
    """An attention custom-call's output dims by the rule's own index pattern: batch ``b``,
    heads ``h`` / ``hkv``, query and key positions ``sq`` / ``skv``, head dims ``dqk`` / ``dv``."""
    if not _is_attention(instr):
        return None
    from .rules.attention import output_access

    access = output_access(instr, out_id)
    if not access:
        return None
    return tuple(_ATTENTION.get(sym, _NONE) for sym in access)


def attention_operand_names(instr: Instruction, operand_id: int) -> tuple[Named, ...] | None:
    """An attention custom-call operand's dims by the index pattern the rule reads it with."""
    if not _is_attention(instr):
        return None
    from .rules.attention import KERNELS

    kernel = KERNELS[instr.attributes.get("custom_call_target", "").strip('" ')](instr)
    for _, reads in kernel.outputs:
        read = reads.get(operand_id)
        if isinstance(read, tuple):
            return tuple(_ATTENTION.get(sym.lstrip("*"), _NONE) for sym in read[1])
    return None


def _attention_ranges(
    instr: Instruction, out_id: int, operand_id: int, count: int, inverse: bool
) -> list[Named]:
    from .rules.attention import range_symbols

    symbols = range_symbols(instr, out_id, operand_id, inverse)
    if symbols is None:
        return _seqlens_ranges(instr, out_id, operand_id, count, inverse)
    if len(symbols) != count:
        return []
    return [_ATTENTION.get(sym, _NONE) for sym in symbols]


def _seqlens_ranges(
    instr: Instruction, out_id: int, operand_id: int, count: int, inverse: bool
) -> list[Named]:
    """A padding mask's cumulative sequence lengths: batch ``b`` reads ``cu[b + edge]``, its
    sequence's start (``edge`` 0) and end (1); every other output dim is reached from them."""
    from .rules.attention import KERNELS, dims_of, outputs_of

    kernel = KERNELS[instr.attributes.get("custom_call_target", "").strip('" ')](instr)
    if out_id >= len(kernel.outputs):
        return []
    out, reads = kernel.outputs[out_id]
    if reads.get(operand_id) != "seqlens":
        return []
    names = [("edge", "start (0) or end (1) of the batch's sequence in the cumulative lengths")]
    if inverse:
        sizes = dims_of(outputs_of(instr)[out_id])
        names += [
            _ATTENTION.get(sym, _NONE)
            for sym, n in zip(out, sizes, strict=True)
            if sym != "b" and n > 1
        ]
    return names if len(names) == count else []


def _window_pairs(m: IndexingMap) -> list[Named]:
    """select-and-scatter's operand map (windows covering an element, then every element of
    those windows): composition puts the window's range variables first, then the covering
    ones (one of each per dim with a window wider than one)."""
    places = _range_places(m)
    half = len(places) // 2
    if len(places) % 2 or None in places or places[:half] != places[half:]:
        return []
    return [(f"w{p}", f"window position in dim {p}") for p in places[:half]] + [
        (f"c{p}", f"position in a covering window, dim {p}") for p in places[half:]
    ]


def _covering(m: IndexingMap, name: str, role: str) -> list[Named]:
    return [(f"{name}{p}", f"{role} {p}") if p is not None else _NONE for p in _range_places(m)]


def i2o_range_names(
    instr: Instruction, operand_id: int, m: IndexingMap, out_id: int = 0
) -> list[Named]:
    """Names of the range variables of the rule's input-to-output map of operand
    ``operand_id`` (to output ``out_id``); a dot's are named in :mod:`.role_names`."""
    op = instr.opcode
    count = m.num_range_vars
    if count == 0:
        return []
    if op == "reduce-window" and operand_id < len(instr.operands) // 2:
        return _covering(m, "c", "position in a covering window, dim")
    if op == "select-and-scatter":
        if operand_id == 0:
            return _window_pairs(m)
        if operand_id == 1:
            return _covering(m, "w", "window position in dim")
    if op == "convolution" and operand_id in (0, 1):
        try:
            dn = instr.convolution_dimension_numbers
        except (HloidxError, AttributeError):
            return []
        out = []
        for p in _range_places(m):
            if p is not None and p in dn.output_spatial:
                k = dn.output_spatial.index(p)
                if operand_id == 0:
                    out.append((f"w{k}", f"window position in spatial dim {k}"))
                else:
                    out.append((f"x{k}", f"output spatial dim {k}"))
            elif p is not None and p == dn.output_feature and operand_id == 0:
                out.append(("f", "output feature"))
            elif p is not None and p == dn.output_batch and operand_id == 1:
                out.append(("b", "batch"))
            else:
                out.append(_NONE)
        return out
    if _is_attention(instr):
        return _attention_ranges(instr, out_id, operand_id, count, inverse=True)
    return []


def range_names(
    instr: Instruction, operand_id: int, m: IndexingMap, out_id: int = 0
) -> list[Named]:
    """Names of the range variables an op's rule gives operand ``operand_id``'s map (from
    output ``out_id``)."""
    op = instr.opcode
    count = m.num_range_vars
    if count == 0:
        return []
    if op == "select-and-scatter":
        if operand_id == 0:
            return _window_pairs(m)
        if operand_id == 1:
            return _covering(m, "c", "position in a covering window, dim")
    if _is_attention(instr):
        return _attention_ranges(instr, out_id, operand_id, count, inverse=False)
    if op in ("dot", "scaled-dot"):
        return [(n, "contracting") for n in _numbered("k", count)]
    if op == "reduce":
        inputs = len(instr.operands) // 2
        if operand_id < inputs:
            return [(n, "reduced") for n in _numbered("r", count)]
    if op == "reduce-window":
        inputs = len(instr.operands) // 2
        if operand_id < inputs:
            places = _range_places(m)
            return [
                (f"w{p}", f"window position in dim {p}") if p is not None else ("", "")
                for p in places
            ]
    if op == "gather" and operand_id == 1:
        return [("iv", "index vector component")] if count == 1 else []
    if op == "scatter":
        inputs = (len(instr.operands) - 1) // 2
        if operand_id >= inputs:
            return _scatter_names(instr, operand_id == inputs, m)
    if op == "convolution" and operand_id in (0, 1):
        try:
            dn = instr.convolution_dimension_numbers
        except (HloidxError, AttributeError):
            return []
        spatial = dn.input_spatial if operand_id == 0 else dn.kernel_spatial
        feature = dn.input_feature if operand_id == 0 else dn.kernel_input_feature
        out = []
        for p in _range_places(m):
            if p is not None and p in spatial:
                k = spatial.index(p)
                out.append((f"w{k}", f"window position in spatial dim {k}"))
            elif p is not None and p == feature:
                out.append(("fi", "input feature"))
            else:
                out.append(("", ""))
        return out
    return []


def _scatter_names(instr: Instruction, indices: bool, m: IndexingMap) -> list[Named]:
    """A scatter's indices and updates maps: the update positions that may land on an output
    element (``u``), and the index vector component of the indices (``iv``)."""
    try:
        vector_dim = instr.scatter_dimension_numbers.index_vector_dim
    except (HloidxError, AttributeError):
        return []
    places = _range_places(m)
    plain_ones = [p for p in places if not (indices and p == vector_dim)]
    names = iter(_numbered("u", len(plain_ones)))
    out = []
    for p in places:
        if indices and p == vector_dim:
            out.append(("iv", "index vector component"))
        else:
            out.append((next(names), "update scatter position"))
    return out


def runtime_names(runtime_vars: Any) -> list[Named]:
    """Each runtime variable named after the instruction its value is read from."""
    out: list[Named] = []
    seen: dict[str, int] = {}
    producers = [rv.producer.name for rv in runtime_vars]
    for p in producers:
        base = identifier(p)
        if producers.count(p) > 1:
            k = seen.get(p, 0)
            seen[p] = k + 1
            out.append((f"{base}_{k}", f"component {k} of the value read from {p}"))
        else:
            out.append((base, f"value read from {p}"))
    return out


def with_symbol_names(m: IndexingMap, ranges: list[Named], rts: list[Named]) -> IndexingMap:
    """``m`` whose range and runtime variables carry the given names (for a walk through a
    fused computation: composition keeps a variable's name wherever it moves)."""
    if m.is_undefined or m.is_known_empty or not (ranges or rts):
        return m
    new_ranges = tuple(
        Variable(v.bounds, ranges[i][0]) if i < len(ranges) and ranges[i][0] else v
        for i, v in enumerate(m.range_vars)
    )
    new_rts = tuple(
        Variable(v.bounds, rts[i][0]) if i < len(rts) and rts[i][0] else v
        for i, v in enumerate(m.rt_vars)
    )
    return replace(m, range_vars=new_ranges, rt_vars=new_rts)


__all__ = [
    "Named",
    "attention_operand_names",
    "attention_output_names",
    "convolution_output_names",
    "dot_output_names",
    "gather_output_names",
    "i2o_range_names",
    "names_through",
    "range_names",
    "runtime_names",
    "with_symbol_names",
]
