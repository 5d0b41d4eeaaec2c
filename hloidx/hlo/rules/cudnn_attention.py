"""cuDNN's fused attention custom-calls, as XLA:GPU writes them: ``__cudnn$fmhaSoftmax``,
``__cudnn$fmhaScaleBiasSoftmax`` and their ``Dropout`` and ``Backward`` forms.

The ``cudnn_fmha_backend_config`` names each tensor's dimensions through dot dimension numbers
(XLA's cuDNN custom-call compiler reads them so): in the forward call Q is the left and K the
right operand of ``bmm1`` (batch dimensions batch then head, the contracted feature, the rest
the query or key position), V the right operand of ``bmm2`` (its contracted dimension the key
position, the rest its feature). The backward call names Q, K, V and dO as the right operands of
``bmm1_grad_gemm1`` (contracting the query position), ``bmm1_grad_gemm2`` (the key position),
``bmm2_grad_gemm2`` (V's feature) and ``bmm2_grad_gemm1`` (the query position); O has dO's
layout. Results are ``[B, H, Sq, D]`` (O, dQ), ``[B, Hk, Skv, D]`` (dK, dV), statistics
``[B, H, Sq]``, then a workspace.

Operands: Q, K, V, the bias (``ScaleBias`` forms), one sequence length per batch for Q and for
K/V (padding masks); backward: Q, K, V, statistics, dO, the bias, O, the sequence lengths.
Masks: none, causal (top left), padding and padding-causal (over-approximations). Paged,
ragged (``max_seg_per_batch > 1``), sliding-window and ALiBi calls, and calls with a score
modifier computation, stay UNDEFINED with the reason; so does the FP8 form (no rule).
"""

from __future__ import annotations

from ..ir import Instruction
from ..rule_registry import IndexingTable
from ._common import unsupported
from .attention import (
    KERNELS,
    Access,
    Attention,
    Kernel,
    Tensors,
    backward_reads,
    config_of,
    dims_of,
    forward_reads,
    kernel_input_to_output,
    kernel_output_to_input,
    outputs_of,
)
from .custom_calls import register_custom_call_rules

_FORWARD = (
    "__cudnn$fmhaSoftmax",
    "__cudnn$fmhaSoftmaxDropout",
    "__cudnn$fmhaScaleBiasSoftmax",
    "__cudnn$fmhaScaleBiasSoftmaxDropout",
)
_BACKWARD = tuple(f"{t}Backward" for t in _FORWARD)
#: CudnnfMHABackendConfig.MaskType: (padding, causal)
_MASKS = {"NO_MASK": (False, False), "PADDING": (True, False), "CAUSAL": (False, True)}
_MASKS["PADDING_CAUSAL"] = (True, True)
_MASK_NUMBERS = {0: "NO_MASK", 1: "PADDING", 2: "CAUSAL", 3: "PADDING_CAUSAL", 4: "ALIBI"}


def _numbers(instr: Instruction, fmha: dict, key: str) -> dict[str, list[int]]:
    raw = fmha.get(key)
    if not isinstance(raw, dict):
        raise unsupported(instr, f"its backend_config has no {key}")
    out = {}
    for part in ("lhs_contracting", "rhs_contracting", "lhs_batch", "rhs_batch"):
        try:
            out[part] = [int(x) for x in raw.get(f"{part}_dimensions", [])]
        except (TypeError, ValueError):
            raise unsupported(instr, f"{key} is not a list of dimensions") from None
    return out


def _access(
    instr: Instruction,
    rank: int,
    batch: list[int],
    contracting: list[int],
    names: tuple[str, str, str, str],
) -> Access:
    """An operand of a bmm as ``(batch, head, contracted, free)`` symbols in its own order."""
    if rank != 4 or len(batch) != 2 or len(contracting) != 1:
        raise unsupported(instr, "attention operands must be rank 4 with two batch dimensions")
    free = [d for d in range(4) if d not in (*batch, *contracting)]
    if len(free) != 1:
        raise unsupported(instr, "attention operands need one free dimension")
    out = [""] * 4
    out[batch[0]], out[batch[1]], out[contracting[0]], out[free[0]] = names
    return tuple(out)


def _kernel(instr: Instruction) -> Kernel:
    target = instr.attributes.get("custom_call_target", "").strip().strip('"')
    backward = target in _BACKWARD
    has_bias = "ScaleBias" in target
    dropout_form = "Dropout" in target
    fmha = config_of(instr).get("cudnn_fmha_backend_config")
    if not isinstance(fmha, dict):
        raise unsupported(instr, "its backend_config has no cudnn_fmha_backend_config")
    mask = fmha.get("mask_type", "NO_MASK")
    mask = _MASK_NUMBERS.get(mask, mask) if isinstance(mask, int) else mask
    if mask not in _MASKS:
        raise unsupported(instr, f"mask_type {mask} is not modelled")
    padding, causal = _MASKS[mask]
    if int(fmha.get("sliding_window_length", 0) or 0) > 0:
        raise unsupported(instr, "a sliding window is not modelled")
    if int(fmha.get("max_seg_per_batch", 0) or 0) > 1 or fmha.get("is_paged_attention"):
        raise unsupported(instr, "ragged or paged attention is not modelled")
    if instr.called_computations or "called_computations" in instr.attributes:
        raise unsupported(instr, "a score modifier computation is not modelled")
    shapes = [dims_of(o.shape) for o in instr.operands]
    if len(shapes) < 3:
        raise unsupported(instr, "fused attention needs Q, K and V")
    if backward:
        q = _access(
            instr, len(shapes[0]), *_rhs(instr, fmha, "bmm1_grad_gemm1"), ("b", "h", "s", "a")
        )
        k = _access(
            instr, len(shapes[1]), *_rhs(instr, fmha, "bmm1_grad_gemm2"), ("b", "hk", "t", "a")
        )
        v = _access(
            instr, len(shapes[2]), *_rhs(instr, fmha, "bmm2_grad_gemm2"), ("b", "hk", "e", "t")
        )
    else:
        bmm1 = _numbers(instr, fmha, "bmm1_dot_dimension_numbers")
        q = _access(
            instr, len(shapes[0]), bmm1["lhs_batch"], bmm1["lhs_contracting"], ("b", "h", "a", "s")
        )
        k = _access(instr, len(shapes[1]), *_rhs(instr, fmha, "bmm1"), ("b", "hk", "a", "t"))
        v = _access(instr, len(shapes[2]), *_rhs(instr, fmha, "bmm2"), ("b", "hk", "t", "e"))
    size: dict[str, int] = {}
    for access, dims in ((q, shapes[0]), (k, shapes[1]), (v, shapes[2])):
        for sym, n in zip(access, dims, strict=True):
            if size.setdefault(sym, n) != n:
                raise unsupported(instr, f"Q, K and V disagree on the size of {sym}")
    heads, kv_heads = size["h"], size["hk"]
    if kv_heads <= 0 or heads % kv_heads:
        raise unsupported(instr, "the query heads are no multiple of the key/value heads")
    batch, sq, skv = size["b"], size["s"], size["t"]
    dropout = dropout_form or float(fmha.get("dropout_rate", 0) or 0) > 0
    att = Attention(
        batch,
        sq,
        skv,
        heads,
        kv_heads,
        size["a"],
        size["e"],
        None,
        0 if causal else None,
        padding or dropout,
    )
    at = 5 if backward else 3
    bias = None
    if has_bias:
        bias_dims = shapes[at] if at < len(shapes) else ()
        bias = (at, _broadcast(instr, bias_dims, batch, heads, sq, skv))
        at += 1
    outputs = outputs_of(instr)
    if backward:
        do = _access(
            instr, len(shapes[4]), *_rhs(instr, fmha, "bmm2_grad_gemm1"), ("b", "h", "s", "e")
        )
        if shapes[3] != (batch, heads, sq) or at >= len(shapes) or shapes[at] != shapes[4]:
            raise unsupported(instr, "the statistics, O or dO do not fit Q, K and V")
        o_at, at = at, at + 1
    seqlens = ()
    if padding:
        if shapes[at : at + 2] != [(batch,), (batch,)]:
            raise unsupported(instr, "a padding mask needs one sequence length per batch")
        seqlens = ((at, "batch"), (at + 1, "batch"))
        at += 2
    if at != len(shapes):
        raise unsupported(instr, "it has operands this rule does not know")
    tensors = Tensors(q=(0, q), k=(1, k), v=(2, v), bias=bias, seqlens=seqlens)
    o_out: Access = ("b", "h", "s", "e")
    if not backward:
        expected = [(batch, heads, sq, size["e"])]
        stats = len(outputs) == 3
        if stats:
            expected.append((batch, heads, sq))
        if [dims_of(s) for s in outputs[:-1]] != expected or len(outputs) not in (2, 3):
            raise unsupported(instr, "its results are not O, (statistics,) workspace")
        o_reads, stat_reads = forward_reads(
            tensors, o_out, ("b", "h", "s") if stats else None, dropout
        )
        rows = [(o_out, o_reads)] + ([(("b", "h", "s"), stat_reads)] if stats else [])
        return Kernel(att, (*rows, ((), {})))
    tensors = Tensors(
        q=(0, q),
        k=(1, k),
        v=(2, v),
        bias=bias,
        seqlens=seqlens,
        stats=(3, ("b", "h", "s")),
        o=(o_at, do),
        do=(4, do),
    )
    dq_out, dk_out, dv_out = ("b", "h", "s", "a"), ("b", "hk", "t", "a"), ("b", "hk", "t", "e")
    expected = [
        (batch, heads, sq, size["a"]),
        (batch, kv_heads, skv, size["a"]),
        (batch, kv_heads, skv, size["e"]),
    ]
    if len(outputs) not in (4, 5) or [dims_of(s) for s in outputs[:3]] != expected:
        raise unsupported(instr, "its results are not dQ, dK, dV, (dBias,) workspace")
    dbias_out = None
    if len(outputs) == 5:
        dbias_out = _broadcast(instr, dims_of(outputs[3]), batch, heads, sq, skv)
        if bias is None:
            raise unsupported(instr, "a bias gradient without a bias")
    reads = backward_reads(tensors, dq_out, dk_out, dv_out, dbias_out, dropout)
    rows = [(dq_out, reads[0]), (dk_out, reads[1]), (dv_out, reads[2])]
    if dbias_out is not None:
        rows.append((dbias_out, reads[3]))
    return Kernel(att, (*rows, ((), {})))


def _rhs(instr: Instruction, fmha: dict, bmm: str) -> tuple[list[int], list[int]]:
    key = bmm if bmm.endswith("dimension_numbers") else f"{bmm}_dot_dimension_numbers"
    numbers = _numbers(instr, fmha, key)
    return numbers["rhs_batch"], numbers["rhs_contracting"]


def _broadcast(
    instr: Instruction, dims: tuple[int, ...], batch: int, heads: int, sq: int, skv: int
) -> Access:
    """A bias (or its gradient) ``[1|B, 1|H, Sq, Skv]``."""
    if len(dims) != 4 or dims[0] not in (1, batch) or dims[1] not in (1, heads):
        raise unsupported(instr, f"a bias of dimensions {list(dims)} is not modelled")
    if dims[2:] != (sq, skv):
        raise unsupported(instr, f"a bias of dimensions {list(dims)} is not modelled")
    return ("b" if dims[0] > 1 else "0", "h" if dims[1] > 1 else "0", "s", "t")


def fmha_output_to_input(instr: Instruction) -> IndexingTable:
    return kernel_output_to_input(instr, _kernel(instr))


def fmha_input_to_output(instr: Instruction) -> IndexingTable:
    return kernel_input_to_output(instr, _kernel(instr))


for _target in (*_FORWARD, *_BACKWARD):
    register_custom_call_rules(_target, fmha_output_to_input, fmha_input_to_output)
    KERNELS[_target] = _kernel


def attention_of(instr: Instruction) -> Attention:
    """The sizes and mask of a cuDNN fused attention call (raises ``unsupported`` as the
    indexing rule does when they cannot be read)."""
    return _kernel(instr).att
