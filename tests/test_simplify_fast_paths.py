"""The simplifier's shortcuts (issue #31) against what they stand for: a digit sum's
expression against ``_combine``; the digit pass's hand-made quotients and remainders against
evaluation at every point and against ``_put``; the shared simplifiers' keys; the memo's key
for the default options; ``d * c`` against what the rewrite loop makes of it (its value where
it is pinned, else itself) and against evaluation."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx.maps.digits import _expr, _NotDigits, _opaque_split, _put, _split
from hloidx.maps.expr import Mul, const, dim, floordiv, mod
from hloidx.maps.expr_simplify import ExprSimplifier, _shared_simplifier
from hloidx.maps.indexing_map import IndexingMap, Variable
from hloidx.maps.interval import Interval
from hloidx.maps.linear_form import _combine
from hloidx.maps.map_simplify import SimplifyOptions
from hloidx.maps.range_eval import RangeEvaluator
from hloidx.maps.simplify import clear_caches, simplify
from hloidx.maps.traversal import evaluate

SIZES = {0: 7, 1: 12, 2: 30, 3: 2}


@st.composite
def digit_forms(draw):
    """A normal digit form (as _put leaves digits) over dimensions of SIZES, and a constant."""
    form: dict = {}
    for _ in range(draw(st.integers(0, 5))):
        v = draw(st.sampled_from(sorted(SIZES)))
        a = draw(st.sampled_from([1, 2, 3, 5]))
        b = draw(st.sampled_from([None, 2, 3, 4]))
        _put(form, (v, a, b), draw(st.integers(-9, 9).filter(bool)), SIZES)
    return form, draw(st.integers(-20, 20))


def _digit_expr(v: int, a: int, b: int | None):
    x = dim(v) if a == 1 else floordiv(dim(v), a)
    return x if b is None else mod(x, b)


@settings(max_examples=300, deadline=None)
@given(digit_forms())
def test_a_digit_sum_is_the_tree_combine_builds(case) -> None:
    form, k = case
    expected = _combine([(_digit_expr(*d), c) for d, c in form.items()], k)
    assert _expr(form, k) == expected


def _single_and_paired_forms():
    digits = [(v, a, b) for v in sorted(SIZES) for a in (1, 2, 3, 5) for b in (None, 2, 3, 4, 6)]
    for digit in digits:
        for c in range(1, 7):
            yield {digit: c}
    for first, second in zip(digits, digits[7:], strict=False):
        yield {first: 2, second: 3}


def _value(form: dict, k: int, point: dict) -> int:
    """A digit form's value at a point (a sum's digit: of the sum's value)."""
    total = k
    for (v, a, b), c in form.items():
        x = point[v] if type(v) is int else _value(dict(v[1]), 0, point)
        x //= a
        total += c * (x if b is None else x % b)
    return total


def _points(form: dict):
    used = sorted({v for v, _, _ in form})
    for values in itertools.product(*(range(SIZES[v]) for v in used)):
        yield dict(zip(used, values, strict=True))


def test_split_parts_are_the_quotient_and_remainder_as_put_leaves_them() -> None:
    # What _split and _opaque_split make by hand: the quotient and remainder at every point,
    # and digits as _put leaves them (putting the parts again changes nothing, not even
    # the order).
    for given_form in _single_and_paired_forms():
        form: dict = {}
        for digit, c in given_form.items():
            _put(form, digit, c, SIZES)
        for d in range(2, 13):
            sizes = dict(SIZES)
            for split in (_split, _opaque_split):
                try:
                    (high, q), (low, r) = split(dict(form), 0, d, sizes)
                except _NotDigits:
                    continue  # (outside the exact case: nothing made)
                for point in _points(form):
                    x = _value(form, 0, point)
                    assert (_value(high, q, point), _value(low, r, point)) == divmod(x, d)
                for part in (high, low):
                    again: dict = {}
                    for digit, c in part.items():
                        _put(again, digit, c, sizes)
                    assert again == part, (form, d, split.__name__)
                    assert list(again) == list(part)


def test_equal_domains_share_one_simplifier_and_others_do_not() -> None:
    clear_caches()
    a = IndexingMap.identity([4, 6])
    b = IndexingMap.identity([4, 6])
    c = IndexingMap.identity([6, 4])
    assert _shared_simplifier(a.bounds()) is _shared_simplifier(b.bounds())
    assert _shared_simplifier(a.bounds()) is not _shared_simplifier(c.bounds())
    constrained = ((dim(0) + dim(1), Interval(0, 3)),)
    assert _shared_simplifier(a.bounds(), constrained) is not _shared_simplifier(a.bounds())


def test_default_options_spelt_out_simplify_alike() -> None:
    clear_caches()
    m = IndexingMap(
        ((dim(0) * 6 + dim(1)) // 4, (dim(0) * 6 + dim(1)) % 4),
        (Variable(Interval(0, 3)), Variable(Interval(0, 5))),
    )
    first = simplify(m)
    assert simplify(m, options=SimplifyOptions()) == first
    assert simplify(m) is first  # memoised


@settings(max_examples=200, deadline=None)
@given(st.integers(-3, 3).filter(lambda c: c not in (0, 1)), st.integers(0, 4), st.integers(0, 4))
def test_a_product_of_a_variable_is_its_value_or_itself(c, lo, width) -> None:
    # d0 * c (settled without the rewrite loop) is what the loop makes of it: its value
    # where its interval is one value (a one-value bound, or a constraint pinning it),
    # else the product itself (no rule rewrites a product); alone and inside a sum.
    product = Mul(dim(0), const(c))
    bounds = {dim(0): Interval(lo, lo + width), dim(1): Interval(0, 3)}
    for constraints in ((), ((product, Interval(lo * c, lo * c)),)):
        pinned = width == 0 or bool(constraints)
        simplifier = ExprSimplifier(RangeEvaluator(bounds, constraints))
        expected = const(lo * c) if pinned else product
        assert simplifier.simplify(product) == expected
        total = simplifier.simplify(product + dim(1))
        for d0 in range(lo, lo + width + 1):
            if pinned and d0 != lo:
                continue
            for d1 in range(4):
                assert evaluate(total, {dim(0): d0, dim(1): d1}) == d0 * c + d1
