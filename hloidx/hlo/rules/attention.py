"""Fused attention custom-calls: TransformerEngine's ``te_fused_attn_forward_ffi`` and
``te_fused_attn_backward_ffi``.

The forward kernel computes, per batch ``b`` and query head ``h``, ``S = scale * Q K^T (+
bias)``, masks it, ``P = softmax(S)`` and ``O = P V``; it also returns the softmax statistics
(one value per query row, ``f32[B,H,Sq,1]``) and a random-number state made from the seed. The
backward kernel reads Q, K, V, bias, the statistics, the rng state, O and dO and returns dQ, dK,
dV and dBias:

* ``dV[t] = sum_s P[s,t] dO[s]`` (P from Q, K, bias and the statistics; neither V nor O),
* ``dP[s,t] = dO[s] . V[t]``, ``D[s] = dO[s] . O[s]``, ``dS = P (dP - D)``,
* ``dQ[s] = sum_t dS[s,t] K[t]``, ``dK[t] = sum_s dS[s,t] Q[s]``, ``dBias[s,t] = sum dS[s,t]``.

Every read goes through one score ``S[b,h,s,t]`` of a pair the mask allows, so each map is a
projection of one relation over the logical indices ``b`` (batch), ``s`` (query position),
``t`` (key position), ``h`` (query head), ``hk = h floordiv (heads / kv heads)`` (grouped-query
key/value head), ``a`` (Q/K feature) and ``e`` (V feature), with the mask a constraint on
``t - s``: causal (top left) ``t <= s``, bottom-right causal ``t <= s + Skv - Sq``, sliding
windows ``s - left <= t <= s + right``. A padding mask depends on run-time sequence lengths:
its maps are those of the mask without padding, marked over-approximations (so is dropout).

Modelled: layouts ``BSHD_BSHD_BSHD`` and ``SBHD_SBHD_SBHD`` (separate Q, K, V); every mask
type; no bias, ALiBi, or a ``[1|B, 1|H, Sq, Skv]`` bias. A packed or ragged (THD) layout, a
window with ``Sq != Skv``, or any shape that does not fit stays UNDEFINED with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ...maps.expr import Expr, dim, floordiv
from ...maps.indexing_map import IndexingMap
from ..ir import Instruction, Shape
from ..rule_registry import IndexingTable, OperandIndexing
from ._common import unsupported
from ._window_helpers import MapBuilder
from .custom_calls import register_custom_call_rules

FORWARD = "te_fused_attn_forward_ffi"
BACKWARD = "te_fused_attn_backward_ffi"

#: TransformerEngine's NVTE_QKV_Layout values we model: name and whether Q/K/V are SBHD
_LAYOUTS = {4: ("SBHD_SBHD_SBHD", True), 9: ("BSHD_BSHD_BSHD", False)}
#: NVTE_QKV_Layout names, for the reason a layout is not modelled
_LAYOUT_NAMES = [
    "SB3HD",
    "SBH3D",
    "SBHD_SB2HD",
    "SBHD_SBH2D",
    "SBHD_SBHD_SBHD",
    "BS3HD",
    "BSH3D",
    "BSHD_BS2HD",
    "BSHD_BSH2D",
    "BSHD_BSHD_BSHD",
    "T3HD",
    "TH3D",
    "THD_T2HD",
    "THD_TH2D",
    "THD_THD_THD",
    "SBHD_BSHD_BSHD",
    "BSHD_SBHD_SBHD",
    "THD_BSHD_BSHD",
    "THD_SBHD_SBHD",
]
#: NVTE_Mask_Type: (padding, causal, bottom-right aligned)
_MASKS = {
    0: (False, False, False),  # NO_MASK
    1: (True, False, False),  # PADDING
    2: (False, True, False),  # CAUSAL (top left)
    3: (True, True, False),  # PADDING_CAUSAL
    4: (False, True, True),  # CAUSAL_BOTTOM_RIGHT
    5: (True, True, True),  # PADDING_CAUSAL_BOTTOM_RIGHT
}
#: NVTE_Bias_Type: NO_BIAS, PRE_SCALE_BIAS, POST_SCALE_BIAS, ALIBI
_TENSOR_BIAS = (1, 2)
_NO_TENSOR_BIAS = (0, 3)

_VARS = ("b", "s", "t", "h", "hk", "a", "e")
_FAR = 2**40  # "no limit" for a bound of t - s


@dataclass(frozen=True)
class Attention:
    """The sizes and the mask of one fused attention call."""

    batch: int
    q_len: int
    kv_len: int
    heads: int
    kv_heads: int
    qk_dim: int
    v_dim: int
    #: t - s must lie in [lower, upper] (None: no limit on that side)
    lower: int | None = None
    upper: int | None = None
    #: the maps over-approximate (padding mask, dropout)
    approximate: bool = False

    @property
    def group(self) -> int:
        return self.heads // self.kv_heads

    @property
    def bounds(self) -> tuple[int, int]:
        lo = -_FAR if self.lower is None else self.lower
        hi = _FAR if self.upper is None else self.upper
        return lo, hi

    @property
    def masked(self) -> bool:
        lo, hi = self.bounds
        return lo > -(self.q_len - 1) or hi < self.kv_len - 1

    def needs_mask(self, used: set[str]) -> bool:
        """Whether a relation over the indices ``used`` must carry the mask's constraint: yes
        when it holds both positions; with one, only if some query row (key column) has no
        allowed partner, which the constraint then expresses."""
        if not self.masked:
            return False
        lo, hi = self.bounds
        if "s" in used and "t" in used:
            return True
        if "t" in used:  # every key column attended by some query?
            return not (lo <= hi and lo <= 0 and self.kv_len - 1 - hi <= self.q_len - 1)
        # every query row attends some key?
        return not (lo <= hi and hi >= 0 and self.q_len - 1 + lo <= self.kv_len - 1)

    def size(self, var: str) -> int:
        return {
            "b": self.batch,
            "s": self.q_len,
            "t": self.kv_len,
            "h": self.heads,
            "hk": self.kv_heads,
            "a": self.qk_dim,
            "e": self.v_dim,
        }[var]


#: An index pattern of a tensor: one symbol per dimension, a logical index (``b``, ``s``...),
#: ``*x`` for "every value of x" or ``0`` for a size-1 dimension.
Access = tuple[str, ...]


def project(
    att: Attention,
    source: Access,
    target: Access,
    source_dims: Sequence[int],
    symbols: list[str] | None = None,
):
    """The map from an index of the ``source`` tensor to the ``target`` elements related to it
    through a score the mask allows (a range variable for each index the source leaves free).
    ``symbols`` gets the logical index of each range variable in order (``hg``: the head within
    its key/value group), what ``--names roles`` names them by."""
    b = MapBuilder(source_dims)

    def fresh(var: str, size: int) -> Expr:
        before = len(b.ranges)
        made = b.new_range(size)
        if symbols is not None and len(b.ranges) > before:
            symbols.append(var)
        return made

    env: dict[str, Expr] = {}
    for p, sym in enumerate(source):
        if sym in _VARS:
            env[sym] = dim(p)
    need = {sym for sym in target if sym in _VARS}
    used = need | set(env) | {sym[1:] for sym in target if sym.startswith("*")}
    masked = att.needs_mask(used)
    if masked:
        need |= {"s", "t"}
    g = att.group
    if "hk" in need and "hk" not in env and "h" in env:
        env["hk"] = env["h"] if g == 1 else floordiv(env["h"], g)
    if "h" in need and "h" not in env:
        if "hk" in env:
            env["h"] = env["hk"] if g == 1 else env["hk"] * g + fresh("hg", g)
        else:
            env["h"] = fresh("h", att.heads)
            if "hk" in need:
                env["hk"] = env["h"] if g == 1 else floordiv(env["h"], g)
    for var in _VARS:
        if var in need and var not in env:
            env[var] = fresh(var, att.size(var))
    if masked:
        lo, hi = att.bounds
        b.constrain(env["t"] - env["s"], lo, hi)
    results: list[Expr | int] = []
    for sym in target:
        if sym == "0":
            results.append(0)
        elif sym.startswith("*"):
            results.append(fresh(sym[1:], att.size(sym[1:])))
        else:
            results.append(env[sym])
    return b.build(results)


# ---------------------------------------------------------------------------
# what each output reads
# ---------------------------------------------------------------------------

#: An operand an output reads: ``(output access, operand access)`` through the scores,
#: "whole" (every element, an over-approximation) or "seqlens" (cu_seqlens[b], [b + 1]).
Read = tuple[Access, Access] | str


@dataclass(frozen=True)
class Kernel:
    att: Attention
    #: per output: its index pattern and {operand: what it reads}
    outputs: tuple[tuple[Access, dict[int, Read]], ...]


def config_of(instr: Instruction) -> dict[str, object]:
    """The backend_config, as JSON or as the MLIR dictionary JAX writes
    (``{attn_heads = 32 : i64, deterministic = false, ...}``)."""
    raw = instr.attributes.get("backend_config", "").strip()
    if raw.startswith('"'):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise unsupported(instr, "its backend_config is not readable") from None
    try:
        config = json.loads(raw)
        if isinstance(config, dict):
            return config
    except json.JSONDecodeError:
        pass
    out: dict[str, object] = {}
    for key, value in re.findall(r"(\w+)\s*=\s*([^,{}]+)", raw):
        text = value.split(":")[0].strip()
        if text in ("true", "false"):
            out[key] = text == "true"
            continue
        try:
            out[key] = int(text)
        except ValueError:
            try:
                out[key] = float(text)
            except ValueError:
                out[key] = text
    return out


def _int(instr: Instruction, config: dict[str, object], key: str, default: int | None = None):
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise unsupported(instr, f"its backend_config has no integer {key}")
    return value


def dims_of(shape: Shape) -> tuple[int, ...]:
    return tuple(shape.dims) if shape.is_array else ()


def _is_empty(shape: Shape) -> bool:
    return shape.is_array and shape.num_elements() == 0


def outputs_of(instr: Instruction) -> list[Shape]:
    return list(instr.shape.tuple_shapes) if instr.shape.is_tuple else [instr.shape]


def _te_kernel(instr: Instruction) -> Kernel:
    target = instr.attributes.get("custom_call_target", "").strip().strip('"')
    backward = target == BACKWARD
    config = config_of(instr)
    layout = _int(instr, config, "qkv_layout")
    if layout not in _LAYOUTS:
        name = _LAYOUT_NAMES[layout] if 0 <= layout < len(_LAYOUT_NAMES) else str(layout)
        raise unsupported(instr, f"qkv_layout {name} is not modelled (only separate Q, K, V)")
    _, sbhd = _LAYOUTS[layout]
    mask = _int(instr, config, "mask_type")
    if mask not in _MASKS:
        raise unsupported(instr, f"mask_type {mask} is not modelled")
    padding, causal, bottom_right = _MASKS[mask]
    operands = [o.shape for o in instr.operands]
    outputs = outputs_of(instr)
    first_extra = 12 if backward else 9
    if len(operands) < first_extra or len(outputs) != (5 if backward else 4):
        raise unsupported(instr, "its operands or results are not TransformerEngine's")
    if any(not _is_empty(s) for s in operands[first_extra:]):
        raise unsupported(instr, "segment ids or positions are not modelled")
    q, k, v = (dims_of(s) for s in operands[:3])
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        raise unsupported(instr, "Q, K and V must be rank 4")
    pick = (lambda x: (x[1], x[0], x[2], x[3])) if sbhd else (lambda x: x)
    (bq, sq, hq, dq), (bk, skv, hk, dk), (bv, sv, hv, dv) = pick(q), pick(k), pick(v)
    heads = _int(instr, config, "attn_heads", hq)
    groups = _int(instr, config, "num_gqa_groups", hk)
    if not (
        bq == bk == bv
        and hq == heads
        and hk == hv == groups
        and groups > 0
        and heads % groups == 0
        and skv == sv
        and dq == dk
    ):
        raise unsupported(instr, "the shapes of Q, K and V do not fit attn_heads/num_gqa_groups")
    left = _int(instr, config, "window_size_left", -1)
    right = _int(instr, config, "window_size_right", -1)
    if left < -1 or right < -1:
        raise unsupported(instr, "negative window sizes other than -1 are not modelled")
    if (left >= 0 or right >= 0) and sq != skv:
        raise unsupported(instr, "a sliding window with Sq != Skv is not modelled")
    shift = skv - sq if bottom_right else 0
    upper = shift if causal else None
    if right >= 0:
        upper = right + shift if upper is None else min(upper, right + shift)
    lower = shift - left if left >= 0 else None
    dropout = float(config.get("dropout_probability", 0.0) or 0.0) > 0.0  # type: ignore[arg-type]
    att = Attention(bq, sq, skv, heads, groups, dq, dv, lower, upper, padding or dropout)

    qf = ("s", "b") if sbhd else ("b", "s")
    kf = ("t", "b") if sbhd else ("b", "t")
    bias_type = _int(instr, config, "bias_type", 0)
    bias = operands[3]
    if bias_type in _NO_TENSOR_BIAS:
        if not _is_empty(bias):
            raise unsupported(instr, "a bias tensor with bias_type NO_BIAS/ALIBI")
        bias_access: Access | None = None
    elif bias_type in _TENSOR_BIAS:
        bd = dims_of(bias)
        if len(bd) != 4 or bd[0] not in (1, bq) or bd[1] not in (1, heads) or bd[2:] != (sq, skv):
            raise unsupported(instr, f"a bias of shape {bias} is not modelled")
        bias_access = ("b" if bd[0] > 1 else "0", "h" if bd[1] > 1 else "0", "s", "t")
    else:
        raise unsupported(instr, f"bias_type {bias_type} is not modelled")

    def q_like(last: str) -> Access:
        return (*qf, "h", last)

    def kv_like(last: str) -> Access:
        return (*kf, "hk", last)

    stats: Access = ("b", "h", "s", "0")
    if backward:
        expected_stats = (bq, heads, sq, 1)
        stats_at, rng_at, o_at, do_at, seq_at = 4, 5, 6, 7, (8, 9)
        if dims_of(operands[stats_at]) != expected_stats:
            raise unsupported(instr, "softmax statistics of another shape than [B,H,Sq,1]")
        if dims_of(operands[o_at]) != pick_back(sbhd, (bq, sq, heads, dv)) or dims_of(
            operands[do_at]
        ) != dims_of(operands[o_at]):
            raise unsupported(instr, "O and dO must have Q's layout with V's head size")
        grads = [dims_of(s) for s in outputs[:4]]
        if grads[:3] != [q, k, v] or grads[3] != dims_of(bias):
            raise unsupported(instr, "dQ, dK, dV and dBias must have the shapes of Q, K, V, bias")
    else:
        seq_at = (5, 6)
        if dims_of(outputs[0]) != pick_back(sbhd, (bq, sq, heads, dv)):
            raise unsupported(instr, "O must have Q's layout with V's head size")
        if dims_of(outputs[1]) != (bq, heads, sq, 1):
            raise unsupported(instr, "softmax statistics of another shape than [B,H,Sq,1]")
    seqlens_ok = all(dims_of(operands[i]) == (bq + 1,) for i in seq_at)
    tensors = Tensors(
        q=(0, q_like("a")),
        k=(1, kv_like("a")),
        v=(2, kv_like("e")),
        bias=(3, bias_access) if bias_access is not None else None,
        seqlens=tuple((i, "cu" if seqlens_ok else "whole") for i in seq_at) if padding else (),
        random=4 if not backward else rng_at,
    )
    if not backward:
        o_out = q_like("e")
        o_reads, stat_reads = forward_reads(tensors, o_out, stats, dropout)
        return Kernel(att, ((o_out, o_reads), (stats, stat_reads), ((), {4: "whole"}), ((), {})))
    tensors = replace(
        tensors, stats=(stats_at, stats), o=(o_at, q_like("e")), do=(do_at, q_like("e"))
    )
    outs = [q_like("a"), kv_like("a"), kv_like("e"), bias_access]
    reads = backward_reads(tensors, *outs, dropout)
    return Kernel(att, (*((out or (), r) for out, r in zip(outs, reads, strict=True)), ((), {})))


@dataclass(frozen=True)
class Tensors:
    """Which operand holds each tensor of an attention call and how it is indexed (``a`` the
    Q/K feature, ``e`` the V feature)."""

    q: tuple[int, Access]
    k: tuple[int, Access]
    v: tuple[int, Access]
    bias: tuple[int, Access] | None = None
    #: sequence lengths of a padding mask: (operand, "cu" for cumulative lengths [B + 1],
    #: "batch" for one length per batch [B], "whole")
    seqlens: tuple[tuple[int, str], ...] = ()
    #: the operand dropout's random numbers come from (read whole when dropping)
    random: int | None = None
    stats: tuple[int, Access] | None = None
    o: tuple[int, Access] | None = None
    do: tuple[int, Access] | None = None


def _every(access: Access, feature: str) -> Access:
    """The access with its feature dimension read whole."""
    return tuple(f"*{sym}" if sym == feature else sym for sym in access)


def _through_scores(t: Tensors, out: Access, *, with_v: bool) -> dict[int, Read]:
    """What an element reads through the scores and P: Q, K, (V), bias, sequence lengths."""
    reads: dict[int, Read] = {
        t.q[0]: (out, _every(t.q[1], "a")),
        t.k[0]: (out, _every(t.k[1], "a")),
    }
    if with_v:
        reads[t.v[0]] = (out, _every(t.v[1], "e"))
    if t.bias is not None:
        reads[t.bias[0]] = (out, t.bias[1])
    for i, kind in t.seqlens:
        if "b" not in out or kind == "whole":
            reads[i] = "whole"
        else:
            reads[i] = "seqlens" if kind == "cu" else (out, ("b",))
    return reads


def forward_reads(
    t: Tensors, o_out: Access, stats_out: Access | None, dropout: bool
) -> tuple[dict[int, Read], dict[int, Read]]:
    """O = softmax(mask(Q K^T + bias)) V, and the softmax statistics (per query row)."""
    o_reads = _through_scores(t, o_out, with_v=False)
    o_reads[t.v[0]] = (o_out, t.v[1])
    if dropout and t.random is not None:
        o_reads[t.random] = "whole"
    stat_reads = _through_scores(t, stats_out, with_v=False) if stats_out is not None else {}
    return o_reads, stat_reads


def backward_reads(
    t: Tensors,
    dq_out: Access,
    dk_out: Access,
    dv_out: Access,
    dbias_out: Access | None,
    dropout: bool,
) -> list[dict[int, Read]]:
    """dQ, dK, dBias from dS = P (dO V^T - rowsum(dO O)); dV = P^T dO (neither V nor O)."""
    assert t.stats is not None
    assert t.o is not None
    assert t.do is not None

    def gradient(out: Access) -> dict[int, Read]:
        reads = _through_scores(t, out, with_v=True)
        reads[t.stats[0]] = (out, t.stats[1])
        reads[t.o[0]] = (out, _every(t.o[1], "e"))
        reads[t.do[0]] = (out, _every(t.do[1], "e"))
        if dropout and t.random is not None:
            reads[t.random] = "whole"
        return reads

    dv_reads = _through_scores(t, dv_out, with_v=False)
    dv_reads[t.stats[0]] = (dv_out, t.stats[1])
    dv_reads[t.do[0]] = (dv_out, t.do[1])
    if dropout and t.random is not None:
        dv_reads[t.random] = "whole"
    dbias = gradient(dbias_out) if dbias_out is not None else {}
    return [gradient(dq_out), gradient(dk_out), dv_reads, dbias]


def pick_back(sbhd: bool, bshd: tuple[int, ...]) -> tuple[int, ...]:
    """Dimensions given in BSHD order, in the tensor's own order."""
    return (bshd[1], bshd[0], bshd[2], bshd[3]) if sbhd else bshd


# ---------------------------------------------------------------------------
# maps
# ---------------------------------------------------------------------------


def _whole(source_dims: Sequence[int], target_dims: Sequence[int]) -> IndexingMap:
    b = MapBuilder(source_dims)
    return b.build([b.new_range(n) for n in target_dims])


def _seqlens_to_lengths(out: Access, out_dims: Sequence[int]) -> IndexingMap:
    """An output element of batch b reads cu_seqlens[b] and cu_seqlens[b + 1]."""
    b = MapBuilder(out_dims)
    return b.build([dim(out.index("b")) + b.new_range(2)])


def _seqlens_to_output(att: Attention, out: Access, out_dims: Sequence[int]) -> IndexingMap:
    """cu_seqlens[c] is read by the output elements of batches c - 1 and c."""
    b = MapBuilder((att.batch + 1,))
    batch = dim(0) - b.new_range(2)
    b.constrain(batch, 0, att.batch - 1)
    results: list[Expr | int] = []
    for sym, n in zip(out, out_dims, strict=True):
        results.append(batch if sym == "b" else b.new_range(n))
    return b.build(results)


def _indexing(read: Read | None, exact: bool, build) -> OperandIndexing:
    if read is None:
        return OperandIndexing(())
    indexing_map = build(read)
    if indexing_map.is_known_empty:
        return OperandIndexing(())
    return OperandIndexing((indexing_map,), exact=exact and read not in ("whole", "seqlens"))


def kernel_output_to_input(instr: Instruction, kernel: Kernel) -> IndexingTable:
    att = kernel.att
    shapes = outputs_of(instr)
    table: IndexingTable = []
    for (out, reads), shape in zip(kernel.outputs, shapes, strict=True):
        out_dims = dims_of(shape)
        row = []
        for j, operand in enumerate(instr.operands):
            op_dims = dims_of(operand.shape)

            def build(read: Read, out=out, out_dims=out_dims, op_dims=op_dims) -> IndexingMap:
                if read == "whole":
                    return _whole(out_dims, op_dims)
                if read == "seqlens":
                    return _seqlens_to_lengths(out, out_dims)
                return project(att, read[0], read[1], out_dims)

            read = None if _is_empty(shape) or _is_empty(operand.shape) else reads.get(j)
            row.append(_indexing(read, not att.approximate, build))
        table.append(row)
    return table


def kernel_input_to_output(instr: Instruction, kernel: Kernel) -> IndexingTable:
    att = kernel.att
    shapes = outputs_of(instr)
    table: IndexingTable = []
    for j, operand in enumerate(instr.operands):
        op_dims = dims_of(operand.shape)
        row = []
        for (out, reads), shape in zip(kernel.outputs, shapes, strict=True):
            out_dims = dims_of(shape)

            def build(read: Read, out=out, out_dims=out_dims, op_dims=op_dims) -> IndexingMap:
                if read == "whole":
                    return _whole(op_dims, out_dims)
                if read == "seqlens":
                    return _seqlens_to_output(att, out, out_dims)
                return project(att, read[1], read[0], op_dims)

            read = None if _is_empty(shape) or _is_empty(operand.shape) else reads.get(j)
            row.append(_indexing(read, not att.approximate, build))
        table.append(row)
    return table


def te_output_to_input(instr: Instruction) -> IndexingTable:
    return kernel_output_to_input(instr, _te_kernel(instr))


def te_input_to_output(instr: Instruction) -> IndexingTable:
    return kernel_input_to_output(instr, _te_kernel(instr))


#: custom-call target -> the kernel its rule models (cuDNN's targets are added by
#: ``cudnn_attention``): where ``--names roles`` reads what each dimension indexes
KERNELS: dict[str, Callable[[Instruction], Kernel]] = {}


def output_access(instr: Instruction, out_id: int) -> Access | None:
    """The logical index of each dimension of output ``out_id`` (``0``: size one)."""
    kernel = KERNELS[instr.attributes.get("custom_call_target", "").strip('" ')](instr)
    return kernel.outputs[out_id][0] if out_id < len(kernel.outputs) else None


def range_symbols(
    instr: Instruction, out_id: int, operand_id: int, inverse: bool = False
) -> list[str] | None:
    """The logical index of each range variable of the rule's map from output ``out_id`` to
    operand ``operand_id`` (``inverse``: from the operand to the output), in order; None for a
    read that is not a projection through the scores (a whole tensor, sequence lengths)."""
    kernel = KERNELS[instr.attributes.get("custom_call_target", "").strip('" ')](instr)
    if out_id >= len(kernel.outputs):
        return None
    read = kernel.outputs[out_id][1].get(operand_id)
    if not isinstance(read, tuple):
        return None
    symbols: list[str] = []
    if inverse:
        project(kernel.att, read[1], read[0], dims_of(instr.operands[operand_id].shape), symbols)
    else:
        project(kernel.att, read[0], read[1], dims_of(outputs_of(instr)[out_id]), symbols)
    return symbols


for _target in (FORWARD, BACKWARD):
    register_custom_call_rules(_target, te_output_to_input, te_input_to_output)
    KERNELS[_target] = _te_kernel
