"""The per-op counts of :class:`GpuCostAnalysis` against XLA's own ``HloCostAnalysis``, run by
jaxlib's CPU client (``hlo_module_cost_analysis``) on one-op modules: bytes accessed, each
operand's bytes and utilization, output bytes (and flops where the GPU analysis does not
override the base class). jaxlib's client counts each input access once
(``count_multiple_input_accesses = false``), so the comparison uses the same option."""

from __future__ import annotations

import pytest

from hloidx.hlo.syntax import parse_hlo
from hloidx.perf.xla_cost_analysis import GpuCostAnalysis

jax = pytest.importorskip("jax", reason="jax is needed to run XLA's own cost analysis")
_hlo = pytest.importorskip("jaxlib._hlo", reason="jaxlib's HLO text parser is needed")

_OPS = {
    "dynamic-slice": """p0 = f32[64,128] parameter(0)
  p1 = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT r = f32[4,128] dynamic-slice(p0, p1, z), dynamic_slice_sizes={4,128}""",
    "dynamic-update-slice": """p0 = f32[64,128] parameter(0)
  u = f32[2,128] parameter(1)
  p1 = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT r = f32[64,128] dynamic-update-slice(p0, u, p1, z)""",
    "slice": """p0 = f32[64,128] parameter(0)
  ROOT r = f32[16,64] slice(p0), slice={[0:16],[64:128]}""",
    "gather": """p0 = f32[1000,64] parameter(0)
  i = s32[32,1] parameter(1)
  ROOT r = f32[32,64] gather(p0, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}""",
    "transpose": """p0 = f32[64,128] parameter(0)
  ROOT r = f32[128,64] transpose(p0), dimensions={1,0}""",
    "transpose-unit-dim": """p0 = f32[64,1,128] parameter(0)
  ROOT r = f32[1,64,128] transpose(p0), dimensions={1,0,2}""",
    "transpose-bitcast": """p0 = f32[64,128]{0,1} parameter(0)
  ROOT r = f32[128,64]{1,0} transpose(p0), dimensions={1,0}""",
    "broadcast": """p0 = f32[64] parameter(0)
  ROOT r = f32[64,32] broadcast(p0), dimensions={0}""",
    "dot": """a = f32[64,32] parameter(0)
  b = f32[32,16] parameter(1)
  ROOT r = f32[64,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""",
    "convolution": """a = f32[1,8,16,16] parameter(0)
  b = f32[4,8,3,3] parameter(1)
  ROOT r = f32[1,4,16,16] convolution(a, b), window={size=3x3 pad=1_1x1_1},
    dim_labels=bf01_oi01->bf01""",
    "tuple": """a = f32[64] parameter(0)
  b = f32[32] parameter(1)
  ROOT r = (f32[64], f32[32]) tuple(a, b)""",
    "pad": """a = f32[64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[80] pad(a, z), padding=8_8""",
    "copy": """a = f32[64,32]{1,0} parameter(0)
  ROOT r = f32[64,32]{0,1} copy(a)""",
    "iota": """ROOT r = s32[64,32] iota(), iota_dimension=1""",
    "reverse": """a = f32[64,32] parameter(0)
  ROOT r = f32[64,32] reverse(a), dimensions={0}""",
    "reshape": """a = f32[64,32] parameter(0)
  ROOT r = f32[2048] reshape(a)""",
    "bitcast": """a = f32[64,32] parameter(0)
  ROOT r = f32[2048] bitcast(a)""",
    "concatenate": """a = f32[64,32] parameter(0)
  b = f32[64,16] parameter(1)
  ROOT r = f32[64,48] concatenate(a, b), dimensions={1}""",
}

_ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""
_WITH_ADD = {
    "scatter": """op = f32[1000,64] parameter(0)
  i = s32[16,1] parameter(1)
  u = f32[16,64] parameter(2)
  ROOT r = f32[1000,64] scatter(op, i, u), update_window_dims={1}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add""",
    "reduce-window": """p0 = f32[8,8] parameter(0)
  c0 = f32[] constant(0)
  ROOT r = f32[3,4] reduce-window(p0, c0), window={size=4x5 stride=2x1}, to_apply=add""",
}
#: ops whose flops the GPU analysis counts as the base class does
_SAME_FLOPS = ("dot", "convolution")


def _modules() -> dict[str, str]:
    out = {k: f"HloModule m\n\nENTRY e {{\n  {v}\n}}\n" for k, v in _OPS.items()}
    out.update({k: f"HloModule m\n\n{_ADD}\nENTRY e {{\n  {v}\n}}\n" for k, v in _WITH_ADD.items()})
    return out


MODULES = _modules()


def _xla(text: str) -> dict[str, float]:
    from jax._src.lib import xla_client

    client = jax.devices("cpu")[0].client
    return xla_client._xla.hlo_module_cost_analysis(client, _hlo.hlo_module_from_text(text))


def _ours(text: str) -> dict[str, float]:
    """The entry computation's sum of properties, in XLA's key names."""
    module = parse_hlo(text)
    analysis = GpuCostAnalysis(count_multiple_input_accesses=False)
    analysis.analyze(module.entry)
    total: dict[str, float] = {}
    for instr in module.entry.instructions:
        for key, value in analysis.properties[id(instr)].items():
            if key in ("bytes", "flops"):
                name = "bytes accessed" if key == "bytes" else "flops"
            elif isinstance(key, tuple) and key[0] == "operand_bytes":
                name = f"bytes accessed{key[1]}{{}}"
            elif isinstance(key, tuple) and key[0] == "operand_util":
                name = f"utilization{key[1]}{{}}"
            elif isinstance(key, tuple) and key[0] == "output_bytes":
                name = "bytes accessedout{}"
            else:
                continue
            total[name] = total.get(name, 0.0) + value
    return total


def _jaxlib_version() -> tuple[int, ...]:
    import jaxlib

    return tuple(int(x) for x in jaxlib.__version__.split(".")[:2])


@pytest.mark.parametrize("op", sorted(MODULES))
def test_per_op_counts_match_xla_hlo_cost_analysis(op):
    if op == "tuple" and _jaxlib_version() >= (0, 12):
        # XLA at the reference commit counts a tuple as GetShapeSize of its shape, its index
        # table (8 bytes a pointer: 16 for two elements), as jaxlib 0.10 does; jaxlib 0.12's
        # client gives 8 for the same module. hloidx follows the reference commit.
        pytest.skip("jaxlib >= 0.12 counts a tuple's index table differently from the reference")
    text = MODULES[op]
    xla, ours = _xla(text), _ours(text)
    keys = [k for k in xla if k.startswith(("bytes accessed", "utilization"))]
    if op in _SAME_FLOPS:
        keys.append("flops")
    assert keys
    for key in keys:
        assert ours.get(key, 0.0) == pytest.approx(xla[key], rel=1e-6), key
