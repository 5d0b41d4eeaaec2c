"""Brief fuzzing of the two parsers: any text gives a map/module or one of our located errors."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hloidx.errors import HloidxError
from hloidx.hlo.syntax import parse_hlo, parse_hlo_lenient
from hloidx.maps.syntax import parse_map

MAP_ALPHABET = st.sampled_from(
    [
        *list('()[]{},:-+*/%<>"# \n'),
        "d0",
        "d1",
        "s0",
        "rt0",
        " floordiv ",
        " mod ",
        " ceildiv ",
        "min(",
        "max(",
        "domain",
        " in ",
        "->",
        "0",
        "1",
        "16",
        "-3",
        "9223372036854775808",
    ]
)
HLO_ALPHABET = st.sampled_from(
    [
        *list('()[]{},:=%/*"\n '),
        "HloModule m",
        "ENTRY",
        "ROOT",
        "p0",
        "p1",
        "f32",
        "s32",
        "[10,20]",
        "{1,0}",
        "parameter(0)",
        "add",
        "broadcast",
        "dimensions={1}",
        "fusion",
        "calls=",
        "kind=kLoop",
        "0",
        "-1",
        "e {",
        "}",
    ]
)


def _fuzz_text(alphabet):
    return st.lists(alphabet, max_size=40).map("".join) | st.text(max_size=80)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_fuzz_text(MAP_ALPHABET))
def test_map_parser_never_crashes(text):
    try:
        parse_map(text, "<fuzz>")
    except HloidxError as error:
        located = error.span is None or error.span.line >= 1
        error.render()
        assert located


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_fuzz_text(HLO_ALPHABET))
def test_hlo_parser_never_crashes(text):
    try:
        parse_hlo(text, "<fuzz>")
    except HloidxError as error:
        error.render()
    _, errors = parse_hlo_lenient(text, "<fuzz>")
    for error in errors:
        assert isinstance(error, HloidxError)
        error.render()
