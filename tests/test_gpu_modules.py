"""What XLA:GPU writes: cuBLAS/cuDNN custom-calls and fft get the maps of what they compute.

Each GPU form is paired with the plain form XLA's rewriters start from (a `dot`, a
`convolution`): the maps from the result to every parameter must be equal as relations, with
the same `exact`. fft is checked against the provenance interpreter.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import hloidx
from hloidx.check.oracle import oracle_relation
from hloidx.hlo.chains import chain_maps
from hloidx.maps.domain import relation

GEMM_CONFIG = (
    '{"gemm_backend_config":{"alpha_real":1,"beta":BETA,"dot_dimension_numbers":'
    '{"lhs_contracting_dimensions":["LC"],"rhs_contracting_dimensions":["RC"],'
    '"lhs_batch_dimensions":[LB],"rhs_batch_dimensions":[RB]},"epilogue":"DEFAULT"}}'
)


def _relations(text: str, result: str, parameter: str) -> tuple[set, bool]:
    module = hloidx.parse_hlo(text)
    _, _, reached = chain_maps(module, result, parameter)
    assert not reached.unknown, reached.unknown
    pairs = set()
    for t in reached.maps:
        pairs |= relation(t.map)
    return pairs, all(t.exact for t in reached.maps)


GEMMS = [
    # lhs, rhs, out, lhs contracting, rhs contracting, batch
    ("f32[4,8]", "f32[8,16]", "f32[4,16]", "1", "0", ""),
    ("f32[8,4]", "f32[16,8]", "f32[4,16]", "0", "1", ""),
    ("f32[2,4,8]", "f32[2,8,3]", "f32[2,4,3]", "2", "1", '"0"'),
]


@pytest.mark.parametrize(("lhs", "rhs", "out", "lc", "rc", "batch"), GEMMS)
def test_cublas_gemm_reads_what_the_dot_reads(lhs, rhs, out, lc, rc, batch) -> None:
    config = (
        GEMM_CONFIG.replace("BETA", "0")
        .replace("LC", lc)
        .replace("RC", rc)
        .replace("LB", batch)
        .replace("RB", batch)
    )
    batch_attr = (
        f", lhs_batch_dims={{{batch.strip(chr(34))}}}, rhs_batch_dims={{{batch.strip(chr(34))}}}"
    )
    plain = f"""HloModule m
ENTRY e {{
  a = {lhs} parameter(0)
  b = {rhs} parameter(1)
  ROOT r = {out} dot(a, b), lhs_contracting_dims={{{lc}}}, rhs_contracting_dims={{{rc}}}{batch_attr if batch else ""}
}}
"""
    gpu = f"""HloModule m
ENTRY e {{
  a = {lhs} parameter(0)
  b = {rhs} parameter(1)
  g = ({out}, s8[4096]) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={config}
  ROOT r = {out} get-tuple-element(g), index=0
}}
"""
    for parameter in ("a", "b"):
        assert _relations(gpu, "r", parameter) == _relations(plain, "r", parameter)


def test_cublas_gemm_with_beta_reads_c_where_it_writes() -> None:
    config = GEMM_CONFIG.replace("BETA", "1").replace("LC", "1").replace("RC", "0")
    config = config.replace("LB", "").replace("RB", "")
    gpu = f"""HloModule m
ENTRY e {{
  a = f32[4,8] parameter(0)
  b = f32[8,16] parameter(1)
  c = f32[4,16] parameter(2)
  g = (f32[4,16], s8[4096]) custom-call(a, b, c), custom_call_target="__cublas$lt$matmul", backend_config={config}
  ROOT r = f32[4,16] get-tuple-element(g), index=0
}}
"""
    plain = """HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,16] parameter(1)
  c = f32[4,16] parameter(2)
  d = f32[4,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[4,16] add(d, c)
}
"""
    for parameter in ("a", "b", "c"):
        assert _relations(gpu, "r", parameter) == _relations(plain, "r", parameter)


def test_cudnn_forward_convolution_reads_what_the_convolution_reads() -> None:
    conv = "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"
    plain = f"""HloModule m
ENTRY e {{
  x = f32[1,6,6,2] parameter(0)
  w = f32[3,3,2,4] parameter(1)
  ROOT r = f32[1,6,6,4] convolution(x, w), {conv}
}}
"""
    gpu = f"""HloModule m
ENTRY e {{
  x = f32[1,6,6,2] parameter(0)
  w = f32[3,3,2,4] parameter(1)
  cc = (f32[1,6,6,4], u8[0]) custom-call(x, w), {conv}, custom_call_target="__cudnn$convForward"
  ROOT r = f32[1,6,6,4] get-tuple-element(cc), index=0
}}
"""
    for parameter in ("x", "w"):
        assert _relations(gpu, "r", parameter) == _relations(plain, "r", parameter)


def test_unknown_target_stays_undefined() -> None:
    module = hloidx.parse_hlo(
        'p = f32[4] parameter(0)\nROOT c = f32[4] custom-call(p), custom_call_target="mystery"'
    )
    analysis = hloidx.analyze(module)
    (operand,) = analysis.instructions[-1].operands
    assert operand.status == "unknown"


def test_a_target_of_ones_own_can_be_registered() -> None:
    hloidx.register_custom_call(
        "my$negate", lambda instr: replace(instr, opcode="negate", attributes={})
    )
    module = hloidx.parse_hlo(
        'p = f32[4] parameter(0)\nROOT c = f32[4] custom-call(p), custom_call_target="my$negate"'
    )
    (operand,) = hloidx.analyze(module).instructions[-1].operands
    assert operand.status == "exact"
    assert [str(m) for m in operand.output_to_input] == ["(d0) -> (d0), domain: d0 in [0, 3]"]


@pytest.mark.parametrize(
    ("operand", "result", "kind", "length"),
    [
        ("c64[3,8]", "c64[3,8]", "FFT", "{8}"),
        ("c64[2,4,4]", "c64[2,4,4]", "IFFT", "{4,4}"),
        ("f32[3,8]", "c64[3,5]", "RFFT", "{8}"),
        ("c64[3,5]", "f32[3,8]", "IRFFT", "{8}"),
    ],
)
def test_fft_reads_every_element_of_the_transformed_dimensions(operand, result, kind, length):
    module = hloidx.parse_hlo(
        f"p = {operand} parameter(0)\nROOT f = {result} fft(p), fft_type={kind}, fft_length={length}"
    )
    root = module.entry.root
    (operand_analysis,) = hloidx.analyze(module).instructions[-1].operands
    assert operand_analysis.status == "exact"
    got = set()
    for m in operand_analysis.output_to_input:
        got |= relation(m)
    assert got == oracle_relation(root, 0)


ASYNC = """HloModule m, replica_count=2
add { x = f32[] parameter(0)
 y = f32[] parameter(1)
 ROOT z = f32[] add(x, y) }
ENTRY e {
  p = f32[8,16] parameter(0)
  cps = (f32[8,16], f32[8,16], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,0}}
  cpd = f32[8,16] collective-permute-done(cps)
  ars = f32[8,16] all-reduce-start(cpd), replica_groups={{0,1}}, to_apply=add
  ard = f32[8,16] all-reduce-done(ars)
  cs = (f32[8,16], f32[8,16], u32[]) copy-start(ard)
  ROOT cd = f32[8,16] copy-done(cs)
}
"""

SYNC = """HloModule m, replica_count=2
add { x = f32[] parameter(0)
 y = f32[] parameter(1)
 ROOT z = f32[] add(x, y) }
ENTRY e {
  p = f32[8,16] parameter(0)
  cp = f32[8,16] collective-permute(p), source_target_pairs={{0,1},{1,0}}
  ar = f32[8,16] all-reduce(cp), replica_groups={{0,1}}, to_apply=add
  ROOT cd = f32[8,16] copy(ar)
}
"""


def test_async_pairs_read_what_the_synchronous_ops_read() -> None:
    assert _relations(ASYNC, "cd", "p") == _relations(SYNC, "cd", "p")
    pairs, exact = _relations(ASYNC, "cd", "p")
    assert pairs
    assert exact


def test_xla_topk_custom_call_reads_whole_rows_for_values_and_indices() -> None:
    text = """HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GT
}
ENTRY e {
  v = f32[4,7] parameter(0)
  ROOT t = (f32[4,3], s32[4,3]) custom-call(v), custom_call_target="TopK", called_computations={cmp}
}
"""
    module = hloidx.parse_hlo(text)
    (operand,) = hloidx.analyze(module).instructions[-1].operands
    assert operand.status == "exact"
    got = set()
    for m in operand.output_to_input:
        got |= relation(m)
    # both elements (values and indices) read the row: the oracle's union over the tuple
    assert got == oracle_relation(module.entry.root, 0)
    assert got == {((i, j), (i, c)) for i in range(4) for j in range(3) for c in range(7)}


@pytest.mark.parametrize("target", ["Sharding", "MoveToHost", "MoveToDevice"])
def test_annotation_custom_calls_return_their_operand(target: str) -> None:
    text = f'p = f32[4,6] parameter(0)\nROOT c = f32[4,6] custom-call(p), custom_call_target="{target}", sharding={{replicated}}'
    module = hloidx.parse_hlo(text)
    (operand,) = hloidx.analyze(module).instructions[-1].operands
    assert operand.status == "exact"
    assert [str(m) for m in operand.output_to_input] == [
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 5]"
    ]
    # a reshaping annotation is not one: no guess
    bad = text.replace("ROOT c = f32[4,6]", "ROOT c = f32[24]")
    (operand,) = hloidx.analyze(hloidx.parse_hlo(bad)).instructions[-1].operands
    assert operand.status == "unknown"
