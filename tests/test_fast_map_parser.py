"""The fast reader of map text gives exactly what the Lark grammar gives, or gives up."""

from __future__ import annotations

import json

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hloidx.errors import HloidxError
from hloidx.maps.fast_map_parser import fast_parse
from hloidx.maps.interval import Interval
from hloidx.maps.printer import format_map
from hloidx.maps.syntax import _parser, _unwrap, parse_map
from hloidx.source import Source
from tests.strategies import indexing_maps


def _lark(text: str):
    lark, builder = _parser()
    builder.reset(Source("<map>", text), Interval.FULL)
    try:
        return lark.parse(_unwrap(text))
    finally:
        builder.reset(Source("<map>", ""), Interval.FULL)


def _agree(text: str) -> bool:
    """True when the fast reader read ``text`` (the same map as Lark); False when it gave up."""
    fast = fast_parse(_unwrap(text), Interval.FULL)
    if fast is None:
        return False
    reference = _lark(text)  # the fast reader never accepts what the grammar rejects
    assert fast == reference, text
    assert format_map(fast) == format_map(reference), text
    return True


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indexing_maps(), st.sampled_from(["floordiv", "/"]), st.booleans())
def test_fast_reader_agrees_with_the_grammar(m, spelling: str, multiline: bool) -> None:
    text = format_map(m, spelling, multiline=multiline)
    assert _agree(text)


def test_xla_maps_take_the_fast_path() -> None:
    texts = []
    for name in ("map_cases.json", "analysis_cases.json"):
        for case in json.loads((paths.XLA_TESTS / name).read_text()):
            for entry in case.get("expected", []):
                for text in [entry.get("map_normalized")] + [
                    o.get("map_normalized") for o in entry.get("operands", [])
                ]:
                    if text and "->" in text and not text.startswith("operand"):
                        texts.append(text)
    fast = sum(_agree(t) for t in texts)
    assert fast >= 0.95 * len(texts), (fast, len(texts))


@pytest.mark.parametrize(
    "text",
    [
        "(d0) -> (d0), domain: d0 in [0, 9],",  # a trailing comma
        "(d0) -> (d0 + ), domain: d0 in [0, 9]",
        "(d0, d0) -> (d0), domain: d0 in [0, 9], d0 in [0, 9]",  # declared twice
        "(d0) -> (d1), domain: d0 in [0, 9]",  # undeclared
        "(d0) -> (d0 floordiv 0), domain: d0 in [0, 9]",  # a zero divisor
        "(d0) -> (d0), domain: d0 in [0, 99999999999999999999]",  # beyond int64
        "(d0) -> (d0) domain d0 in [0, 9]",
        "UNDEFINED",
    ],
)
def test_the_fast_reader_gives_up_on_anything_unusual(text: str) -> None:
    assert fast_parse(text, Interval.FULL) is None
    if text != "UNDEFINED":
        with pytest.raises(HloidxError):
            parse_map(text)
