"""cuDNN's fused attention custom-calls (``__cudnn$fmha*``, as XLA:GPU's fused-MHA tests print
them) against the provenance reference of attention in ``test_attention``: each tensor's
layout comes from the call's dot dimension numbers, so the reference's indices are permuted
into the call's own before comparing relations."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloidx
from hloidx.errors import UnsupportedOpError
from hloidx.hlo.op_rules import input_to_output, output_to_input
from tests.paths import DATA as TEST_DATA
from tests.rule_relations import inverse, realise
from tests.test_attention import allowed, provenance

DATA = TEST_DATA / "gpu" / "attention"

#: the reference's index order per tensor
CANONICAL = {
    "q": ("b", "s", "h", "a"),
    "k": ("b", "t", "hk", "a"),
    "v": ("b", "t", "hk", "e"),
    "o": ("b", "s", "h", "e"),
    "do": ("b", "s", "h", "e"),
    "stats": ("b", "h", "s", "1"),
    "bias": ("bb", "bh", "s", "t"),
}
#: the call's order: BHSD as XLA's first fMHA tests, BSHD as its flash-attention tests
LAYOUTS = {
    "bhsd": {
        "q": ("b", "h", "s", "a"),
        "k": ("b", "hk", "t", "a"),
        "v": ("b", "hk", "t", "e"),
        "do": ("b", "h", "s", "e"),
    },
    "bshd": {
        "q": ("b", "s", "h", "a"),
        "k": ("b", "t", "hk", "a"),
        "v": ("b", "t", "hk", "e"),
        "do": ("b", "s", "h", "e"),
    },
}
RESULTS = {
    "o": ("b", "h", "s", "e"),
    "stats": ("b", "h", "s"),
    "dq": ("b", "h", "s", "a"),
    "dk": ("b", "hk", "t", "a"),
    "dv": ("b", "hk", "t", "e"),
    "dbias": ("bb", "bh", "s", "t"),
}


def _numbers(batch, contracting, lhs=None) -> dict:
    out = {
        "rhs_contracting_dimensions": [str(contracting[1])],
        "rhs_batch_dimensions": [str(d) for d in batch[1]],
    }
    if lhs is not None:
        out["lhs_contracting_dimensions"] = [str(contracting[0])]
        out["lhs_batch_dimensions"] = [str(d) for d in batch[0]]
    else:
        out["lhs_contracting_dimensions"] = ["3"]
        out["lhs_batch_dimensions"] = ["0", "1"]
    return out


def _dims_numbers(layout: dict) -> dict:
    """The dot dimension numbers that give the layout's tensors their roles."""

    def batch(name):
        return [layout[name].index("b"), layout[name].index("h" if name in "qdo" else "hk")]

    def where(name, sym):
        return layout[name].index(sym)

    q, k, v, do = "q", "k", "v", "do"
    return {
        "bmm1_dot_dimension_numbers": _numbers(
            (batch(q), batch(k)), (where(q, "a"), where(k, "a")), lhs=True
        ),
        "bmm2_dot_dimension_numbers": _numbers((None, batch(v)), (3, where(v, "t"))),
        "bmm1_grad_gemm1_dot_dimension_numbers": _numbers((None, batch(q)), (2, where(q, "s"))),
        "bmm1_grad_gemm2_dot_dimension_numbers": _numbers((None, batch(k)), (3, where(k, "t"))),
        "bmm2_grad_gemm1_dot_dimension_numbers": _numbers((None, batch(do)), (2, where(do, "s"))),
        "bmm2_grad_gemm2_dot_dimension_numbers": _numbers((None, batch(v)), (3, where(v, "e"))),
    }


MASK_NAMES = {0: "NO_MASK", 1: "PADDING", 2: "CAUSAL", 3: "PADDING_CAUSAL"}


def _size(cfg, sym) -> int:
    return {
        "b": cfg["batch"],
        "s": cfg["sq"],
        "t": cfg["skv"],
        "h": cfg["heads"],
        "hk": cfg["kv_heads"],
        "a": cfg["a"],
        "e": cfg["e"],
        "bb": cfg["batch"] if cfg["bias_b"] else 1,
        "bh": cfg["heads"] if cfg["bias_h"] else 1,
        "1": 1,
    }[sym]


def _shape(cfg, syms) -> str:
    return "[" + ",".join(str(_size(cfg, s)) for s in syms) + "]"


def instruction(cfg, backward_kernel: bool):
    layout = LAYOUTS[cfg["layout"]]
    bias = cfg["bias"]
    fmha = {
        "fmha_scale": 0.5,
        "dropout_rate": 0,
        "mask_type": MASK_NAMES[cfg["mask"]],
        "seed": 42,
        "is_flash_attention": True,
        "sliding_window_length": 0,
        **_dims_numbers(layout),
    }
    config = json.dumps({"operation_queue_id": "0", "cudnn_fmha_backend_config": fmha})
    params = [f"bf16{_shape(cfg, layout[n])}" for n in ("q", "k", "v")]
    if backward_kernel:
        params += [f"f32{_shape(cfg, RESULTS['stats'])}", f"bf16{_shape(cfg, layout['do'])}"]
        if bias:
            params.append(f"bf16{_shape(cfg, CANONICAL['bias'])}")
        params.append(f"bf16{_shape(cfg, layout['do'])}")  # O
        results = [f"bf16{_shape(cfg, RESULTS[n])}" for n in ("dq", "dk", "dv")]
        if bias:
            results.append(f"bf16{_shape(cfg, RESULTS['dbias'])}")
    else:
        if bias:
            params.append(f"bf16{_shape(cfg, CANONICAL['bias'])}")
        results = [f"bf16{_shape(cfg, RESULTS['o'])}", f"f32{_shape(cfg, RESULTS['stats'])}"]
    if cfg["mask"] in (1, 3):
        params += [f"s32[{cfg['batch']}]"] * 2
    results.append("u8[0]")
    target = "__cudnn$fmhaScaleBiasSoftmax" if bias else "__cudnn$fmhaSoftmax"
    target += "Backward" if backward_kernel else ""
    lines = [f"  p{i} = {p} parameter({i})" for i, p in enumerate(params)]
    args = ", ".join(f"p{i}" for i in range(len(params)))
    text = "HloModule m\nENTRY e {\n" + "\n".join(lines)
    text += f"\n  ROOT f = ({', '.join(results)}) custom-call({args}), "
    text += f'custom_call_target="{target}", backend_config={config}\n}}\n'
    return hloidx.parse_hlo(text).entry.root


def _to_call(index, canonical, call):
    at = {sym: index[k] for k, sym in enumerate(canonical)}
    return tuple(at[sym] for sym in call)


def reference(cfg, backward_kernel: bool, padded: bool) -> dict[tuple[int, int], set]:
    layout = LAYOUTS[cfg["layout"]]
    q_lens = kv_lens = None
    if padded:
        rng = np.random.default_rng(3)
        q_lens = [int(rng.integers(1, cfg["sq"] + 1)) for _ in range(cfg["batch"])]
        kv_lens = [int(rng.integers(1, cfg["skv"] + 1)) for _ in range(cfg["batch"])]
    te_cfg = {**cfg, "left": -1, "right": -1}
    mask = allowed(te_cfg, q_lens, kv_lens)
    bias_shape = tuple(_size(cfg, s) for s in CANONICAL["bias"]) if cfg["bias"] else None
    sources = provenance(te_cfg, mask, backward_kernel, bias_shape)
    operand = {"q": 0, "k": 1, "v": 2}
    call = {"q": layout["q"], "k": layout["k"], "v": layout["v"], "bias": CANONICAL["bias"]}
    if backward_kernel:
        operand.update({"stats": 3, "do": 4})
        if cfg["bias"]:
            operand["bias"] = 5
        operand["o"] = 6 if cfg["bias"] else 5
        call.update({"stats": RESULTS["stats"], "do": layout["do"], "o": layout["do"]})
        outputs = {"q": (0, "dq"), "k": (1, "dk"), "v": (2, "dv"), "bias": (3, "dbias")}
    else:
        if cfg["bias"]:
            operand["bias"] = 3
        outputs = {"o": (0, "o"), "stats": (1, "stats")}
    canonical_out = {"q": "q", "k": "k", "v": "v", "bias": "bias", "o": "o", "stats": "stats"}
    out: dict[tuple[int, int], set] = {
        (o_id, j): set() for o_id, _ in outputs.values() for j in operand.values()
    }
    for name, (o_id, result) in outputs.items():
        values = sources[name]
        for idx in np.ndindex(*values.shape):
            o_index = _to_call(idx, CANONICAL[canonical_out[name]], RESULTS[result])
            for source, at in values[idx]:
                i_index = _to_call(at, CANONICAL[source], call[source])
                out[(o_id, operand[source])].add((o_index, i_index))
    return out


def _check(cfg, backward_kernel: bool) -> None:
    instr = instruction(cfg, backward_kernel)
    padding = cfg["mask"] in (1, 3)
    o2i, i2o = output_to_input(instr), input_to_output(instr)
    truth = reference(cfg, backward_kernel, padded=padding)
    for (o_id, j), pairs in truth.items():
        indexing = o2i[o_id][j]
        claimed = realise(indexing)
        assert inverse(realise(i2o[j][o_id])) == claimed, (o_id, j)
        if padding:
            assert pairs <= claimed, (o_id, j)
            assert reference(cfg, backward_kernel, padded=False)[(o_id, j)] == claimed
            assert not indexing.exact or not claimed
        else:
            assert indexing.exact
            assert claimed == pairs, (o_id, j, sorted(pairs ^ claimed)[:5])
    if padding:  # output (b, ...) reads the two sequence lengths at b
        seq = len(instr.operands) - 2
        assert {i for o, i in realise(o2i[0][seq]) if o[0] == 0} == {(0,)}
        assert not o2i[0][seq].exact


@st.composite
def configs(draw):
    kv_heads = draw(st.integers(1, 2))
    return {
        "batch": draw(st.integers(1, 2)),
        "sq": draw(st.integers(1, 3)),
        "skv": draw(st.integers(1, 3)),
        "kv_heads": kv_heads,
        "heads": kv_heads * draw(st.integers(1, 2)),
        "a": draw(st.integers(1, 2)),
        "e": draw(st.integers(1, 2)),
        "mask": draw(st.integers(0, 3)),
        "layout": draw(st.sampled_from(sorted(LAYOUTS))),
        "bias": draw(st.booleans()),
        "bias_b": draw(st.booleans()),
        "bias_h": draw(st.booleans()),
    }


@settings(max_examples=30, deadline=None)
@given(configs(), st.booleans())
def test_fmha_maps_equal_the_reference(cfg, backward_kernel) -> None:
    _check(cfg, backward_kernel)


BASE = {
    "batch": 2,
    "sq": 3,
    "skv": 3,
    "kv_heads": 2,
    "heads": 2,
    "a": 2,
    "e": 2,
    "mask": 0,
    "layout": "bshd",
    "bias": False,
    "bias_b": False,
    "bias_h": False,
}


@pytest.mark.parametrize("mask", range(4))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("backward_kernel", [False, True])
def test_every_mask_and_layout_agrees_with_the_reference(mask, layout, backward_kernel) -> None:
    _check({**BASE, "mask": mask, "layout": layout, "bias": True}, backward_kernel)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ('"sliding_window_length": 0', "sliding window"),
        ('"mask_type": "NO_MASK"', "mask_type ALIBI"),
        ('"is_flash_attention": true', "ragged or paged"),
    ],
)
def test_unmodelled_calls_stay_undefined_with_the_reason(change, reason) -> None:
    instr = instruction(BASE, False)
    replacement = {
        "sliding window": '"sliding_window_length": 4',
        "mask_type ALIBI": '"mask_type": "ALIBI"',
        "ragged or paged": '"is_flash_attention": true, "is_paged_attention": true',
    }[reason]
    text = instr.attributes["backend_config"].replace(change.replace(": ", ":"), replacement)
    text = text.replace(change, replacement)
    instr.attributes["backend_config"] = text
    with pytest.raises(UnsupportedOpError, match=reason):
        output_to_input(instr)


XLA_MODULES = {
    # file: {custom-call: expected statuses (or the reason it stays UNDEFINED)}
    "bhsd_softmax_fwd_bwd": "exact",
    "bshd_flash_bias_fwd_bwd": "exact",
    "padding_dropout_fwd_bwd": "over-approximation",
    "sliding_window_fwd_bwd": "a sliding window is not modelled",
    "score_mod_fwd": "a score modifier computation is not modelled",
}


@pytest.mark.parametrize("name", sorted(XLA_MODULES))
def test_xla_fmha_modules(name) -> None:
    """XLA's own fused-MHA test modules: every fMHA call gets maps, or says why not."""
    path = DATA / f"{name}.hlo"
    result = hloidx.analyze(hloidx.parse_hlo(path.read_text()))
    calls = [r for r in result.instructions if r.opcode == "custom-call"]
    assert calls
    expected = XLA_MODULES[name]
    for call in calls:
        if expected in ("exact", "over-approximation"):
            assert {o.status for o in call.operands} == {expected}, call.name
        else:
            assert all(o.is_undefined for o in call.operands)
            assert any(expected in note for note in call.notes)


def test_flash_layout_is_read_from_the_dimension_numbers() -> None:
    """In the flash module Q is [B, S, H, D] and O is [B, H, S, D]: O (b, h, s, e) reads
    Q (b, s, h, every d) and the bias [B, 1, S, S] at (b, 0, s, every t)."""
    module = hloidx.parse_hlo((DATA / "bshd_flash_bias_fwd_bwd.hlo").read_text())
    call = next(i for i in module.entry.instructions if i.name == "custom-call.47")
    row = output_to_input(call)[0]
    assert str(row[0].maps[0]).startswith("(d0, d1, d2, d3)[s0] -> (d0, d2, d1, s0)")
    assert str(row[3].maps[0]).startswith("(d0, d1, d2, d3)[s0] -> (d0, 0, d2, s0)")
