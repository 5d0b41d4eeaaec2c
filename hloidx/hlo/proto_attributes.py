"""The attributes of one instruction of an ``HloInstructionProto`` as HLO text, per opcode, in
the order XLA's printer writes them (``xla/hlo/ir/hlo_instruction.cc``,
``hlo_instructions.cc``): first what the opcode carries (``dimensions=``, ``window=``,
``channel_id=``, ...), then the called computations, sharding, frontend attributes, control
predecessors, and last ``backend_config``.

Duck-typed over the messages of :mod:`hloidx.protos.hlo_pb2` (nothing here imports
protobuf)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .proto_compare import compare_attributes
from .proto_values import replica_groups_text, shape_text, sharding_text

__all__ = ["Context", "extra_attributes", "frontend_attributes_text", "lexes_as_dict"]


class Context:
    """What an instruction's attributes refer to: computation names by id, and the
    instructions of the instruction's computation by id (for an operand's shape)."""

    def __init__(self, computation_names: dict[int, str]) -> None:
        self.computation_names = computation_names
        self.instructions: dict[int, Any] = {}

    def operand_shape(self, ins: Any, index: int = 0) -> Any | None:
        if len(ins.operand_ids) <= index:
            return None
        operand = self.instructions.get(ins.operand_ids[index])
        return None if operand is None else operand.shape

    def name(self, computation_id: int) -> str:
        found = self.computation_names.get(computation_id)
        if found is None:
            raise ValueError(f"calls computation id {computation_id}, which the module lacks")
        return found


def _ints(values: Any) -> str:
    return "{" + ",".join(str(v) for v in values) + "}"


def _quoted(text: str | bytes) -> str:
    """A string attribute as XLA's CEscape writes it."""
    raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    out = []
    for byte in raw:
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def lexes_as_dict(text: str) -> bool:
    """Whether XLA's printer writes a value as it is (a ``{...}`` dictionary whose braces
    balance outside its strings) rather than as a quoted string."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return False
    depth = 0
    in_string = escaped = False
    for at, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0 and at != len(text) - 1:
                return False
    return depth == 0 and not in_string


def frontend_attributes_text(attributes: Any) -> str:
    """``{a="x",b={k=1}}``: sorted by key; dictionaries as they are, other values quoted."""
    items = sorted(attributes.items())
    return (
        "{"
        + ",".join(f"{k}={v}" if lexes_as_dict(v) else f"{k}={_quoted(v)}" for k, v in items)
        + "}"
    )


def _window(window: Any) -> str:
    dims = window.dimensions
    parts = ["size=" + "x".join(str(d.size) for d in dims)]
    if any(d.stride != 1 for d in dims):
        parts.append("stride=" + "x".join(str(d.stride) for d in dims))
    if any(d.padding_low or d.padding_high for d in dims):
        parts.append("pad=" + "x".join(f"{d.padding_low}_{d.padding_high}" for d in dims))
    if any(d.base_dilation != 1 for d in dims):
        parts.append("lhs_dilate=" + "x".join(str(d.base_dilation) for d in dims))
    if any(d.window_dilation != 1 for d in dims):
        parts.append("rhs_dilate=" + "x".join(str(d.window_dilation) for d in dims))
    if any(d.window_reversal for d in dims):
        parts.append("rhs_reversal=" + "x".join(str(int(d.window_reversal)) for d in dims))
    return "{" + " ".join(parts) + "}"


def _spatial(i: int) -> str:
    return str(i) if i < 10 else chr(ord("a") + i - 10)


def _dim_labels(dn: Any) -> str:
    def labels(batch: int, feature: int, spatial: Any, batch_c: str, feature_c: str) -> str:
        rank = 2 + len(spatial)
        out = ["?"] * rank
        if batch < rank:
            out[batch] = batch_c
        if feature < rank:
            out[feature] = feature_c
        for i, d in enumerate(spatial):
            if d < rank:
                out[d] = _spatial(i)
        return "".join(out)

    lhs = labels(
        dn.input_batch_dimension, dn.input_feature_dimension, dn.input_spatial_dimensions, "b", "f"
    )
    rhs = labels(
        dn.kernel_input_feature_dimension,
        dn.kernel_output_feature_dimension,
        dn.kernel_spatial_dimensions,
        "i",
        "o",
    )
    out = labels(
        dn.output_batch_dimension,
        dn.output_feature_dimension,
        dn.output_spatial_dimensions,
        "b",
        "f",
    )
    return f"{lhs}_{rhs}->{out}"


_PRECISION = {0: "default", 1: "high", 2: "highest"}
_ALGORITHMS = {
    1: "dot_any_f8_any_f8_f32", 2: "dot_any_f8_any_f8_f32_fast_accum", 3: "dot_f16_f16_f16",
    4: "dot_f16_f16_f32", 5: "dot_bf16_bf16_bf16", 6: "dot_bf16_bf16_f32",
    7: "dot_bf16_bf16_f32_x3", 8: "dot_bf16_bf16_f32_x6", 9: "dot_tf32_tf32_f32",
    10: "dot_tf32_tf32_f32_x3", 11: "dot_f32_f32_f32", 12: "dot_f64_f64_f64",
    13: "dot_bf16_bf16_f32_x9",
}  # fmt: skip


def _precision(ins: Any, out: list[str]) -> None:
    config = ins.precision_config
    if any(p != 0 for p in config.operand_precision):
        out.append(
            "operand_precision={"
            + ",".join(_PRECISION.get(p, "default") for p in config.operand_precision)
            + "}"
        )
    if config.algorithm:
        out.append("algorithm=" + _ALGORITHMS.get(config.algorithm, str(config.algorithm)))


def _dot_numbers(dn: Any, out: list[str]) -> None:
    if dn.lhs_batch_dimensions:
        out.append("lhs_batch_dims=" + _ints(dn.lhs_batch_dimensions))
    out.append("lhs_contracting_dims=" + _ints(dn.lhs_contracting_dimensions))
    if dn.rhs_batch_dimensions:
        out.append("rhs_batch_dims=" + _ints(dn.rhs_batch_dimensions))
    out.append("rhs_contracting_dims=" + _ints(dn.rhs_contracting_dimensions))


def _aliasing(ins: Any) -> str:
    items = [
        f"{_ints(a.output_shape_index)}: ({a.operand_index}, {_ints(a.operand_shape_index)})"
        for a in ins.output_operand_aliasing
    ]
    return "{" + ", ".join(items) + "}"


def _channel(ins: Any, out: list[str]) -> None:
    if ins.channel_id > 0:
        out.append(f"channel_id={ins.channel_id}")


def _collective(ins: Any, out: list[str]) -> None:
    _channel(ins, out)
    device_list = ins.collective_device_list if ins.HasField("collective_device_list") else None
    iota = ins.iota_collective_device_list if ins.HasField("iota_collective_device_list") else None
    out.append("replica_groups=" + replica_groups_text(ins.replica_groups, device_list, iota))
    if ins.constrain_layout:
        out.append("constrain_layout=true")


def _all_reduce(ins: Any, out: list[str], ctx: Context) -> None:
    _collective(ins, out)
    if ins.use_global_device_ids:
        out.append("use_global_device_ids=true")


def _all_gather(ins: Any, out: list[str], ctx: Context) -> None:
    _collective(ins, out)
    out.append("dimensions=" + _ints(ins.dimensions))
    if ins.use_global_device_ids:
        out.append("use_global_device_ids=true")


def _reduce_scatter(ins: Any, out: list[str], ctx: Context) -> None:
    _all_reduce(ins, out, ctx)
    out.append("dimensions=" + _ints(ins.dimensions))


def _all_to_all(ins: Any, out: list[str], ctx: Context) -> None:
    _collective(ins, out)
    if ins.dimensions:
        out.append("dimensions=" + _ints(ins.dimensions))


def _collective_permute(ins: Any, out: list[str], ctx: Context) -> None:
    _channel(ins, out)
    pairs = ",".join(f"{{{p.source},{p.target}}}" for p in ins.source_target_pairs)
    out.append("source_target_pairs={" + pairs + "}")
    if ins.dynamic_slice_sizes:
        out.append("slice_sizes={" + ",".join(f"{{{d}}}" for d in ins.dynamic_slice_sizes) + "}")


def _send_recv(ins: Any, out: list[str], ctx: Context) -> None:
    _channel(ins, out)
    if ins.is_host_transfer:
        out.append("is_host_transfer=true")


def _dimensions(ins: Any, out: list[str], ctx: Context) -> None:
    out.append("dimensions=" + _ints(ins.dimensions))


def _sort(ins: Any, out: list[str], ctx: Context) -> None:
    out.append("dimensions=" + _ints(ins.dimensions))
    if ins.is_stable:
        out.append("is_stable=true")


def _slice(ins: Any, out: list[str], ctx: Context) -> None:
    strided = any(s.stride != 1 for s in ins.slice_dimensions)
    parts = []
    for s in ins.slice_dimensions:
        parts.append(f"[{s.start}:{s.limit}" + (f":{s.stride}]" if strided else "]"))
    out.append("slice={" + ", ".join(parts) + "}")


def _pad(ins: Any, out: list[str], ctx: Context) -> None:
    dims = ins.padding_config.dimensions
    interior = any(d.interior_padding for d in dims)
    out.append(
        "padding="
        + "x".join(
            f"{d.edge_padding_low}_{d.edge_padding_high}"
            + (f"_{d.interior_padding}" if interior else "")
            for d in dims
        )
    )


def _dot(ins: Any, out: list[str], ctx: Context) -> None:
    _dot_numbers(ins.dot_dimension_numbers, out)
    _precision(ins, out)


def _ragged_dot(ins: Any, out: list[str], ctx: Context) -> None:
    rd = ins.ragged_dot_dimension_numbers
    _dot_numbers(rd.dot_dimension_numbers, out)
    out.append("lhs_ragged_dims=" + _ints(rd.lhs_ragged_dimensions))
    if rd.rhs_group_dimensions:
        out.append("rhs_group_dims=" + _ints(rd.rhs_group_dimensions))
    _precision(ins, out)


def _convolution(ins: Any, out: list[str], ctx: Context) -> None:
    if ins.HasField("window"):
        out.append("window=" + _window(ins.window))
    out.append("dim_labels=" + _dim_labels(ins.convolution_dimension_numbers))
    if ins.feature_group_count not in (0, 1):
        out.append(f"feature_group_count={ins.feature_group_count}")
    if ins.batch_group_count not in (0, 1):
        out.append(f"batch_group_count={ins.batch_group_count}")
    _precision(ins, out)


def _window_only(ins: Any, out: list[str], ctx: Context) -> None:
    out.append("window=" + _window(ins.window))


def _gather(ins: Any, out: list[str], ctx: Context) -> None:
    g = ins.gather_dimension_numbers
    out.append("offset_dims=" + _ints(g.offset_dims))
    out.append("collapsed_slice_dims=" + _ints(g.collapsed_slice_dims))
    out.append("start_index_map=" + _ints(g.start_index_map))
    if g.operand_batching_dims:
        out.append("operand_batching_dims=" + _ints(g.operand_batching_dims))
    if g.start_indices_batching_dims:
        out.append("start_indices_batching_dims=" + _ints(g.start_indices_batching_dims))
    out.append(f"index_vector_dim={g.index_vector_dim}")
    out.append("slice_sizes=" + _ints(ins.gather_slice_sizes))
    if ins.indices_are_sorted:
        out.append("indices_are_sorted=true")


def _scatter(ins: Any, out: list[str], ctx: Context) -> None:
    s = ins.scatter_dimension_numbers
    out.append("update_window_dims=" + _ints(s.update_window_dims))
    out.append("inserted_window_dims=" + _ints(s.inserted_window_dims))
    out.append("scatter_dims_to_operand_dims=" + _ints(s.scatter_dims_to_operand_dims))
    if s.input_batching_dims:
        out.append("input_batching_dims=" + _ints(s.input_batching_dims))
    if s.scatter_indices_batching_dims:
        out.append("scatter_indices_batching_dims=" + _ints(s.scatter_indices_batching_dims))
    out.append(f"index_vector_dim={s.index_vector_dim}")
    if ins.indices_are_sorted:
        out.append("indices_are_sorted=true")
    if ins.unique_indices:
        out.append("unique_indices=true")


def _custom_call(ins: Any, out: list[str], ctx: Context) -> None:
    if ins.HasField("window"):
        out.append("window=" + _window(ins.window))
    if ins.HasField("convolution_dimension_numbers"):
        out.append("dim_labels=" + _dim_labels(ins.convolution_dimension_numbers))
    if ins.feature_group_count not in (0, 1):
        out.append(f"feature_group_count={ins.feature_group_count}")
    if ins.batch_group_count not in (0, 1):
        out.append(f"batch_group_count={ins.batch_group_count}")
    _precision(ins, out)
    out.append("custom_call_target=" + _quoted(ins.custom_call_target))
    if ins.constrain_layout:
        shapes = ", ".join(shape_text(s) for s in ins.operand_shapes_with_layout)
        out.append("operand_layout_constraints={" + shapes + "}")
    if ins.custom_call_has_side_effect:
        out.append("custom_call_has_side_effect=true")
    if ins.output_operand_aliasing:
        out.append("output_to_operand_aliasing=" + _aliasing(ins))
    schedule = {1: "SCHEDULE_LATEST", 2: "SCHEDULE_EARLIEST"}.get(ins.custom_call_schedule)
    if schedule:
        out.append("schedule=" + schedule)
    api = {
        0: "API_VERSION_UNSPECIFIED",
        2: "API_VERSION_STATUS_RETURNING",
        3: "API_VERSION_STATUS_RETURNING_UNIFIED",
        4: "API_VERSION_TYPED_FFI",
    }.get(ins.custom_call_api_version)
    if api:
        out.append("api_version=" + api)


def _fusion(ins: Any, out: list[str], ctx: Context) -> None:
    out.append(f"kind={ins.fusion_kind}")
    if ins.output_operand_aliasing:
        out.append("output_to_operand_aliasing=" + _aliasing(ins))


def _parameter(ins: Any, out: list[str], ctx: Context) -> None:
    if ins.HasField("parameter_replication"):
        flags = ins.parameter_replication.replicated_at_leaf_buffers
        out.append("parameter_replication={" + ",".join(str(bool(f)).lower() for f in flags) + "}")


def _simple(key: str, read: Callable[[Any], Any]) -> Callable[[Any, list[str], Context], None]:
    def add(ins: Any, out: list[str], ctx: Context) -> None:
        out.append(f"{key}={read(ins)}")

    return add


def _batch_norm(ins: Any, out: list[str], ctx: Context) -> None:
    out.append(f"epsilon={ins.epsilon:.9g}")
    out.append(f"feature_index={ins.feature_index}")


def _triangular_solve(ins: Any, out: list[str], ctx: Context) -> None:
    o = ins.triangular_solve_options
    for key in ("left_side", "lower", "unit_diagonal"):
        if getattr(o, key):
            out.append(f"{key}=true")
    names = {1: "NO_TRANSPOSE", 2: "TRANSPOSE", 3: "ADJOINT"}
    out.append("transpose_a=" + names.get(o.transpose_a, "NO_TRANSPOSE"))


def _cholesky(ins: Any, out: list[str], ctx: Context) -> None:
    if ins.cholesky_options.lower:
        out.append("lower=true")


def _infeed(ins: Any, out: list[str], ctx: Context) -> None:
    if ins.infeed_config:
        out.append("infeed_config=" + _quoted(ins.infeed_config))


def _outfeed(ins: Any, out: list[str], ctx: Context) -> None:
    out.append("outfeed_shape=" + shape_text(ins.outfeed_shape))
    if ins.outfeed_config:
        out.append("outfeed_config=" + _quoted(ins.outfeed_config))


def _top_k(ins: Any, out: list[str], ctx: Context) -> None:
    out.append(f"k={ins.k}")
    if ins.largest:
        out.append("largest=true")
    if ins.is_stable:
        # newer XLA (jaxlib 0.12) makes a top-k stable by default and prints it; older XLA
        # writes no such flag, so it is printed only where the proto sets it
        out.append("is_stable=true")


def _copy_start(ins: Any, out: list[str], ctx: Context) -> None:
    if ins.WhichOneof("optional_cross_program_prefetch_index"):
        out.append(f"cross_program_prefetch_index={ins.cross_program_prefetch_index}")


def _fft(ins: Any, out: list[str], ctx: Context) -> None:
    out.append("fft_type=" + {0: "FFT", 1: "IFFT", 2: "RFFT", 3: "IRFFT"}[ins.fft_type])
    out.append("fft_length=" + _ints(ins.fft_length))


_RNG = {1: "rng_uniform", 2: "rng_normal"}
_RNG_ALGORITHMS = {0: "rng_default", 1: "rng_three_fry", 2: "rng_philox"}

_BY_OPCODE: dict[str, Callable[[Any, list[str], Context], None]] = {
    "all-reduce": _all_reduce,
    "all-reduce-start": _all_reduce,
    "all-gather": _all_gather,
    "all-gather-start": _all_gather,
    "reduce-scatter": _reduce_scatter,
    "all-to-all": _all_to_all,
    "ragged-all-to-all": _collective,  # type: ignore[dict-item]
    "collective-broadcast": _collective,  # type: ignore[dict-item]
    "collective-permute": _collective_permute,
    "collective-permute-start": _collective_permute,
    "send": _send_recv,
    "send-done": _send_recv,
    "recv": _send_recv,
    "recv-done": _send_recv,
    "broadcast": _dimensions,
    "transpose": _dimensions,
    "reverse": _dimensions,
    "reduce": _dimensions,
    "concatenate": _dimensions,
    "map": _dimensions,
    "get-dimension-size": _dimensions,
    "set-dimension-size": _dimensions,
    "sort": _sort,
    "slice": _slice,
    "pad": _pad,
    "dot": _dot,
    "ragged-dot": _ragged_dot,
    "convolution": _convolution,
    "reduce-window": _window_only,
    "select-and-scatter": _window_only,
    "gather": _gather,
    "scatter": _scatter,
    "compare": compare_attributes,
    "custom-call": _custom_call,
    "fusion": _fusion,
    "parameter": _parameter,
    "get-tuple-element": _simple("index", lambda i: i.tuple_index),
    "iota": _simple("iota_dimension", lambda i: i.dimensions[0] if i.dimensions else 0),
    "dynamic-slice": _simple("dynamic_slice_sizes", lambda i: _ints(i.dynamic_slice_sizes)),
    "reduce-precision": lambda i, o, c: o.extend(
        [f"exponent_bits={i.exponent_bits}", f"mantissa_bits={i.mantissa_bits}"]
    ),
    "rng": _simple("distribution", lambda i: _RNG.get(i.distribution, "rng_invalid")),
    "rng-bit-generator": _simple("algorithm", lambda i: _RNG_ALGORITHMS[i.rng_algorithm]),
    "rng-get-and-update-state": _simple("delta", lambda i: i.delta),
    "batch-norm-training": _batch_norm,
    "batch-norm-inference": _batch_norm,
    "batch-norm-grad": _batch_norm,
    "triangular-solve": _triangular_solve,
    "cholesky": _cholesky,
    "infeed": _infeed,
    "outfeed": _outfeed,
    "topk": _top_k,
    "copy-start": _copy_start,
    "fft": _fft,
}

_TO_APPLY = {
    "map", "reduce-window", "reduce", "all-reduce", "all-reduce-start", "reduce-scatter",
    "scatter", "sort", "call", "topk",
}  # fmt: skip


def _called(ins: Any, opcode: str, ctx: Context, out: list[str]) -> None:
    called = [ctx.name(c) for c in ins.called_computation_ids]
    if not called:
        return
    if opcode == "while" and len(called) > 1:
        out.extend([f"condition={called[1]}", f"body={called[0]}"])
    elif opcode == "select-and-scatter" and len(called) > 1:
        out.extend([f"select={called[0]}", f"scatter={called[1]}"])
    elif opcode == "conditional":
        first = ctx.operand_shape(ins)
        if first is not None and first.element_type == 1 and len(called) == 2:
            out.extend([f"true_computation={called[0]}", f"false_computation={called[1]}"])
        else:
            out.append("branch_computations={" + ", ".join(called) + "}")
    elif opcode in _TO_APPLY and len(called) == 1:
        out.append(f"to_apply={called[0]}")
    elif opcode == "custom-call":
        out.append("called_computations={" + ", ".join(called) + "}")
    elif len(called) == 1:
        out.append(f"calls={called[0]}")
    else:
        out.append("calls={" + ", ".join(called) + "}")


def extra_attributes(
    ins: Any,
    ctx: Context,
    names: dict[int, str],
    wrapped: Any | None = None,
    async_thread: str = "",
) -> list[str]:
    """``key=value`` texts of an instruction's attributes. ``wrapped``: the instruction an
    ``async-start`` wraps, printed in its place (``reduce-scatter-start(...)``)."""
    out: list[str] = []
    if wrapped is not None:
        out.extend(_own_attributes(wrapped, wrapped.opcode, ctx))
        if async_thread and async_thread != "main":
            out.append(f"async_execution_thread={_quoted(async_thread)}")
    elif ins.opcode.startswith("async-"):
        _called(ins, ins.opcode, ctx, out)
        if ins.async_execution_thread and ins.async_execution_thread != "main":
            out.append(f"async_execution_thread={_quoted(ins.async_execution_thread)}")
    else:
        out.extend(_own_attributes(ins, ins.opcode, ctx))
    if ins.HasField("sharding"):
        out.append("sharding=" + sharding_text(ins.sharding))
    if ins.frontend_attributes.map:
        out.append("frontend_attributes=" + frontend_attributes_text(ins.frontend_attributes.map))
    # control predecessors are left out, as jaxlib's as_hlo_text() leaves them out
    if ins.is_composite:
        out.append("is_composite=true")
    config = ins.backend_config
    if config:
        text = config.decode("utf-8", "surrogateescape")
        if lexes_as_dict(text):
            out.append("backend_config=" + text)
        else:
            out.append("backend_config=" + _quoted(config))
    return out


def _own_attributes(ins: Any, opcode: str, ctx: Context) -> list[str]:
    out: list[str] = []
    rule = _BY_OPCODE.get(opcode)
    if rule is not None:
        rule(ins, out, ctx)
    _called(ins, opcode, ctx, out)
    return out
