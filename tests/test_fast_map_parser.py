"""The fast reader of map text gives exactly what the Lark grammar gives, or gives up."""

from __future__ import annotations

import json
from unittest import mock

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hloidx.errors import HloidxError
from hloidx.maps import fast_map_parser as fmp
from hloidx.maps import syntax
from hloidx.maps.expr import Add, FloorDiv, const, dim
from hloidx.maps.fast_map_parser import fast_parse
from hloidx.maps.indexing_map import IndexingMap, Variable
from hloidx.maps.interval import Interval
from hloidx.maps.printer import format_map
from hloidx.maps.syntax import (
    MAX_EXPR_DEPTH,
    _parser,
    _unwrap,
    expression_depth,
    parse_map,
    too_deep,
)
from hloidx.source import Source
from tests.strategies import expressions, indexing_maps


def _lark(text: str):
    lark, builder = _parser()
    builder.reset(Source("<map>", text), Interval.FULL)
    try:
        return lark.parse(_unwrap(text))
    finally:
        builder.reset(Source("<map>", ""), Interval.FULL)


def _agree(text: str) -> bool:
    """True when the fast reader read ``text`` (the same map as Lark); False when it gave up."""
    fast = fast_parse(_unwrap(text), Interval.FULL, MAX_EXPR_DEPTH)
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
        # tokens cut by spacing out punctuation: anything else stays glued and matches nothing
        "(d0) -> (d0 + 1_000), domain: d0 in [0, 9]",  # int() would take it; the grammar not
        "(d0) -> (d0 + \u00b2), domain: d0 in [0, 9]",  # a digit that is not ASCII
        "(d\u00e9) -> (d\u00e9), domain: d\u00e9 in [0, 9]",  # a letter that is not ASCII
        "(d0) -> (d0$), domain: d0 in [0, 9]",
        "(d0) - > (d0), domain: d0 in [0, 9]",
        "(d0) \x01 (d0), domain: d0 in [0, 9]",  # the cutter's stand-in for the arrow
        "(d0) -> ((d0 + 1), domain: d0 in [0, 9]",  # parentheses that do not balance
        "(d0) -> (d0 + 1)), domain: d0 in [0, 9]",
        "(d0) -> (min(d0, 1, 2)), domain: d0 in [0, 9]",
        # the grammar's words for maps without a domain are no variable names
        "(KNOWN)[EMPTY] -> (KNOWN + EMPTY), domain: KNOWN in [0, 9], EMPTY in [0, 3]",
        "(UNDEFINED) -> (UNDEFINED), domain: UNDEFINED in [0, 9]",
    ],
)
def test_the_fast_reader_gives_up_on_anything_unusual(text: str) -> None:
    assert fast_parse(text, Interval.FULL, MAX_EXPR_DEPTH) is None
    if text != "UNDEFINED":
        with pytest.raises(HloidxError):
            parse_map(text)


def _reshape_chain_text() -> str:
    """A composed map that restates the same groups many times (as composition prints them)."""
    d0, d1 = dim(0), dim(1)
    linear = d0 * 6 + d1
    digits = [linear.floordiv(4) * 4 + linear % 4, linear.floordiv(3) * 3 + linear % 3]
    results = tuple(
        (digits[i % 2].floordiv(k + 2) + digits[(i + 1) % 2] % (k + 2))
        for i, k in enumerate([1, 2, 3])
    )
    constraints = (
        *tuple((digit % 5, Interval(0, 3)) for digit in digits),
        (digits[0].floordiv(2), Interval(0, 11)),
    )
    variables = (Variable(Interval(0, 3)), Variable(Interval(0, 5)))
    m = IndexingMap(results, variables, (), (), constraints)
    return format_map(m)


def _expr_calls(text: str, monkeypatch, *, remember_groups: bool) -> tuple[int, object]:
    """How many times the reader starts an expression on ``text``, and what it reads; without
    ``remember_groups`` every repeat of a group is read again (the reference)."""

    class Forgetful(dict):
        def __setitem__(self, key, value) -> None:
            pass

    calls = [0]
    real_expr, real_init = fmp._Reader.expr, fmp._Reader.__init__

    def counted(self):
        calls[0] += 1
        return real_expr(self)

    def init(self, *args) -> None:
        real_init(self, *args)
        if not remember_groups:
            self.groups = Forgetful()

    with monkeypatch.context() as patch:
        patch.setattr(fmp._Reader, "expr", counted)
        patch.setattr(fmp._Reader, "__init__", init)
        parsed = fast_parse(text, Interval.FULL, MAX_EXPR_DEPTH)
    return calls[0], parsed


def test_repeated_groups_read_once_give_what_the_grammar_gives(monkeypatch) -> None:
    text = _reshape_chain_text()
    assert text.count("(d0 * 6 + d1)") >= 10  # the case this covers: many repeats
    assert _agree(text)
    once, parsed = _expr_calls(text, monkeypatch, remember_groups=True)
    every, reference = _expr_calls(text, monkeypatch, remember_groups=False)
    assert parsed == reference
    # a group is read once however often it is written: far fewer expressions are started
    assert 3 * once < every, (once, every)


@settings(max_examples=100, deadline=None)
@given(expressions(2, 1, max_depth=4), st.integers(0, 3))
def test_groups_repeated_inside_random_maps(e, repeats: int) -> None:
    """The same random group written several times over (and nested in itself) reads back."""
    grown = e
    for k in range(repeats):
        grown = (grown + e) % (k + 2) + e.floordiv(k + 1)
    m = IndexingMap(
        (grown, e),
        (Variable(Interval(0, 5)), Variable(Interval(0, 3))),
        (Variable(Interval(0, 2)),),
        (),
        ((grown, Interval(-100, 100)),),
    )
    assert _agree(format_map(m))


@settings(max_examples=150, deadline=None)
@given(expressions(2, 1, max_depth=6), st.integers(1, 8))
def test_depth_check_agrees_with_the_exact_depth(e, limit: int) -> None:
    # a small limit, so that the random trees fall on both sides of it
    with mock.patch.object(syntax, "MAX_EXPR_DEPTH", limit):
        assert too_deep(e) == (expression_depth(e) > limit)
    # the depth each node carries is the depth an independent walk finds
    assert e.depth == expression_depth(e)


def test_depth_check_at_the_limit() -> None:
    e = dim(0)
    for _ in range(MAX_EXPR_DEPTH - 1):
        e = FloorDiv(e, const(2))  # one node per level (the builder would keep it so too)
    assert expression_depth(e) == MAX_EXPR_DEPTH
    assert not too_deep(e)
    deeper = FloorDiv(e, const(2))
    assert too_deep(deeper)
    assert too_deep(Add((deeper, dim(1))))
    assert not too_deep(Add((e, dim(1))).terms[0])


def test_no_group_or_domain_entry_is_read_twice(monkeypatch) -> None:
    """Every parenthesised group and domain entry whose tokens were read before is recognised
    (a reshape chain written out in full: the groups nest under the same first tokens, and the
    constraints restate groups of the results)."""
    text = (
        "(d0, d1, d2) -> ((((d0 * 32 + d1 * 4 + d2) floordiv 32) * 32 + (((d0 * 32 + d1 * 4 + "
        "d2) floordiv 8) mod 4) * 8 + (((d0 * 32 + d1 * 4 + d2) floordiv 4) mod 2) * 4 + (d0 * "
        "32 + d1 * 4 + d2) mod 4) floordiv 32, ((((d0 * 32 + d1 * 4 + d2) floordiv 32) * 32 + "
        "(((d0 * 32 + d1 * 4 + d2) floordiv 8) mod 4) * 8 + (((d0 * 32 + d1 * 4 + d2) floordiv "
        "4) mod 2) * 4 + (d0 * 32 + d1 * 4 + d2) mod 4) floordiv 4) mod 8), domain: d0 in [0, "
        "1], d1 in [0, 7], d2 in [0, 3], ((d0 * 32 + d1 * 4 + d2) floordiv 4) mod 2 in [0, 1], "
        "((d0 * 32 + d1 * 4 + d2) floordiv 8) mod 4 in [0, 3], (d0 * 32 + d1 * 4 + d2) floordiv "
        "32 in [0, 1]"
    )
    read: list[tuple[str, ...]] = []
    real_file = fmp._Reader.file

    def recording(self, prefix, entry) -> None:
        read.append(tuple(entry[1]))
        real_file(self, prefix, entry)

    with monkeypatch.context() as patch:
        patch.setattr(fmp._Reader, "file", recording)
        parsed = fast_parse(text, Interval.FULL, MAX_EXPR_DEPTH)
    assert parsed is not None
    assert _agree(text)
    assert len(read) == len(set(read)), [" ".join(r) for r in read if read.count(r) > 1]
