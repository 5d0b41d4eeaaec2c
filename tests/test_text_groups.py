"""Cutting map text into its distinct parenthesised groups (``hloidx.maps.text_groups``): the
folded text and the groups give back the text exactly, each group is written once, and text
whose parentheses do not balance is refused."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx.maps.expr import dim
from hloidx.maps.indexing_map import IndexingMap, Variable
from hloidx.maps.interval import Interval
from hloidx.maps.printer import format_map
from hloidx.maps.text_groups import _KEY_LENGTH, _MAX_CANDIDATES, fold_groups
from tests.strategies import expressions, indexing_maps

_NAME = re.compile(r" #([0-9]+) ")


def _unfold(folded: str, groups: list[str]) -> str:
    """The text again: every name replaced by its group, parenthesised, recursively."""
    return _NAME.sub(lambda m: "(" + _unfold(groups[int(m.group(1))], groups) + ")", folded)


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _check(text: str) -> tuple[list[str], str]:
    start = text.index("->") + 2
    folded = fold_groups(text, start)
    assert folded is not None, text
    groups, rest = folded
    assert _unfold(rest, groups) == text[start:]
    raws = [_unfold(g, groups) for g in groups]
    # a group inside another is named first; a group's text holds only earlier names
    for index, group in enumerate(groups):
        assert all(int(n) < index for n in _NAME.findall(group)), (index, group)
    # every group is written once (one shorter than the key with groups inside it may repeat,
    # and so may one of more than _MAX_CANDIDATES groups that begin alike, see below)
    counted = [r for r in raws if "(" not in r or len(r) + 2 >= _KEY_LENGTH]
    assert len(counted) == len(set(counted)), [r for r in counted if counted.count(r) > 1]
    return groups, rest


@settings(max_examples=150, deadline=None)
@given(indexing_maps(with_names=True), st.booleans())
def test_random_map_texts_fold_and_unfold(m: IndexingMap, multiline: bool) -> None:
    _check(format_map(m, multiline=multiline))


@settings(max_examples=100, deadline=None)
@given(expressions(2, 1, max_depth=4), st.integers(1, 4))
def test_repeated_groups_are_named_once(e, repeats: int) -> None:
    grown = e
    for k in range(repeats):
        grown = (grown + e) % (k + 2) + e.floordiv(k + 1) * 3
    m = IndexingMap(
        (grown, grown.floordiv(7)),
        (Variable(Interval(0, 5)), Variable(Interval(0, 3))),
        (Variable(Interval(0, 2)),),
        (),
        ((grown, Interval(-100, 100)),),
    )
    text = format_map(m)
    groups, _ = _check(text)
    assert len(groups) <= text.count("(")


def test_a_chain_written_out_in_full_folds_to_its_distinct_groups() -> None:
    d0, d1, d2 = dim(0), dim(1), dim(2)
    linear = d0 * 32 + d1 * 4 + d2
    digits = [linear.floordiv(32), linear.floordiv(8) % 4, linear.floordiv(4) % 2, linear % 4]
    again = digits[0] * 32 + digits[1] * 8 + digits[2] * 4 + digits[3]
    m = IndexingMap(
        (again.floordiv(32), again.floordiv(4) % 8),
        (Variable(Interval(0, 1)), Variable(Interval(0, 7)), Variable(Interval(0, 3))),
        (),
        (),
        tuple((digit, Interval(0, 1)) for digit in digits[1:3]),
    )
    text = format_map(m)
    assert text.count("(d0 * 32 + d1 * 4 + d2)") >= 8
    groups, _ = _check(text)
    assert groups[0] == "d0 * 32 + d1 * 4 + d2"
    assert sum(g == "d0 * 32 + d1 * 4 + d2" for g in groups) == 1


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="()d0 +,minax", max_size=40))
def test_unbalanced_parentheses_are_refused(tail: str) -> None:
    text = "(d0) ->" + tail
    folded = fold_groups(text, text.index("->") + 2)
    assert (folded is not None) == _balanced(tail)
    if folded is not None:
        groups, rest = folded
        assert _unfold(rest, groups) == tail


def test_calls_and_the_results_list_are_kept_as_written() -> None:
    text = "(d0, d1) -> (min(d0, (d1)), max (d0 + 1, d1) + (d0 + 1)), domain: d0 in [0, 3]"
    groups, rest = fold_groups(text, text.index("->") + 2)
    assert groups == ["d1", "d0 + 1"]
    assert rest == " (min(d0,  #0 ), max (d0 + 1, d1) +  #1 ), domain: d0 in [0, 3]"


def test_many_groups_that_begin_alike_still_fold_exactly() -> None:
    """Groups compared at a parenthesis are those filed under its first characters, at most
    _MAX_CANDIDATES of them: beyond that a repeat is named again (never misnamed)."""
    linear = "(d0 * 12 + d1 * 6 + d2 * 3 + d3)"
    terms = [f"({linear} floordiv {k})" for k in range(2, 3 * _MAX_CANDIDATES)]
    text = "(d0, d1, d2, d3) -> (" + " + ".join(terms + terms) + ")"
    start = text.index("->") + 2
    groups, rest = fold_groups(text, start)
    assert _unfold(rest, groups) == text[start:]
    first = [_unfold(g, groups) for g in groups[: len(terms) + 1]]
    assert len(set(first)) == len(first)  # the first time, each is named once
    assert len(groups) < 2 * len(terms)  # the first _MAX_CANDIDATES repeats are recognised
