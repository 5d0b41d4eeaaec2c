"""XLA's shape rules, one per opcode family: the result shape an instruction's operands and
attributes give, and the message when the instruction says otherwise.

The parser accepts any text of the right form; XLA's verifier and shape inference then reject
a transpose whose result does not match its permutation, a slice past the end of its operand,
a reshape that changes the element count, an opcode XLA does not have, and so on. hloidx
applies the same rules (read from XLA's ``shape_inference.cc`` and ``hlo_verifier.cc``; the code
is our own) so that it analyses only what XLA would run. Each rule returns a message and, when
an attribute is at fault, the attribute's name, so the error points at it.

The checks compare dimensions, not element types or layouts, and are skipped where a shape
has dynamic dimensions: they never reject a module XLA accepts (a test runs them over every
module of the corpus and of XLA's tests).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from math import prod

from ..errors import HloidxError
from .ir import Computation, Instruction, Shape

_SAME_SHAPE = set(
    [
        "abs",
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atan",
        "atanh",
        "cbrt",
        "ceil",
        "count-leading-zeros",
        "convert",
        "copy",
        "cosine",
        "cosh",
        "erf",
        "exponential",
        "exponential-minus-one",
        "floor",
        "imag",
        "is-finite",
        "log",
        "log-plus-one",
        "logistic",
        "negate",
        "not",
        "popcnt",
        "real",
        "reduce-precision",
        "round-nearest-afz",
        "round-nearest-even",
        "rsqrt",
        "sign",
        "sine",
        "sinh",
        "sqrt",
        "tan",
        "tanh",
        "add",
        "and",
        "atan2",
        "compare",
        "complex",
        "divide",
        "maximum",
        "minimum",
        "mulhi",
        "multiply",
        "or",
        "power",
        "remainder",
        "shift-left",
        "shift-right-arithmetic",
        "shift-right-logical",
        "subtract",
        "xor",
        "stochastic-convert",
    ]
)
_SCALAR_OPERANDS_ALLOWED = {"select", "clamp"}

Problem = tuple[str, str | None]  # (message, attribute at fault or None)


def _dims(shape: Shape) -> tuple[int, ...] | None:
    """The dimensions of an array shape without dynamic dimensions; None otherwise."""
    if not shape.is_array or any(shape.dynamic):
        return None
    return shape.dims


def _show(dims: Sequence[int]) -> str:
    return "[" + ",".join(map(str, dims)) + "]"


def _expect(instr: Instruction, want: Sequence[int], why: str) -> Problem | None:
    got = _dims(instr.shape)
    if got is None or tuple(got) == tuple(want):
        return None
    return (
        f"{instr.name}: result shape {_show(got)} does not match {_show(want)}, {why}",
        None,
    )


def _window_out(n: int, size: int, stride: int, lo: int, hi: int, base: int, dil: int) -> int:
    padded = ((n - 1) * base + 1 if n else 0) + lo + hi
    span = (size - 1) * dil + 1
    return 0 if padded < span or stride <= 0 else (padded - span) // stride + 1


# ---------------------------------------------------------------------------
# The rules, one per opcode family
# ---------------------------------------------------------------------------


def _elementwise(instr: Instruction) -> Problem | None:
    out = _dims(instr.shape)
    if out is None:
        return None
    for k, operand in enumerate(instr.operands):
        dims = _dims(operand.shape)
        if dims is None:
            continue
        if instr.opcode in _SCALAR_OPERANDS_ALLOWED and dims == ():
            continue
        if dims != out:
            return (
                f"{instr.name}: operand {k} ({operand.name}) has shape {_show(dims)} but "
                f"{instr.opcode} gives {_show(out)}: elementwise operands and result must agree",
                None,
            )
    return None


def _broadcast(instr: Instruction) -> Problem | None:
    (operand,) = instr.operands
    src, out = _dims(operand.shape), _dims(instr.shape)
    dims = instr.dimensions or ()
    if src is None or out is None:
        return None
    if len(dims) != len(src):
        return (
            f"{instr.name}: broadcast needs one entry in dimensions per operand dimension "
            f"({len(src)}), got {len(dims)}",
            "dimensions",
        )
    for k, d in enumerate(dims):
        if not 0 <= d < len(out):
            return (
                f"{instr.name}: broadcast dimension {d} is out of range for a result of rank "
                f"{len(out)}",
                "dimensions",
            )
        if out[d] != src[k]:
            return (
                f"{instr.name}: broadcast maps operand dimension {k} (size {src[k]}) to result "
                f"dimension {d} of size {out[d]}",
                "dimensions",
            )
    return None


def _reshape(instr: Instruction) -> Problem | None:
    src, out = _dims(instr.operands[0].shape), _dims(instr.shape)
    if src is None or out is None or prod(src) == prod(out):
        return None
    if (
        instr.opcode == "bitcast"
        and instr.shape.element_type != instr.operands[0].shape.element_type
    ):
        return None  # a bitcast may change the element type: XLA compares byte sizes
    return (
        f"{instr.name}: {instr.opcode} from {_show(src)} ({prod(src)} elements) to "
        f"{_show(out)} ({prod(out)} elements) changes the number of elements",
        None,
    )


def _transpose(instr: Instruction) -> Problem | None:
    src = _dims(instr.operands[0].shape)
    perm = tuple(instr.dimensions or ())
    if src is None:
        return None
    if sorted(perm) != list(range(len(src))):
        return (
            f"{instr.name}: transpose dimensions {{{','.join(map(str, perm))}}} are not a "
            f"permutation of the operand's {len(src)} dimensions",
            "dimensions",
        )
    return _expect(instr, [src[p] for p in perm], "the operand's dimensions in that order")


def _slice(instr: Instruction) -> Problem | None:
    src = _dims(instr.operands[0].shape)
    config = instr.slice or ()
    if src is None:
        return None
    if len(config) != len(src):
        return (f"{instr.name}: slice needs one range per operand dimension", "slice")
    out = []
    for k, (s, n) in enumerate(zip(config, src, strict=True)):
        if s.stride <= 0 or not 0 <= s.start <= s.limit <= n:
            return (
                f"{instr.name}: slice [{s.start}:{s.limit}:{s.stride}] does not fit dimension "
                f"{k} of size {n}",
                "slice",
            )
        out.append(-(-(s.limit - s.start) // s.stride))
    return _expect(instr, out, "what the slice selects")


def _pad(instr: Instruction) -> Problem | None:
    src = _dims(instr.operands[0].shape)
    config = instr.padding or ()
    if src is None:
        return None
    if len(config) != len(src):
        return (f"{instr.name}: padding needs one entry per operand dimension", "padding")
    if _dims(instr.operands[1].shape) not in ((), None):
        return (f"{instr.name}: the padding value must be a scalar", None)
    out = []
    for p, n in zip(config, src, strict=True):
        if p.interior < 0:
            return (f"{instr.name}: interior padding cannot be negative", "padding")
        out.append(p.low + p.high + n + max(n - 1, 0) * p.interior)
    if any(n < 0 for n in out):
        return (f"{instr.name}: the padding leaves a negative size", "padding")
    return _expect(instr, out, "the padded operand")


def _concatenate(instr: Instruction) -> Problem | None:
    dims = instr.dimensions or ()
    shapes = [_dims(o.shape) for o in instr.operands]
    if len(dims) != 1 or any(s is None for s in shapes) or not shapes:
        return None
    axis = dims[0]
    first = shapes[0]
    if not 0 <= axis < len(first):
        return (f"{instr.name}: concatenate dimension {axis} is out of range", "dimensions")
    for k, s in enumerate(shapes):
        if len(s) != len(first) or any(
            a != b for d, (a, b) in enumerate(zip(s, first, strict=True)) if d != axis
        ):
            return (
                f"{instr.name}: operand {k} has shape {_show(s)}, which cannot be concatenated "
                f"with {_show(first)} along dimension {axis}",
                None,
            )
    out = list(first)
    out[axis] = sum(s[axis] for s in shapes)
    return _expect(instr, out, f"the operands joined along dimension {axis}")


def _output_dims(instr: Instruction) -> list[tuple[int, ...] | None]:
    return [_dims(s) for s in (instr.shape.tuple_shapes or (instr.shape,))]


def _reduce(instr: Instruction) -> Problem | None:
    n = len(instr.operands) // 2
    src = _dims(instr.operands[0].shape)
    dims = instr.dimensions or ()
    if src is None or len(instr.operands) % 2:
        return None
    if any(not 0 <= d < len(src) for d in dims) or len(set(dims)) != len(dims):
        return (
            f"{instr.name}: reduce dimensions {list(dims)} are not dimensions of {_show(src)}",
            "dimensions",
        )
    for init in instr.operands[n:]:
        if _dims(init.shape) not in ((), None):
            return (f"{instr.name}: the init value {init.name} must be a scalar", None)
    want = tuple(x for d, x in enumerate(src) if d not in dims)
    for out in _output_dims(instr):
        if out is not None and out != want:
            return (
                f"{instr.name}: result shape {_show(out)} does not match {_show(want)}, "
                f"{_show(src)} without the reduced dimensions",
                None,
            )
    return None


def _windowed_dims(instr: Instruction, src: Sequence[int]) -> list[int] | Problem:
    window = instr.window or ()
    if len(window) != len(src):
        return (f"{instr.name}: the window needs one entry per dimension", "window")
    return [
        _window_out(n, w.size, w.stride, w.pad_low, w.pad_high, w.base_dilation, w.window_dilation)
        for n, w in zip(src, window, strict=True)
    ]


def _reduce_window(instr: Instruction) -> Problem | None:
    src = _dims(instr.operands[0].shape)
    if src is None:
        return None
    want = _windowed_dims(instr, src)
    if isinstance(want, tuple):
        return want
    for out in _output_dims(instr):
        if out is not None and tuple(out) != tuple(want):
            return (
                f"{instr.name}: result shape {_show(out)} does not match {_show(want)}, what "
                "the window gives",
                None,
            )
    return None


def _select_and_scatter(instr: Instruction) -> Problem | None:
    operand, source = _dims(instr.operands[0].shape), _dims(instr.operands[1].shape)
    if operand is None or source is None:
        return None
    want = _windowed_dims(instr, operand)
    if isinstance(want, tuple):
        return want
    if tuple(source) != tuple(want):
        return (
            f"{instr.name}: the source has shape {_show(source)} but the window over the "
            f"operand gives {_show(want)}",
            None,
        )
    return _expect(instr, operand, "the operand's shape")


def _convolution(instr: Instruction) -> Problem | None:
    lhs, rhs = _dims(instr.operands[0].shape), _dims(instr.operands[1].shape)
    dn = instr.convolution_dimension_numbers
    if lhs is None or rhs is None or dn is None:
        return None
    if len(lhs) != len(dn.input_spatial) + 2 or len(rhs) != len(dn.kernel_spatial) + 2:
        return (f"{instr.name}: dim_labels do not match the operands' ranks", "dim_labels")
    spatial = [lhs[d] for d in dn.input_spatial]
    window = _windowed_dims(instr, spatial)
    if isinstance(window, tuple):
        return window
    out = [0] * (len(dn.output_spatial) + 2)
    out[dn.output_batch] = lhs[dn.input_batch] // max(instr.batch_group_count, 1)
    out[dn.output_feature] = rhs[dn.kernel_output_feature]
    for k, d in enumerate(dn.output_spatial):
        out[d] = window[k]
    return _expect(instr, out, "what the convolution's window and dim_labels give")


def _dot(instr: Instruction) -> Problem | None:
    lhs, rhs = _dims(instr.operands[0].shape), _dims(instr.operands[1].shape)
    if lhs is None or rhs is None:
        return None
    dn = instr.dot_dimension_numbers
    pairs = (
        (dn.lhs_batch, dn.rhs_batch, "batch"),
        (dn.lhs_contracting, dn.rhs_contracting, "contracting"),
    )
    for a, b, what in pairs:
        if len(a) != len(b) or any(
            not (0 <= x < len(lhs) and 0 <= y < len(rhs)) or lhs[x] != rhs[y]
            for x, y in zip(a, b, strict=False)
        ):
            return (f"{instr.name}: the {what} dimensions of the operands do not match", None)
    used_l, used_r = set(dn.lhs_batch + dn.lhs_contracting), set(dn.rhs_batch + dn.rhs_contracting)
    out = [lhs[d] for d in dn.lhs_batch]
    out += [n for d, n in enumerate(lhs) if d not in used_l]
    out += [n for d, n in enumerate(rhs) if d not in used_r]
    return _expect(instr, out, "batch, then the free dimensions of both operands")


def _gather(instr: Instruction) -> Problem | None:
    operand, indices = _dims(instr.operands[0].shape), _dims(instr.operands[1].shape)
    sizes = instr.gather_slice_sizes
    if operand is None or indices is None or sizes is None:
        return None
    dn = instr.gather_dimension_numbers
    if len(sizes) != len(operand) or any(
        s > n or s < 0 for s, n in zip(sizes, operand, strict=True)
    ):
        return (f"{instr.name}: slice_sizes do not fit the operand {_show(operand)}", "slice_sizes")
    batch = [n for d, n in enumerate(indices) if d != dn.index_vector_dim]
    offsets = [
        n
        for d, n in enumerate(sizes)
        if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims
    ]
    rank = len(batch) + len(offsets)
    if len(dn.offset_dims) != len(offsets) or any(not 0 <= d < rank for d in dn.offset_dims):
        return (f"{instr.name}: offset_dims do not match the slice sizes", "offset_dims")
    out: list[int] = [0] * rank
    offset_positions = sorted(dn.offset_dims)
    b, o = iter(batch), iter(offsets)
    for d in range(rank):
        out[d] = next(o) if d in offset_positions else next(b)
    return _expect(instr, out, "the index batch and the slice sizes")


def _dynamic_slice(instr: Instruction) -> Problem | None:
    src = _dims(instr.operands[0].shape)
    sizes = instr.dynamic_slice_sizes
    if src is None or sizes is None:
        return None
    if len(sizes) != len(src) or any(s > n or s < 0 for s, n in zip(sizes, src, strict=True)):
        return (
            f"{instr.name}: dynamic_slice_sizes {list(sizes)} do not fit the operand {_show(src)}",
            "dynamic_slice_sizes",
        )
    starts = instr.operands[1:]
    if not (len(starts) == len(src) or (len(starts) == 1 and len(starts[0].shape.dims) == 1)):
        return (f"{instr.name}: needs one start index per operand dimension", None)
    return _expect(instr, sizes, "dynamic_slice_sizes")


def _dynamic_update_slice(instr: Instruction) -> Problem | None:
    src, update = _dims(instr.operands[0].shape), _dims(instr.operands[1].shape)
    if src is None or update is None:
        return None
    if len(update) != len(src) or any(u > n for u, n in zip(update, src, strict=True)):
        return (f"{instr.name}: the update {_show(update)} does not fit {_show(src)}", None)
    return _expect(instr, src, "the operand's shape")


def _reverse(instr: Instruction) -> Problem | None:
    src = _dims(instr.operands[0].shape)
    if src is None:
        return None
    if any(not 0 <= d < len(src) for d in instr.dimensions or ()):
        return (f"{instr.name}: reverse dimensions are out of range", "dimensions")
    return _expect(instr, src, "the operand's shape")


def _in_place(instr: Instruction) -> Problem | None:
    """The in-place collective-permute, ``(input, output, input_starts, output_starts)``: the
    result is the output buffer, operand 1 (XLA's ``CollectivePermuteInPlaceUpdate`` tests)."""
    out = _dims(instr.operands[1].shape)
    return None if out is None else _expect(instr, out, "the output buffer's shape (operand 1)")


def _conditional(instr: Instruction) -> Problem | None:
    """A pred[] selector takes true/false computations, an s32[] one branch computations."""
    selector, keys = instr.operands[0].shape, instr.attributes.keys()
    if not selector.is_array or selector.dims or selector.element_type not in ("pred", "s32"):
        return (f"{instr.name}: the first operand must be a scalar of PRED or S32", None)
    if selector.element_type == "pred" and not {"true_computation", "false_computation"} <= keys:
        return (f"{instr.name}: a PRED selector needs true_computation and false_computation", None)
    if selector.element_type == "s32" and "branch_computations" not in keys:
        return (f"{instr.name}: an S32 selector needs branch_computations", None)
    return None


def _iota(instr: Instruction) -> Problem | None:
    out = _dims(instr.shape)
    d = instr.iota_dimension
    if out is None or d is None or 0 <= d < max(len(out), 1):
        return None
    return (f"{instr.name}: iota_dimension {d} is out of range", "iota_dimension")


def _get_tuple_element(instr: Instruction) -> Problem | None:
    shape = instr.operands[0].shape
    index = instr.tuple_index
    if not shape.is_tuple or index is None:
        return None
    if not 0 <= index < len(shape.tuple_shapes or ()):
        return (f"{instr.name}: index {index} is past the tuple's end", "index")
    element = (shape.tuple_shapes or ())[index]
    want, got = _dims(element), _dims(instr.shape)
    if want is not None and got is not None and want != got:
        return _expect(instr, want, f"element {index} of the tuple")
    return None


def _called(instr: Instruction, key: str) -> Computation | None:
    try:
        found = instr.called_computations.get(key) or []
    except HloidxError:
        return None
    return found[0] if found else None


def _call_like(instr: Instruction) -> Problem | None:
    comp = _called(instr, "calls") or _called(instr, "to_apply")
    if comp is None:
        return None
    params = {p.parameter_number: p for p in comp.parameters}
    if len(params) != len(instr.operands):
        return (
            f"{instr.name}: {comp.name} takes {len(params)} parameters but "
            f"{len(instr.operands)} operands are given",
            None,
        )
    for k, operand in enumerate(instr.operands):
        p = params.get(k)
        a, b = _dims(operand.shape), _dims(p.shape) if p is not None else None
        if a is not None and b is not None and a != b:
            return (
                f"{instr.name}: operand {k} has shape {_show(a)} but parameter {k} of "
                f"{comp.name} is {_show(b)}",
                None,
            )
    root = comp.root
    if root is not None:
        want = _dims(root.shape)
        if want is not None:
            return _expect(instr, want, f"the root of {comp.name}")
    return None


def _same_as_operand(instr: Instruction) -> Problem | None:
    src = _dims(instr.operands[0].shape)
    return _expect(instr, src, "the operand's shape") if src is not None else None


_GROUPS = re.compile(r"\{([\d,]*)\}")


def _group_size(instr: Instruction) -> int | None:
    text = instr.attributes.get("replica_groups", "").replace(" ", "")
    iota = re.match(r"\[(\d+),(\d+)\]<=", text)
    if iota:
        return int(iota.group(2))
    sizes = {len([x for x in g.split(",") if x]) for g in _GROUPS.findall(text) if g}
    return sizes.pop() if len(sizes) == 1 else None


def _all_gather(instr: Instruction) -> Problem | None:
    dims = instr.dimensions or ()
    src = _dims(instr.operands[0].shape)
    out = _output_dims(instr)[-1]
    count = _group_size(instr)
    if len(dims) != 1 or src is None or out is None or count is None or len(instr.operands) != 1:
        return None
    want = list(src)
    if not 0 <= dims[0] < len(src):
        return (f"{instr.name}: all-gather dimension {dims[0]} is out of range", "dimensions")
    want[dims[0]] *= count
    if tuple(out) != tuple(want):
        return (
            f"{instr.name}: result shape {_show(out)} does not match {_show(want)}, the operand "
            f"gathered from {count} replicas",
            None,
        )
    return None


RULES: dict[str, Callable[[Instruction], Problem | None]] = {
    **dict.fromkeys(_SAME_SHAPE | _SCALAR_OPERANDS_ALLOWED, _elementwise),
    "broadcast": _broadcast,
    "reshape": _reshape,
    "bitcast": _reshape,
    "transpose": _transpose,
    "slice": _slice,
    "pad": _pad,
    "concatenate": _concatenate,
    "reduce": _reduce,
    "reduce-window": _reduce_window,
    "select-and-scatter": _select_and_scatter,
    "convolution": _convolution,
    "dot": _dot,
    "gather": _gather,
    "dynamic-slice": _dynamic_slice,
    "dynamic-update-slice": _dynamic_update_slice,
    "reverse": _reverse,
    "iota": _iota,
    "get-tuple-element": _get_tuple_element,
    "fusion": _call_like,
    "call": _call_like,
    "all-gather": _all_gather,
    "all-gather-start": _all_gather,
    "all-reduce": _same_as_operand,
    "conditional": _conditional,
    "infeed": lambda i: (
        None if i.shape.is_tuple else (f"{i.name}: infeed needs a tuple shape", None)
    ),
    "collective-permute": lambda i: _same_as_operand(i) if len(i.operands) < 4 else _in_place(i),
    "sort": lambda i: _same_as_operand(i) if len(i.operands) == 1 else None,
}
