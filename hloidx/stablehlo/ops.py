"""Each StableHLO op as the HLO instruction XLA converts it to (attribute for attribute).

An op without a translation here (``chlo.*``, and StableHLO ops hloidx has no rule for) is an
HLO ``custom-call`` whose target is the op's name: its operands are UNDEFINED, never an error.
"""

from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING, Any

from ..hlo.rules.basic import ELEMENTWISE as BASIC_ELEMENTWISE
from .attributes import OpPieces, first_type, ints, nested_ints, record, split_op, word
from .emit import _result_shape, _simple, _unknown, _window
from .syntax import Group, Stmt, Tok
from .types import TensorType

if TYPE_CHECKING:
    from .values import LoweringContext as Lowering
    from .values import Scope

#: HLO's elementwise opcodes that need more than their operands (attributes, a region) or do
#: not exist in StableHLO under the same name: these get their own translation, or none
_NOT_PLAIN = {
    "compare",
    "map",
    "reduce-precision",
    "all-reduce",
    "all-reduce-start",
    "all-reduce-done",
    "domain",
    "stochastic-convert",
    "cos",
    "sin",
    "exp",
    "count-leading-zeros",
}

#: stablehlo op (without the dialect) -> HLO opcode, for ops that map one to one: HLO's
#: elementwise ops under their StableHLO spelling (`round_nearest_even`), and a few more
ELEMENTWISE = {op.replace("-", "_"): op for op in BASIC_ELEMENTWISE if op not in _NOT_PLAIN} | {
    "count_leading_zeros": "count-leading-zeros",  # XLA's opcode (its short name is clz)
    "bitcast_convert": "bitcast-convert",
    "reshape": "reshape",
}

_DIRECTIONS = {"EQ", "NE", "LT", "LE", "GT", "GE"}
_CHLO_ELEMENTWISE = {"erf": "erf", "tan": "tan", "square": "multiply"}


def lower_op(lowering: Lowering, scope: Scope, stmt: Stmt) -> None:
    op = split_op(stmt)
    dialect, _, short = op.name.partition(".")
    if dialect in ("stablehlo", "mhlo") and short in _HANDLERS:
        _HANDLERS[short](lowering, scope, stmt, op)
    elif dialect in ("stablehlo", "mhlo") and short in ELEMENTWISE:
        _simple(lowering, scope, stmt, op, ELEMENTWISE[short], "")
    elif op.name in ("call", "func.call"):
        _call(lowering, scope, stmt, op)
    elif dialect == "chlo" and short == "top_k":
        from .op_forms import _top_k

        _top_k(lowering, scope, stmt, op)
    elif op.name == "sdy.sharding_constraint":
        # Shardy's annotation, an identity: XLA exports it as its `Sharding` custom-call
        _simple(lowering, scope, stmt, op, "custom-call", 'custom_call_target="Sharding"')
    elif dialect == "chlo" and short == "erf_inv":
        # XLA expands it into elementwise ops on x alone: a custom-call with the same reads
        _simple(lowering, scope, stmt, op, "custom-call", 'custom_call_target="chlo.erf_inv"')
    elif dialect == "chlo" and short in _CHLO_ELEMENTWISE:
        # chlo ops XLA converts to one elementwise HLO op; any other chlo op is UNDEFINED
        if short == "square":  # x * x
            op.operands = op.operands + op.operands
        _simple(lowering, scope, stmt, op, _CHLO_ELEMENTWISE[short], "")
    else:
        _unknown(lowering, scope, stmt, op)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _braces(values: list[int]) -> str:
    return "{" + ",".join(str(v) for v in values) + "}"


def _attr(op: OpPieces, *names: str) -> list[Any] | None:
    for name in names:
        if name in op.attrs:
            return op.attrs[name]
    return None


def _need(lowering: Lowering, stmt: Stmt, op: OpPieces, *names: str) -> list[Any]:
    value = _attr(op, *names)
    if value is None:
        raise lowering.error(f"{op.name}: missing attribute {names[0]}", stmt.head)
    return value


# ---------------------------------------------------------------------------
# Ops
# ---------------------------------------------------------------------------


def _constant(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    shape, types = _result_shape(op, lowering, stmt)
    literal = _literal(op.body, types[0])
    name = lowering.emit(scope, stmt.results[0], shape, "constant", [], "", stmt.start)
    # the literal goes inside the parentheses: rewrite the line just written
    text, offset = scope.lines[-1]
    scope.lines[-1] = (text.replace("constant()", f"constant({literal})"), offset)
    lowering.bind(scope, stmt, name, types)


def _literal(body: list[Any], t: TensorType) -> str:
    for k, item in enumerate(body):
        if isinstance(item, Tok) and item.value == "dense" and k + 1 < len(body):
            inner = body[k + 1]
            if isinstance(inner, Group):
                return _literal_items(inner.items, t)
    return "0"


def _literal_items(items: list[Any], t: TensorType) -> str:
    def scalar(tok: Tok) -> str:
        if tok.type == "HEX":
            return _hex_value(tok.value, t.element)
        if tok.type == "BARE_ID":
            return {"true": "true", "false": "false"}.get(tok.value, "0")
        if tok.type == "STRING":
            return "0"  # a hex blob of the whole array: the values do not matter for indexing
        return tok.value

    def walk(item: Any) -> str:
        if isinstance(item, Group) and item.kind == "[":
            parts = [walk(i) for i in item.items if not (isinstance(i, Tok) and i.type == "COMMA")]
            return "{" + ", ".join(parts) + "}"
        if isinstance(item, Group) and item.kind == "(":  # complex: (re, im)
            parts = [walk(i) for i in item.items if not (isinstance(i, Tok) and i.type == "COMMA")]
            return "(" + ", ".join(parts) + ")"
        if isinstance(item, Tok):
            return scalar(item)
        return "0"

    if not items:
        return "0"
    return walk(items[0])


def _hex_value(text: str, element: str) -> str:
    bits = int(text, 16)
    try:
        if element == "f32":
            value = struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
        elif element == "f64":
            value = struct.unpack("<d", struct.pack("<Q", bits & 0xFFFFFFFFFFFFFFFF))[0]
        elif element == "f16":
            value = struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]
        elif element == "bf16":
            value = struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
        else:
            return str(bits)
    except (struct.error, OverflowError):
        return "0"
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _compare(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    direction = (
        next((t.value for t in op.body if isinstance(t, Tok) and t.value in _DIRECTIONS), None)
        or word(_attr(op, "comparison_direction") or [])
        or "EQ"
    )
    _simple(lowering, scope, stmt, op, "compare", f"direction={direction}")


def _broadcast_in_dim(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    dims = ints(_need(lowering, stmt, op, "dims", "broadcast_dimensions"))
    source = op.operand_types[0] if op.operand_types else None
    result = op.result_types[0] if op.result_types else None
    expanded = [
        k
        for k, d in enumerate(dims)
        if source is not None and result is not None and source.dims[k] == 1 and result.dims[d] != 1
    ]
    if not expanded:
        _simple(lowering, scope, stmt, op, "broadcast", f"dimensions={_braces(dims)}")
        return
    # a size-1 dimension stretched to a larger one: XLA reshapes it away, then broadcasts
    from .types import TensorType
    from .values import Value

    kept = [k for k in range(len(dims)) if k not in expanded]
    squeezed = TensorType(source.element, tuple(source.dims[k] for k in kept))
    value = lowering.use(scope, op.operands[0])
    reshaped = lowering.emit(scope, None, squeezed.hlo, "reshape", [value], "", stmt.start)
    name = lowering.emit(
        scope,
        stmt.results[0],
        result.hlo,
        "broadcast",
        [Value(reshaped, squeezed)],
        f"dimensions={_braces([dims[k] for k in kept])}",
        stmt.start,
    )
    lowering.bind(scope, stmt, name, [result])


def _broadcast(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    # the old `broadcast sizes = [...]`: new leading dimensions
    sizes = ints(_need(lowering, stmt, op, "sizes", "broadcast_sizes"))
    rank = op.operand_types[0].rank if op.operand_types else 0
    dims = list(range(len(sizes), len(sizes) + rank))
    _simple(lowering, scope, stmt, op, "broadcast", f"dimensions={_braces(dims)}")


def _dims_op(opcode: str, *names: str):
    def handler(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
        dims = ints(_need(lowering, stmt, op, *names))
        _simple(lowering, scope, stmt, op, opcode, f"dimensions={_braces(dims)}")

    return handler


def _iota(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    dim = ints(_need(lowering, stmt, op, "dim", "iota_dimension"))[0]
    _simple(lowering, scope, stmt, op, "iota", f"iota_dimension={dim}")


def _concatenate(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    dim = ints(_need(lowering, stmt, op, "dim", "dimension"))[0]
    _simple(lowering, scope, stmt, op, "concatenate", f"dimensions={{{dim}}}")


def _slice(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    bracket = next((p for p in op.body if isinstance(p, Group) and p.kind == "["), None)
    specs: list[str] = []
    if bracket is not None and _attr(op, "start_indices") is None:
        current: list[str] = []
        for item in [*bracket.items, Tok("COMMA", ",", 0)]:
            if isinstance(item, Tok) and item.type == "COMMA":
                nums = [c for c in current if c != ":"]
                start, limit = nums[0], nums[1]
                stride = nums[2] if len(nums) > 2 else "1"
                specs.append(f"[{start}:{limit}:{stride}]")
                current = []
            elif isinstance(item, Tok):
                current.append(":" if item.type == "COLON" else item.value)
    else:
        starts = ints(_need(lowering, stmt, op, "start_indices"))
        limits = ints(_need(lowering, stmt, op, "limit_indices"))
        strides = ints(_attr(op, "strides") or []) or [1] * len(starts)
        specs = [f"[{a}:{b}:{c}]" for a, b, c in zip(starts, limits, strides, strict=True)]
    _simple(lowering, scope, stmt, op, "slice", "slice={" + ", ".join(specs) + "}")


def _pad(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    low = ints(_need(lowering, stmt, op, "low", "edge_padding_low"))
    high = ints(_need(lowering, stmt, op, "high", "edge_padding_high"))
    interior = ints(_attr(op, "interior", "interior_padding") or []) or [0] * len(low)
    config = "x".join(f"{a}_{b}_{c}" for a, b, c in zip(low, high, interior, strict=True))
    _simple(lowering, scope, stmt, op, "pad", f"padding={config or '0_0'}")


def _dynamic_slice(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    sizes = ints(_need(lowering, stmt, op, "sizes", "slice_sizes"))
    _simple(lowering, scope, stmt, op, "dynamic-slice", f"dynamic_slice_sizes={_braces(sizes)}")


def _dot_general(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    parts: dict[str, list[int]] = {}
    pretty = {"batching_dims": "batch", "contracting_dims": "contracting"}
    for key, short in pretty.items():
        value = _attr(op, key)
        if value is not None:
            groups = [g for g in value if isinstance(g, Group) and g.kind == "["]
            parts[f"lhs_{short}_dims"] = ints([groups[0]]) if groups else []
            parts[f"rhs_{short}_dims"] = ints([groups[1]]) if len(groups) > 1 else []
    numbers = record(_attr(op, "dot_dimension_numbers") or [])
    for field, key in (
        ("lhs_batching_dimensions", "lhs_batch_dims"),
        ("rhs_batching_dimensions", "rhs_batch_dims"),
        ("lhs_contracting_dimensions", "lhs_contracting_dims"),
        ("rhs_contracting_dimensions", "rhs_contracting_dims"),
    ):
        if field in numbers:
            parts[key] = ints(numbers[field])
    attrs = ", ".join(f"{k}={_braces(v)}" for k, v in parts.items() if v)
    _simple(lowering, scope, stmt, op, "dot", attrs)


def _reduce_window(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    sizes = ints(_need(lowering, stmt, op, "window_dimensions"))
    pads = nested_ints(_attr(op, "padding") or [])
    if pads and not isinstance(pads[0], list):
        pads = [[pads[0], pads[0]] for _ in sizes]
    window = _window(
        sizes,
        ints(_attr(op, "window_strides") or []),
        pads,
        ints(_attr(op, "base_dilations") or []),
        ints(_attr(op, "window_dilations") or []),
    )
    count = len(op.operands) // 2
    reducer = _region_or_applies(lowering, scope, stmt, op, count)
    _simple(lowering, scope, stmt, op, "reduce-window", f"{window}, to_apply={reducer}")


def _region_or_applies(
    lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces, count: int
) -> str:
    """The reducer of a reduce-like op: its region, or the op after ``applies``."""
    for k, item in enumerate(op.body):
        if isinstance(item, Tok) and item.value == "applies" and k + 1 < len(op.body):
            element = op.operand_types[-1].element if op.operand_types else "f32"
            return lowering.reducer(op.body[k + 1].value, element, count)
    if not op.regions:
        raise lowering.error(f"{op.name}: no reducer region", stmt.head)
    params = None
    if op.region_args:  # `reducer(%a0: T, %b0: T) (%a1: T, %b1: T)`: accumulators first
        from .values import _block_args

        pairs = [_block_args(g.items, lowering.source) for g in op.region_args]
        params = [p[0] for p in pairs] + [p[1] for p in pairs if len(p) > 1]
    name, _ = lowering.region(f"region_{stmt.results[0]}", op.regions[0], params)
    return name


def _reduce(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    dims = ints(_need(lowering, stmt, op, "dimensions"))
    # pretty form lists (input init: value) pairs: reorder to inputs..., inits...
    values = op.operands
    count = len(values) // 2
    op.operands = values[0::2] + values[1::2] if _pretty_reduce(op) else values
    reducer = _region_or_applies(lowering, scope, stmt, op, count)
    _simple(lowering, scope, stmt, op, "reduce", f"dimensions={_braces(dims)}, to_apply={reducer}")


def _pretty_reduce(op: OpPieces) -> bool:
    first = next((p for p in op.body if isinstance(p, Group)), None)
    return first is not None and any(isinstance(t, Tok) and t.value == "init" for t in first.items)


from .op_forms import HANDLERS as _MORE  # noqa: E402  (the larger ops, in their own module)

_HANDLERS: dict[str, Any] = {
    "constant": _constant,
    "compare": _compare,
    "broadcast_in_dim": _broadcast_in_dim,
    "broadcast": _broadcast,
    "transpose": _dims_op("transpose", "dims", "permutation"),
    "reverse": _dims_op("reverse", "dims", "dimensions"),
    "iota": _iota,
    "concatenate": _concatenate,
    "slice": _slice,
    "pad": _pad,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": lambda lw, sc, st, op: _simple(
        lw, sc, st, op, "dynamic-update-slice", ""
    ),
    "dot_general": _dot_general,
    "dot": lambda lw, sc, st, op: _simple(
        lw,
        sc,
        st,
        op,
        "dot",
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
        if op.operand_types and op.operand_types[0].rank == 2
        else "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
    ),
    "reduce_window": _reduce_window,
    "reduce": _reduce,
    **_MORE,
}


def _call(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    if op.callee is None:
        raise lowering.error("call without a callee", stmt.head)
    name, _ = lowering.lower_func(op.callee)
    _simple(lowering, scope, stmt, op, "call", f"to_apply={name}")


__all__ = ["ELEMENTWISE", "first_type", "lower_op"]
