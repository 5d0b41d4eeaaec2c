"""The flops of a fused attention custom call as its kernel computes them: cuDNN's
``__cudnn$fmha*`` (XLA:GPU) and TransformerEngine's ``te_fused_attn_{forward,backward}_ffi``.

A flash-attention kernel does, per batch and query head, two GEMMs per score it keeps: ``S = Q
K^T`` (``Dqk`` multiply-adds per score) and ``O = P V`` (``Dv``): ``2 (Dqk + Dv)`` flops per
score, ``4 B H Sq Skv D`` without a mask. The backward kernel recomputes ``S`` and does four
more: ``dV = P^T dO`` and ``dP = dO V^T`` (``Dv`` each), ``dQ = dS K`` and ``dK = dS^T Q``
(``Dqk`` each): ``2 (3 Dqk + 2 Dv)`` flops per score, 2.5x the forward's when ``Dqk = Dv``. The
scores kept are the pairs ``(s, t)`` the mask allows, counted exactly (causal: ``S (S + 1) /
2`` of ``S^2``): the kernels skip the tiles a causal mask removes. Softmax, scaling and dropout
are element-wise work beside the GEMMs, not counted.

The sizes come from the call's own description: TransformerEngine's ``backend_config`` names
them (``input_batch``, ``q_max_seqlen``, ``kv_max_seqlen``, ``attn_heads``, ``qk_head_dim``,
``v_head_dim``, ``mask_type``, windows), whatever the QKV layout (packed ``BS3HD`` too); cuDNN's
through its dot dimension numbers, read by the indexing rule
(:mod:`hloidx.hlo.rules.cudnn_attention`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import HloidxError
from ..hlo.rules.attention import BACKWARD, FORWARD, config_of

if TYPE_CHECKING:
    from ..hlo.ir import Instruction

#: TransformerEngine's NVTE_Mask_Type: (causal, bottom-right aligned); padding does not change
#: the scores a kernel of the maximum lengths computes
_TE_MASKS = {0: (False, False), 1: (False, False), 2: (True, False), 3: (True, False)}
_TE_MASKS |= {4: (True, True), 5: (True, True)}


@dataclass(frozen=True)
class AttentionWork:
    """One fused attention call's GEMM work."""

    backward: bool
    batch: int
    heads: int
    q_len: int
    kv_len: int
    qk_dim: int
    v_dim: int
    #: score pairs (s, t) the mask keeps, per batch and head
    pairs: int
    mask: str

    @property
    def flops(self) -> int:
        per_score = 3 * self.qk_dim + 2 * self.v_dim if self.backward else self.qk_dim + self.v_dim
        return 2 * per_score * self.batch * self.heads * self.pairs

    def describe(self) -> str:
        kind = "backward: 5 GEMMs" if self.backward else "forward: 2 GEMMs"
        return (
            f"fused attention {kind} over B={self.batch} H={self.heads} Sq={self.q_len} "
            f"Skv={self.kv_len} Dqk={self.qk_dim} Dv={self.v_dim}, {self.pairs} of "
            f"{self.q_len * self.kv_len} scores kept ({self.mask})"
        )


def allowed_pairs(q_len: int, kv_len: int, lower: int | None, upper: int | None) -> int:
    """The pairs ``0 <= s < q_len``, ``0 <= t < kv_len`` with ``lower <= t - s <= upper``
    (None: no limit on that side)."""
    total = 0
    for s in range(q_len):
        lo = 0 if lower is None else max(0, s + lower)
        hi = kv_len - 1 if upper is None else min(kv_len - 1, s + upper)
        total += max(0, hi - lo + 1)
    return total


def _te_work(instr: Instruction, backward: bool) -> AttentionWork | None:
    config = config_of(instr)
    keys = ("input_batch", "q_max_seqlen", "kv_max_seqlen", "attn_heads", "qk_head_dim")
    if not all(isinstance(config.get(k), int) for k in keys):
        return None
    q_len, kv_len = int(config["q_max_seqlen"]), int(config["kv_max_seqlen"])  # type: ignore[arg-type]
    qk_dim = int(config["qk_head_dim"])  # type: ignore[arg-type]
    v_dim = config.get("v_head_dim", qk_dim)
    mask = config.get("mask_type", 0)
    if not isinstance(v_dim, int) or mask not in _TE_MASKS:
        return None
    causal, bottom_right = _TE_MASKS[mask]  # type: ignore[index]
    shift = kv_len - q_len if bottom_right else 0
    upper: int | None = shift if causal else None
    left, right = config.get("window_size_left", -1), config.get("window_size_right", -1)
    if isinstance(right, int) and right >= 0:
        upper = right + shift if upper is None else min(upper, right + shift)
    lower = shift - left if isinstance(left, int) and left >= 0 else None
    name = {0: "no mask", 1: "padding", 2: "causal", 3: "padding, causal"}.get(
        mask,  # type: ignore[arg-type]
        "causal, bottom right",
    )
    return AttentionWork(
        backward,
        int(config["input_batch"]),  # type: ignore[arg-type]
        int(config["attn_heads"]),  # type: ignore[arg-type]
        q_len,
        kv_len,
        qk_dim,
        v_dim,
        allowed_pairs(q_len, kv_len, lower, upper),
        name,
    )


def _cudnn_work(instr: Instruction, backward: bool) -> AttentionWork | None:
    from ..hlo.rules.cudnn_attention import attention_of

    try:
        att = attention_of(instr)
    except HloidxError:
        return None
    mask = "causal" if att.upper is not None or att.lower is not None else "no mask"
    pairs = allowed_pairs(att.q_len, att.kv_len, att.lower, att.upper)
    return AttentionWork(
        backward, att.batch, att.heads, att.q_len, att.kv_len, att.qk_dim, att.v_dim, pairs, mask
    )


def attention_work(instr: Instruction) -> AttentionWork | None:
    """The GEMM work of a fused attention custom call, or None (not one, or its sizes cannot
    be read)."""
    if instr.opcode != "custom-call":
        return None
    target = instr.attributes.get("custom_call_target", "").strip().strip('"')
    if target in (FORWARD, BACKWARD):
        try:
            return _te_work(instr, target == BACKWARD)
        except HloidxError:
            return None
    if target.startswith("__cudnn$fmha") and "F8" not in target:
        return _cudnn_work(instr, target.endswith("Backward"))
    return None
