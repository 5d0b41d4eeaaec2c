"""The fast reader of map text gives exactly what the Lark grammar gives, or gives up."""

from __future__ import annotations

from unittest import mock

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark import UnexpectedInput

from hloidx.errors import HloidxError
from hloidx.maps import expr_depth, map_tokens
from hloidx.maps import fast_map_parser as fmp
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
from tests.strategies import expressions, factorizations, indexing_maps


def _lark(text: str):
    lark, builder = _parser()
    builder.reset(Source("<map>", text), Interval.FULL)
    try:
        return lark.parse(_unwrap(text))
    finally:
        builder.reset(Source("<map>", ""), Interval.FULL)


def _both_ways(text: str) -> list[IndexingMap | None]:
    """The fast reader's map read as a short text is (tokens, runs memoised) and as a long one
    is (folded into its distinct groups first, hloidx.maps.text_groups)."""
    read = []
    for fold_from in (10**9, 0):
        with mock.patch.object(fmp, "_FOLD_FROM", fold_from):
            read.append(fast_parse(_unwrap(text), Interval.FULL, MAX_EXPR_DEPTH))
    return read


def _agree(text: str) -> bool:
    """True when the fast reader read ``text`` both ways, the same map as Lark; False when it
    gave up both ways."""
    read = _both_ways(text)
    if read == [None, None]:
        return False
    reference = _lark(text)  # the fast reader never accepts what the grammar rejects
    for fast in read:
        assert fast is not None, text  # well-formed text is read both ways
        assert fast == reference, text
        assert format_map(fast) == format_map(reference), text
    return True


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indexing_maps(), st.sampled_from(["floordiv", "/"]), st.booleans())
def test_fast_reader_agrees_with_the_grammar(m, spelling: str, multiline: bool) -> None:
    text = format_map(m, spelling, multiline=multiline)
    assert _agree(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indexing_maps(), st.sampled_from(["floordiv", "/"]), st.sampled_from(["+", "-", "*", "/"]))
def test_operators_glued_to_their_operands_are_read_too(m, spelling: str, mark: str) -> None:
    """The reader first cuts text at its brackets and commas only (printed maps space out
    their operators); a text with an operator glued to a neighbour is cut again."""
    text = format_map(m, spelling)
    squeezed = text.replace(f" {mark} ", mark)
    assert _agree(squeezed) or _both_ways(text) == [None, None], squeezed
    # Without the second cut, a glued operator is part of a token that no rule accepts (or
    # stands alone, between brackets): the reader gives up or reads the same map.
    with mock.patch.object(fmp, "SPACED_ALL", map_tokens.SPACED_BRACKETS):
        _agree_or_give_up(squeezed)


def test_xla_maps_take_the_fast_path() -> None:
    texts = paths.xla_map_texts()
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
    assert _both_ways(text) == [None, None]
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


def _atom_groups(text: str) -> list[str]:
    """Every parenthesised group of ``text`` after the arrow that is an operand (not the
    results list, not a min/max call), found with a plain stack: the test's own count."""
    start = text.index("->") + 2
    found: list[str] = []
    opened: list[tuple[int, bool]] = []
    for i in range(start, len(text)):
        if text[i] == "(":
            before = text[start:i].rstrip()
            call = before == "" or before.endswith(("min", "max"))
            opened.append((i, not call))
        elif text[i] == ")":
            j, is_group = opened.pop()
            if is_group:
                found.append(text[j : i + 1])
    return found


@pytest.mark.parametrize("fold_from", [10**9, 0], ids=["runs memoised", "folded"])
def test_repeated_groups_are_read_once_and_give_what_the_grammar_gives(
    monkeypatch, fold_from: int
) -> None:
    text = _reshape_chain_text()
    groups = _atom_groups(text)
    assert text.count("(d0 * 6 + d1)") >= 10  # the case this covers: many repeats
    assert len(groups) >= 5 * len(set(groups))
    assert _agree(text)
    calls = [0]
    real_expr = fmp._Reader.expr

    def counted(self):
        calls[0] += 1
        return real_expr(self)

    with monkeypatch.context() as patch:
        patch.setattr(fmp._Reader, "expr", counted)
        patch.setattr(fmp, "_FOLD_FROM", fold_from)
        parsed = fast_parse(text, Interval.FULL, MAX_EXPR_DEPTH)
    assert parsed == _lark(text)
    # each distinct group once, each result and each constraint at most once more
    bound = len(set(groups)) + parsed.num_results + len(parsed.constraints)
    assert calls[0] <= bound, (calls[0], bound)


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
    with mock.patch.object(expr_depth, "MAX_EXPR_DEPTH", limit):
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


def _agree_or_give_up(text: str) -> bool:
    """The fast reader gives up, or reads what the grammar reads; it never accepts text the
    grammar rejects. True when it read the text."""
    read = _both_ways(text)
    try:
        reference = _lark(text)
    except (HloidxError, UnexpectedInput):
        assert read == [None, None], text
        return False
    for fast in read:
        if fast is not None:
            assert fast == reference, text
            assert format_map(fast) == format_map(reference), text
    return read != [None, None]


def _bench_module(name: str):
    import sys

    sys.path.insert(0, str(paths.ROOT / "bench"))
    return __import__(name)


@st.composite
def _reshape_chains(draw: st.DrawFn) -> list[list[int]]:
    """A chain of 2 to 5 shapes of one size, each a random factorization (as the reshape-chain
    benchmark draws them): composed naively, their maps restate groups hundreds of times."""
    size = draw(st.sampled_from([12, 24, 36, 60, 120, 210, 360]))
    return draw(st.lists(factorizations(size), min_size=2, max_size=5))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_reshape_chains(), st.booleans())
def test_long_redundant_chains_agree_with_the_grammar(shapes, simplified_steps: bool) -> None:
    chain = _bench_module("reshape_chains").chain_map(shapes, simplified_steps)
    text = format_map(chain)
    assert _agree(text)
    assert _both_ways(text) == [chain, chain]


# Edits that break well-formed text in the ways a reader can go wrong: parentheses that no
# longer balance, separators and operators out of place, names and numbers cut or glued.
_GLYPHS = "()()(),,+-*#[]{}:0 1d%/\n"


@st.composite
def _edited_texts(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        text = format_map(draw(indexing_maps(with_names=True)), multiline=draw(st.booleans()))
    else:
        text = format_map(_bench_module("reshape_chains").chain_map(draw(_reshape_chains())))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["delete", "insert", "replace", "repeat"]))
        glyph = draw(st.sampled_from(_GLYPHS))
        if edit == "delete":
            text = text[:at] + text[at + 1 :]
        elif edit == "insert":
            text = text[:at] + glyph + text[at:]
        elif edit == "replace":
            text = text[:at] + glyph + text[at + 1 :]
        else:  # a stretch written twice, as a copy-paste slip would
            length = draw(st.integers(1, 30))
            text = text[: at + length] + text[at : at + length] + text[at + length :]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edited_texts())
def test_edited_texts_give_up_or_agree_with_the_grammar(text: str) -> None:
    _agree_or_give_up(text)


@pytest.mark.parametrize(
    "text",
    [
        "(d0) -> (min (d0, 1), max\t(d0, 2)), domain: d0 in [0, 9]",  # calls spaced out
        "(d0) -> ((d0), (((d0)))), domain: (d0) in [0, 9], ((d0 + 1)) in [1, 5]",
        "(d0, d1) -> ((d0 + d1) * 2, (d0 + d1) mod 3), domain: d0 in [0, 9], d1 in [0, 9], "
        "(d0 + d1) * 2 in [0, 10], d0 + d1 in [0, 12]",  # a constraint restating a group
        "(d0)->(d0)",
        "(d0) -> ()",
        "() -> ()",
        "(d0) -> (d0) -> (d0), domain: d0 in [0, 9]",
        "(d0) -> (d0 + (d0 - (d0 * (d0 floordiv (2))))), domain: d0 in [0, 9]",
        "(d0) -> ((d0 floordiv 2) (d0 floordiv 2)), domain: d0 in [0, 9]",
        "(d0) -> (min((d0 + 1)), max((d0 + 1), (d0 + 1), 2)), domain: d0 in [0, 9]",
        "(d0) -> (d0), domain: d0 in [0, 9], (d0 mod 2 in [0, 1]",
        "(d0) -> (d0), domain: d0 in [0, 9], d0 mod 2) in [0, 1]",
        "(d0) -> (-(d0 mod 4) * 2, -(d0 mod 4) floordiv -3), domain: d0 in [0, 9]",
    ],
)
def test_odd_texts_give_up_or_agree(text: str) -> None:
    _agree_or_give_up(text)


def test_the_benchmark_maps_take_the_fast_path_and_agree() -> None:
    """The simplifier benchmark's corpus and a sample of the reshape-chain generator's maps
    (bench/map_corpus.py, bench/reshape_chains.py): every one is read by the fast reader, as
    the map it was printed from; the grammar reads the shorter ones the same."""
    corpus = _bench_module("map_corpus").corpus()
    rc = _bench_module("reshape_chains")
    chains = [rc.chain_map(s) for s in rc.chains(40, 1)]
    chains += [rc.chain_map(s, True) for _, _, s in rc.non_nesting_chains()[::80]]
    maps = [entry.original for entry in corpus] + chains
    compared = 0
    for m in maps:
        text = format_map(m)
        assert _both_ways(text) == [m, m], text[:300]
        if len(text) <= 4000:
            compared += _agree(text)
    assert compared >= 150


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="(),[]{}:+-*/% \tad01#", max_size=40))
def test_the_unrolled_bracket_cut_is_the_general_one(text: str) -> None:
    # cut_at_brackets spells out cut(text, SPACED_BRACKETS) for speed; the two must agree on
    # every text, including the rarer marks and the operators it leaves glued
    assert map_tokens.cut_at_brackets(text) == map_tokens.cut(text, map_tokens.SPACED_BRACKETS)
