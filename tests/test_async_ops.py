"""Asynchronous wrappers (async-start/-update/-done and XLA's short forms), send/recv, and
tuples inside tuples, which the walkers give up on rather than confuse."""

from __future__ import annotations

import pytest

import hloidx
from hloidx.errors import HloidxError
from hloidx.hlo.chains import chain_maps
from hloidx.hlo.opcodes import async_sugar
from hloidx.maps.domain import relation


def _operand(text: str, name: str, k: int = 0):
    analysis = hloidx.analyze(hloidx.parse_hlo(text))
    (instr,) = [i for i in analysis.instructions if i.name == name]
    return instr.operands[k]


@pytest.mark.parametrize(
    ("opcode", "expected"),
    [
        ("reduce-scatter-start", ("reduce-scatter", "start")),
        ("all-to-all-update", ("all-to-all", "update")),
        ("fusion-done", ("fusion", "done")),
        ("all-gather-start", None),  # a real op, not sugar
        ("copy-done", None),
        ("async-start", None),
        ("nosuch-start", None),
        ("reduce-scatter-finish", None),
    ],
)
def test_short_forms_of_async_wrappers_are_recognised(opcode, expected) -> None:
    assert async_sugar(opcode) == expected


def test_an_unknown_op_with_a_start_suffix_is_still_not_hlo() -> None:
    with pytest.raises(HloidxError, match="unknown opcode"):
        hloidx.parse_hlo("p = f32[4] parameter(0)\nROOT s = ((f32[4]), f32[4]) nosuch-start(p)")


SEND_RECV = """HloModule sr

ENTRY main {
  p = f32[8] parameter(0)
  tok = token[] after-all()
  s = (f32[8], u32[], token[]) send(p, tok), channel_id=7
  sd = token[] send-done(s), channel_id=7
  rv = (f32[8], u32[], token[]) recv(tok), channel_id=8
  rd = (f32[8], token[]) recv-done(rv), channel_id=8
  g = f32[8] get-tuple-element(rd), index=0
  ROOT r = f32[8] add(g, p)
}
"""


def test_send_holds_its_data_as_it_is() -> None:
    data = _operand(SEND_RECV, "s", 0)
    assert data.status == "exact"
    got = set()
    for m in data.output_to_input:
        got |= relation(m)
    assert got == {((i,), (i,)) for i in range(8)}


def test_what_recv_delivers_reads_no_value_of_the_module() -> None:
    module = hloidx.parse_hlo(SEND_RECV)
    with pytest.raises(HloidxError, match="no path"):
        chain_maps(module, "g", "p")
    # the root reads p only through the add
    _, _, reached = chain_maps(module, "r", "p")
    assert [str(t.map) for t in reached.maps] == ["(d0) -> (d0), domain: d0 in [0, 7]"]
    assert _operand(SEND_RECV, "rd").status == "exact"


WRAPPED_NOT_ONE_OP = """HloModule w

body {
  q = f32[8] parameter(0)
  n = f32[8] negate(q)
  ROOT e = f32[8] exponential(n)
}

ENTRY main {
  p = f32[8] parameter(0)
  start = ((f32[8]), f32[8], s32[]) async-start(p), calls=body
  ROOT r = f32[8] async-done(start)
}
"""


def test_a_wrapped_computation_of_several_ops_is_undefined_not_guessed() -> None:
    assert _operand(WRAPPED_NOT_ONE_OP, "start").status == "unknown"
    _, _, reached = chain_maps(hloidx.parse_hlo(WRAPPED_NOT_ONE_OP), "r", "p")
    assert reached.unknown


NESTED = """HloModule nested

ENTRY main {
  p = f32[4] parameter(0)
  q = f32[6] parameter(1)
  inner = (f32[4], f32[6]) tuple(p, q)
  outer = ((f32[4], f32[6]), f32[6]) tuple(inner, q)
  back = (f32[4], f32[6]) get-tuple-element(outer), index=0
  ROOT r = f32[6] get-tuple-element(back), index=1
}
"""


def test_a_tuple_inside_a_tuple_is_given_up_not_confused() -> None:
    # r is q; without the guard the path reached p (element 0 of outer) with a wrong map
    module = hloidx.parse_hlo(NESTED)
    for parameter in ("p", "q"):
        try:
            _, _, reached = chain_maps(module, "r", parameter)
        except HloidxError:
            continue  # no path at all is true too
        assert reached.unknown or all(t.map.num_dims == 1 for t in reached.maps)
        assert reached.unknown, parameter
