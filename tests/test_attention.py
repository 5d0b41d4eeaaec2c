"""TransformerEngine's fused attention custom-calls against a NumPy reference of attention.

The oracle computes attention (forward: O and the softmax statistics; backward: dQ, dK, dV,
dBias from Q, K, V, bias, statistics, O, dO) in float64 on index-coded inputs, straight from
the definition with the mask written as a boolean matrix. An operand element influences an
output element when perturbing it changes that output: the relation of every (output, operand)
pair, compared with the maps' relations enumerated over their domains. Exact maps must equal
it; maps marked as over-approximations (padding masks) must contain it, for sequence lengths
shorter than the maximum.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloidx
from hloidx.errors import UnsupportedOpError
from hloidx.hlo.analysis import analyze
from hloidx.hlo.op_rules import input_to_output, output_to_input
from tests.rule_relations import inverse, realise

# ---------------------------------------------------------------------------
# the reference
# ---------------------------------------------------------------------------


def allowed(cfg: dict, q_lens=None, kv_lens=None) -> np.ndarray:
    """allowed[b, s, t]: may query s of batch b attend to key t?"""
    batch, sq, skv = cfg["batch"], cfg["sq"], cfg["skv"]
    s = np.arange(sq)[:, None]
    t = np.arange(skv)[None, :]
    ok = np.ones((sq, skv), dtype=bool)
    mask = cfg["mask"]
    if mask in (2, 3):  # causal, aligned to the top left corner
        ok &= t <= s
    if mask in (4, 5):  # causal, aligned to the bottom right corner
        ok &= t <= s + (skv - sq)
    if cfg["left"] >= 0:
        ok &= t >= s - cfg["left"]
    if cfg["right"] >= 0:
        ok &= t <= s + cfg["right"]
    out = np.repeat(ok[None], batch, axis=0)
    if q_lens is not None:  # padding: queries and keys past the batch's length
        for b in range(batch):
            out[b, q_lens[b] :, :] = False
            out[b, :, kv_lens[b] :] = False
    return out


def scores(cfg, q, k, bias):
    group = cfg["heads"] // cfg["kv_heads"]
    kk = np.repeat(k, group, axis=2)  # [B, T, H, A]
    s = np.einsum("bsha,btha->bhst", q, kk) * 0.7
    if bias is not None:
        s = s + bias  # [1|B, 1|H, S, T] broadcasts
    return s


def forward(cfg, mask, q, k, v, bias):
    s = scores(cfg, q, k, bias)
    m = mask[:, None]
    s = np.where(m, s, -np.inf)
    top = np.max(s, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    p = np.where(m, np.exp(s - top), 0.0)
    total = p.sum(-1, keepdims=True)
    has = total > 0
    p = np.where(has, p / np.where(has, total, 1.0), 0.0)
    stats = np.where(has, top + np.log(np.where(has, total, 1.0)), 0.0)  # [B, H, S, 1]
    group = cfg["heads"] // cfg["kv_heads"]
    vv = np.repeat(v, group, axis=2)
    o = np.einsum("bhst,bthe->bshe", p, vv)
    return o, stats


def backward(cfg, mask, q, k, v, bias, stats, o, do):
    group = cfg["heads"] // cfg["kv_heads"]
    s = scores(cfg, q, k, bias)
    p = np.where(mask[:, None], np.exp(s - stats), 0.0)  # [B, H, S, T]
    vv = np.repeat(v, group, axis=2)
    kk = np.repeat(k, group, axis=2)
    dv_full = np.einsum("bhst,bshe->bthe", p, do)
    dp = np.einsum("bshe,bthe->bhst", do, vv)
    d = np.einsum("bshe,bshe->bhs", do, o)[..., None]
    ds = p * (dp - d)
    dq = np.einsum("bhst,btha->bsha", ds, kk) * 0.7
    dk_full = np.einsum("bhst,bsha->btha", ds, q) * 0.7
    b, t, _, a = dk_full.shape
    dk = dk_full.reshape(b, t, cfg["kv_heads"], group, a).sum(3)
    dv = dv_full.reshape(b, t, cfg["kv_heads"], group, dv_full.shape[-1]).sum(3)
    dbias = None
    if bias is not None:
        dbias = ds.sum(axis=tuple(i for i in (0, 1) if bias.shape[i] == 1), keepdims=True)
    return dq, dk, dv, dbias


def coded(shape, offset: float) -> np.ndarray:
    """Index-coded values: a smooth function of each element's flat index."""
    n = int(np.prod(shape))
    return np.sin(offset + 1.37 * np.arange(n, dtype=np.float64)).reshape(shape) * 0.9


def influence(fn, inputs: list[np.ndarray]) -> list[list[set]]:
    """rel[out][inp]: pairs (output index, input index) where perturbing the input element
    changes the output element (numerical sensitivity)."""
    base = fn(*inputs)
    rel = [[set() for _ in inputs] for _ in base]
    for j, x in enumerate(inputs):
        if x is None:
            continue
        for idx in np.ndindex(*x.shape):
            changed = [a.copy() if a is not None else None for a in inputs]
            changed[j][idx] += 0.3731
            after = fn(*changed)
            for o, (was, now) in enumerate(zip(base, after, strict=True)):
                if was is None:
                    continue
                # a change at the last bits is summation order, not influence
                moved = np.abs(was - now) > 1e-9 * (1.0 + np.abs(was))
                for out_idx in zip(*np.nonzero(moved), strict=True):
                    rel[o][j].add((tuple(int(i) for i in out_idx), idx))
    return rel


def ids(name: str, shape) -> np.ndarray:
    """Index-coded provenance: each element stands for itself, ``{(name, index)}``."""
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = frozenset({(name, idx)})
    return out


def provenance(cfg, mask, backward_kernel: bool, bias_shape) -> dict[str, np.ndarray]:
    """What each output element is computed from, by the definition of attention: the same
    formulas as :func:`forward` / :func:`backward` with every value replaced by the set of input
    elements it comes from (a sum or product joins the sets; a masked score is never formed)."""
    b_n, sq, skv, h_n, hk_n, a_n, e_n = (
        cfg[k] for k in ("batch", "sq", "skv", "heads", "kv_heads", "a", "e")
    )
    group = h_n // hk_n
    q, k, v = (
        ids("q", (b_n, sq, h_n, a_n)),
        ids("k", (b_n, skv, hk_n, a_n)),
        ids("v", (b_n, skv, hk_n, e_n)),
    )
    bias = ids("bias", bias_shape) if bias_shape else None
    stats_in, o_in, do = (
        ids("stats", (b_n, h_n, sq, 1)),
        ids("o", (b_n, sq, h_n, e_n)),
        ids("do", (b_n, sq, h_n, e_n)),
    )
    empty: frozenset = frozenset()

    def score(b, h, s, t):
        out = set()
        for a in range(a_n):
            out |= q[b, s, h, a] | k[b, t, h // group, a]
        if bias is not None:
            out |= bias[b % bias.shape[0], h % bias.shape[1], s, t]
        return out

    pairs = [
        (b, h, s, t)
        for b in range(b_n)
        for h in range(h_n)
        for s in range(sq)
        for t in range(skv)
        if mask[b, s, t]
    ]
    if not backward_kernel:
        stats = np.full((b_n, h_n, sq, 1), empty, dtype=object)
        for b, h, s, t in pairs:
            stats[b, h, s, 0] = stats[b, h, s, 0] | score(b, h, s, t)
        o = np.full((b_n, sq, h_n, e_n), empty, dtype=object)
        for b, h, s, t in pairs:
            p = score(b, h, s, t) | stats[b, h, s, 0]
            for e in range(e_n):
                o[b, s, h, e] = o[b, s, h, e] | p | v[b, t, h // group, e]
        return {"o": o, "stats": stats}
    dq = np.full((b_n, sq, h_n, a_n), empty, dtype=object)
    dk = np.full((b_n, skv, hk_n, a_n), empty, dtype=object)
    dv = np.full((b_n, skv, hk_n, e_n), empty, dtype=object)
    dbias = np.full(bias_shape or (0,), empty, dtype=object)
    for b, h, s, t in pairs:
        hk = h // group
        p = score(b, h, s, t) | stats_in[b, h, s, 0]
        dp, d = set(), set()
        for e in range(e_n):
            dv[b, t, hk, e] = dv[b, t, hk, e] | p | do[b, s, h, e]
            dp |= do[b, s, h, e] | v[b, t, hk, e]
            d |= do[b, s, h, e] | o_in[b, s, h, e]
        ds = p | dp | d
        for a in range(a_n):
            dq[b, s, h, a] = dq[b, s, h, a] | ds | k[b, t, hk, a]
            dk[b, t, hk, a] = dk[b, t, hk, a] | ds | q[b, s, h, a]
        if bias is not None:
            at = (b % bias.shape[0], h % bias.shape[1], s, t)
            dbias[at] = dbias[at] | ds
    return {"q": dq, "k": dk, "v": dv, "bias": dbias}


# ---------------------------------------------------------------------------
# the custom-calls
# ---------------------------------------------------------------------------


def _shape(dims) -> str:
    return f"[{','.join(str(d) for d in dims)}]"


def _layout(cfg, dims):
    """BSHD dims in the call's layout (SBHD swaps the first two)."""
    return (dims[1], dims[0], *dims[2:]) if cfg["layout"] == 4 else tuple(dims)


def _config(cfg) -> str:
    return (
        f"{{attn_heads = {cfg['heads']} : i64, bias_batch = 0 : i64, bias_heads = 0 : i64, "
        f"bias_type = {cfg['bias_type']} : i64, deterministic = false, dropout_probability = "
        f"{cfg.get('dropout', 0.0):e} : f64, input_batch = {cfg['batch']} : i64, is_training = "
        f"true, kv_max_seqlen = {cfg['skv']} : i64, mask_type = {cfg['mask']} : i64, "
        f"max_segments_per_seq = 1 : i64, num_gqa_groups = {cfg['kv_heads']} : i64, "
        f"q_max_seqlen = {cfg['sq']} : i64, qk_head_dim = {cfg['a']} : i64, qkv_layout = "
        f"{cfg['layout']} : i64, scaling_factor = 7.000000e-01 : f64, v_head_dim = {cfg['e']} "
        f": i64, window_size_left = {cfg['left']} : i64, window_size_right = {cfg['right']} : i64}}"
    )


def shapes(cfg) -> dict[str, tuple[int, ...]]:
    b, sq, skv, h, hk, a, e = (
        cfg[k] for k in ("batch", "sq", "skv", "heads", "kv_heads", "a", "e")
    )
    out = {
        "q": (b, sq, h, a),
        "k": (b, skv, hk, a),
        "v": (b, skv, hk, e),
        "o": (b, sq, h, e),
        "stats": (b, h, sq, 1),
    }
    if cfg["bias_type"] in (1, 2):
        out["bias"] = (b if cfg["bias_b"] else 1, h if cfg["bias_h"] else 1, sq, skv)
    return out


def instruction(cfg, backward_kernel: bool):
    sh = shapes(cfg)
    lay = {n: _layout(cfg, sh[n]) for n in ("q", "k", "v", "o")}
    bias = f"bf16{_shape(sh['bias'])}" if "bias" in sh else "bf16[0]"
    cu = f"s32[{cfg['batch'] + 1}]"
    params = [
        f"bf16{_shape(lay['q'])}",
        f"bf16{_shape(lay['k'])}",
        f"bf16{_shape(lay['v'])}",
        bias,
    ]
    if backward_kernel:
        params += [f"f32{_shape(sh['stats'])}", "u32[2,4]", f"bf16{_shape(lay['o'])}"]
        params += [f"bf16{_shape(lay['o'])}", cu, cu, "f32[0]", "f32[0]"]
        params += ["f32[0]"] * 4
        result = f"(bf16{_shape(lay['q'])}, bf16{_shape(lay['k'])}, bf16{_shape(lay['v'])}, "
        result += f"{bias}, u8[16])"
        target = "te_fused_attn_backward_ffi"
    else:
        params += ["u32[2]", cu, cu, "f32[0]", "f32[0]"] + ["f32[0]"] * 4
        result = f"(bf16{_shape(lay['o'])}, f32{_shape(sh['stats'])}, u32[2,4], u8[48])"
        target = "te_fused_attn_forward_ffi"
    lines = [f"  p{i} = {p} parameter({i})" for i, p in enumerate(params)]
    args = ", ".join(f"p{i}" for i in range(len(params)))
    text = "HloModule m\nENTRY e {\n" + "\n".join(lines)
    text += f'\n  ROOT f = {result} custom-call({args}), custom_call_target="{target}", '
    text += f"api_version=API_VERSION_TYPED_FFI, backend_config={_config(cfg)}\n}}\n"
    module = hloidx.parse_hlo(text)
    return module.entry.root


def _swap(idx, cfg, name):
    """An index of a BSHD-ordered reference tensor in the call's own layout."""
    if cfg["layout"] == 4 and name in ("q", "k", "v", "o", "do"):
        return (idx[1], idx[0], *idx[2:])
    return idx


def reference_relation(cfg, backward_kernel: bool, padded: bool, numeric: bool = False):
    """{(output id, operand id): {(output index, operand index)}} in the call's layouts, by
    provenance (or, with ``numeric``, by perturbing the float64 reference)."""
    sh = shapes(cfg)
    rng = np.random.default_rng(7)
    q_lens = kv_lens = None
    if padded:
        q_lens = [int(rng.integers(1, cfg["sq"] + 1)) for _ in range(cfg["batch"])]
        kv_lens = [int(rng.integers(1, cfg["skv"] + 1)) for _ in range(cfg["batch"])]
    mask = allowed(cfg, q_lens, kv_lens)
    names_out = ["q", "k", "v", "bias"] if backward_kernel else ["o", "stats"]
    operand_of = {"q": 0, "k": 1, "v": 2, "bias": 3}
    if backward_kernel:
        operand_of.update({"stats": 4, "o": 6, "do": 7})
    out: dict[tuple[int, int], set] = {
        (o_id, j): set() for o_id in range(len(names_out)) for j in operand_of.values()
    }
    if numeric:
        q, k, v = coded(sh["q"], 0.1), coded(sh["k"], 0.5), coded(sh["v"], 0.9)
        bias = coded(sh["bias"], 1.3) if "bias" in sh else None
        if backward_kernel:
            o, stats = forward(cfg, mask, q, k, v, bias)
            inputs = [q, k, v, bias, stats, o, coded(sh["o"], 2.1)]
            rel = influence(lambda *x: backward(cfg, mask, *x), inputs)
        else:
            rel = influence(lambda *x: forward(cfg, mask, *x), [q, k, v, bias])
        names_in = list(operand_of)
        for o_id in range(len(names_out)):
            for i_id, i_name in enumerate(names_in):
                for a, b in rel[o_id][i_id]:
                    out[(o_id, operand_of[i_name])].add(
                        (_swap(a, cfg, names_out[o_id]), _swap(b, cfg, i_name))
                    )
        return out
    sources = provenance(cfg, mask, backward_kernel, sh.get("bias"))
    for o_id, o_name in enumerate(names_out):
        values = sources[o_name]
        for idx in np.ndindex(*values.shape):
            for name, at in values[idx]:
                out[(o_id, operand_of[name])].add((_swap(idx, cfg, o_name), _swap(at, cfg, name)))
    return out


@st.composite
def configs(draw):
    kv_heads = draw(st.integers(1, 2))
    cfg = {
        "batch": draw(st.integers(1, 2)),
        "sq": draw(st.integers(1, 4)),
        "skv": draw(st.integers(1, 4)),
        "kv_heads": kv_heads,
        "heads": kv_heads * draw(st.integers(1, 2)),
        "a": draw(st.integers(1, 2)),
        "e": draw(st.integers(1, 2)),
        "mask": draw(st.integers(0, 5)),
        "layout": draw(st.sampled_from([4, 9])),
        "bias_type": draw(st.sampled_from([0, 2, 3])),
        "bias_b": draw(st.booleans()),
        "bias_h": draw(st.booleans()),
        "left": -1,
        "right": -1,
    }
    if cfg["sq"] == cfg["skv"] and draw(st.booleans()):
        cfg["left"] = draw(st.integers(-1, 2))
        cfg["right"] = draw(st.integers(-1, 1))
    return cfg


def _check(cfg, backward_kernel: bool) -> None:
    instr = instruction(cfg, backward_kernel)
    padding = cfg["mask"] in (1, 3, 5)
    o2i = output_to_input(instr)
    i2o = input_to_output(instr)
    truth = reference_relation(cfg, backward_kernel, padded=padding)
    numeric = reference_relation(cfg, backward_kernel, padded=padding, numeric=True)
    for (o_id, j), pairs in truth.items():
        indexing = o2i[o_id][j]
        claimed = realise(indexing)
        assert inverse(realise(i2o[j][o_id])) == claimed, (o_id, j)
        # what a float64 computation is sensitive to is part of what it is computed from
        assert numeric[(o_id, j)] <= pairs, (o_id, j, sorted(numeric[(o_id, j)] - pairs)[:5])
        if padding:
            assert not indexing.exact or not claimed
            assert pairs <= claimed, (o_id, j, sorted(pairs - claimed)[:5])
            # shorter sequences read less, never more; at full length exactly the maps
            assert reference_relation(cfg, backward_kernel, padded=False)[(o_id, j)] == claimed
        else:
            assert indexing.exact
            assert claimed == pairs, (o_id, j, sorted(pairs ^ claimed)[:5])


@settings(max_examples=40, deadline=None)
@given(configs())
def test_forward_maps_equal_the_reference(cfg) -> None:
    _check(cfg, backward_kernel=False)


@settings(max_examples=40, deadline=None)
@given(configs())
def test_backward_maps_equal_the_reference(cfg) -> None:
    _check(cfg, backward_kernel=True)


BASE = {
    "batch": 2,
    "sq": 3,
    "skv": 3,
    "kv_heads": 1,
    "heads": 2,
    "a": 2,
    "e": 1,
    "mask": 3,
    "layout": 9,
    "bias_type": 0,
    "bias_b": False,
    "bias_h": False,
    "left": -1,
    "right": -1,
}


@pytest.mark.parametrize("mask", range(6))
@pytest.mark.parametrize("backward_kernel", [False, True])
def test_every_mask_type_agrees_with_the_reference(mask, backward_kernel) -> None:
    _check({**BASE, "mask": mask, "sq": 3, "skv": 4}, backward_kernel)


def test_causal_mask_is_a_constraint_and_heads_are_grouped() -> None:
    instr = instruction({**BASE, "mask": 2, "kv_heads": 2, "heads": 8}, False)
    text = str(output_to_input(instr)[0][1].maps[0])
    assert "d2 floordiv 4" in text
    assert "s0 - d1 in" in text or "-d1 + s0 in" in text


def test_side_inputs_seqlens_seed_and_rng_state() -> None:
    cfg = {**BASE, "mask": 3}
    fwd = output_to_input(instruction(cfg, False))
    # padding: output (b, s, h, e) reads cu_seqlens[b] and [b + 1], as an over-approximation
    seq = realise(fwd[0][5])
    assert {(o, i) for o, i in seq if o == (1, 0, 0, 0)} == {
        ((1, 0, 0, 0), (1,)),
        ((1, 0, 0, 0), (2,)),
    }
    assert not fwd[0][5].exact
    assert realise(fwd[0][4]) == set()  # no dropout: the seed does not reach O
    assert {i for _, i in realise(fwd[2][4])} == {(0,), (1,)}  # the rng state comes from it
    assert all(not row.maps for row in fwd[3])  # the workspace reads nothing
    bwd = output_to_input(instruction(cfg, True))
    assert realise(bwd[0][5]) == set()  # no dropout: dQ does not read the rng state
    dropping = output_to_input(instruction({**cfg, "mask": 2, "dropout": 0.1}, True))
    assert {i for _, i in realise(dropping[0][5])} == set(np.ndindex(2, 4))
    assert not dropping[0][0].exact


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"layout": 5}, "qkv_layout BS3HD is not modelled"),
        ({"layout": 14}, "qkv_layout THD_THD_THD is not modelled"),
        ({"mask": 6}, "mask_type 6 is not modelled"),
        ({"sq": 3, "skv": 4, "left": 1}, "sliding window with Sq != Skv"),
    ],
)
def test_unmodelled_configurations_stay_undefined_with_the_reason(change, reason) -> None:
    cfg = {**BASE, **change}
    if cfg["layout"] == 5:
        cfg["layout"] = 9  # build shapes as separate Q, K, V, then claim a packed layout
        instr = instruction(cfg, False)
        text = instr.attributes["backend_config"].replace("qkv_layout = 9", "qkv_layout = 5")
        instr.attributes["backend_config"] = text
    elif cfg["layout"] == 14:
        cfg["layout"] = 9
        instr = instruction(cfg, False)
        text = instr.attributes["backend_config"].replace("qkv_layout = 9", "qkv_layout = 14")
        instr.attributes["backend_config"] = text
    else:
        instr = instruction(cfg, False)
    with pytest.raises(UnsupportedOpError, match=reason):
        output_to_input(instr)


LLAMA_CALL = (
    "HloModule m\nENTRY e {\n"
    "  q = bf16[2,8192,32,128] parameter(0)\n  k = bf16[2,8192,8,128] parameter(1)\n"
    "  bias = bf16[0] parameter(2)\n  seed = u32[2] parameter(3)\n  cu = s32[3] parameter(4)\n"
    "  z = f32[0] parameter(5)\n"
    "  ROOT f = (bf16[2,8192,32,128], f32[2,32,8192,1], u32[2,4], u8[48]) custom-call(q, k, k, "
    'bias, seed, cu, cu, z, z, z, z, z, z), custom_call_target="te_fused_attn_forward_ffi", '
    "api_version=API_VERSION_TYPED_FFI, backend_config={attn_heads = 32 : i64, bias_batch = 0 "
    ": i64, bias_heads = 0 : i64, bias_type = 0 : i64, deterministic = false, "
    "dropout_probability = 0.000000e+00 : f64, input_batch = 2 : i64, is_training = true, "
    "kv_max_seqlen = 8192 : i64, mask_type = 3 : i64, max_segments_per_seq = 1 : i64, "
    "num_gqa_groups = 8 : i64, q_max_seqlen = 8192 : i64, qk_head_dim = 128 : i64, qkv_layout "
    "= 9 : i64, scaling_factor = 1.000000e+00 : f64, v_head_dim = 128 : i64, window_size_left "
    "= -1 : i64, window_size_right = -1 : i64}\n}\n"
)


def test_the_llama_call_site_has_no_undefined_operand() -> None:
    """The call as XLA's Llama 3.1 8B benchmark step writes it (shapes and backend_config)."""
    module = hloidx.parse_hlo(LLAMA_CALL)
    result = analyze(module)
    root = next(r for r in result.instructions if r.name == "f")
    assert len(root.operands) == 13
    assert not any(m.is_undefined for o in root.operands for m in o.output_to_input)
    assert [o.exact for o in root.operands][:3] == [False, False, False]  # padding mask


def test_calls_that_differ_only_in_backend_config_keep_their_own_maps() -> None:
    """Structurally equal instructions share their analysis; a custom-call's backend_config
    (here the mask) is part of what makes them equal."""
    lines = [
        "HloModule m",
        "ENTRY e {",
        "  q = bf16[2,3,2,2] parameter(0)",
        "  k = bf16[2,3,1,2] parameter(1)",
        "  bias = bf16[0] parameter(2)",
        "  seed = u32[2] parameter(3)",
        "  cu = s32[3] parameter(4)",
        "  z = f32[0] parameter(5)",
    ]
    config = _config({**BASE, "mask": 0, "e": 2})
    call = (
        "(bf16[2,3,2,2], f32[2,2,3,1], u32[2,4], u8[48]) custom-call(q, k, k, bias, seed, cu, "
        'cu, z, z, z, z, z, z), custom_call_target="te_fused_attn_forward_ffi", '
        "backend_config="
    )
    lines.append(f"  none = {call}{config}")
    lines.append(f"  causal = {call}{config.replace('mask_type = 0', 'mask_type = 2')}")
    lines.append("  a = u8[48] get-tuple-element(none), index=3")
    lines.append("  b = u8[48] get-tuple-element(causal), index=3")
    lines.append("  ROOT t = (u8[48], u8[48]) tuple(a, b)\n}")
    text = "\n".join(lines)
    result = analyze(hloidx.parse_hlo(text))
    maps = {
        r.name: str(r.operands[1].output_to_input[0])
        for r in result.instructions
        if r.name in ("none", "causal")
    }
    assert "in [" in maps["causal"].split("domain:")[1]
    assert "s0 - d1" not in maps["none"]
    assert "-d1 + s0" not in maps["none"]
    assert maps["none"] != maps["causal"]


def test_results_of_other_shapes_stay_undefined() -> None:
    instr = instruction(BASE, True)
    shapes = list(instr.shape.tuple_shapes)
    shapes[1] = shapes[0]  # dK with Q's shape
    broken = dataclasses.replace(
        instr, shape=dataclasses.replace(instr.shape, tuple_shapes=tuple(shapes))
    )
    with pytest.raises(UnsupportedOpError, match="dQ, dK, dV and dBias"):
        output_to_input(broken)
