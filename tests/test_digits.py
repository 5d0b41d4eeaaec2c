"""The one-pass digit simplifier (hloidx.maps.digits) against evaluation at every point and
against the rule-by-rule simplifier (``simplify_with_rules`` never takes the digit pass)."""

from __future__ import annotations

import itertools
import random

import pytest

from hloidx.hlo.reshape import linearized_reshape_map
from hloidx.maps import map_simplify
from hloidx.maps.digits import simplify_digits
from hloidx.maps.expr import (
    Add,
    FloorDiv,
    Mod,
    Mul,
    add,
    const,
    dim,
    floordiv,
    mod,
    mul,
    range_var,
)
from hloidx.maps.indexing_map import IndexingMap, Variable, compose
from hloidx.maps.interval import Interval
from hloidx.maps.map_simplify import operation_count
from hloidx.maps.simplify import clear_caches, simplify, simplify_with_rules
from hloidx.maps.traversal import evaluate


def _chain(shapes: list[list[int]]) -> IndexingMap:
    m = IndexingMap.identity(shapes[-1])
    for source, target in zip(reversed(shapes[:-1]), reversed(shapes[1:]), strict=True):
        m = compose(m, linearized_reshape_map(target, source))
    return m


def _factorization(n: int, rng: random.Random) -> list[int]:
    out, x = [], n
    while x > 1:
        divisors = [d for d in range(2, x + 1) if x % d == 0]
        d = rng.choice(divisors)
        out.append(d)
        x //= d
    rng.shuffle(out)
    if rng.random() < 0.2:
        out.insert(rng.randrange(len(out) + 1), 1)
    return out or [1]


def _points(m: IndexingMap):
    ranges = [range(v.bounds.lower, v.bounds.upper + 1) for v in m.dim_vars]
    return itertools.product(*ranges)


def _values(m: IndexingMap, point: tuple[int, ...]) -> tuple[int, ...]:
    env = {dim(i): x for i, x in enumerate(point)}
    return tuple(evaluate(r, env) for r in m.results)


def _maps(seed: int, count: int) -> list[IndexingMap]:
    rng = random.Random(seed)
    maps = []
    for _ in range(count):
        n = rng.choice([4, 6, 8, 12, 16, 18, 24, 30, 32, 36, 48, 60, 64])
        shapes = [_factorization(n, rng) for _ in range(rng.randint(2, 5))]
        maps.append(_chain(shapes))
    return maps


def _sums(seed: int, count: int) -> list[IndexingMap]:
    """Digits of random sums: some in the exact digit case, many not."""
    rng = random.Random(seed)
    maps = []
    for _ in range(count):
        sizes = [rng.choice([1, 2, 3, 4, 6, 8]) for _ in range(rng.randint(1, 3))]
        total = add(
            *(mul(dim(i), rng.choice([1, 2, 3, 4, 6, 8, 12, 16])) for i in range(len(sizes)))
        )
        total = add(total, rng.choice([0, 0, 1, 5, -1]))
        results = []
        for _ in range(2):
            e = total
            for _ in range(rng.randint(1, 3)):
                op = rng.choice((floordiv, mod))
                e = op(e, rng.choice([2, 3, 4, 6, 8]))
                if rng.random() < 0.4:
                    e = add(mul(e, rng.choice([1, 2, 4, -1])), mod(total, rng.choice([2, 4])))
            results.append(e)
        maps.append(IndexingMap.build(results, sizes))
    return maps


CASES = _maps(1, 150) + _sums(2, 300)


def _same_as_every_point_and_the_rules(m: IndexingMap, got: IndexingMap) -> None:
    """``got`` (the digit pass's result) means ``m`` at every point, and is exactly what the
    rule-by-rule simplifier gives."""
    for point in _points(m):
        assert _values(got, point) == _values(m, point), (m, got, point)
    general, _ = simplify_with_rules(m)
    assert operation_count(got) <= operation_count(general), (m, got, general)
    assert got == general, (m, got, general)


@pytest.mark.parametrize("seed", range(6))
def test_digit_maps_match_every_point_and_the_rule_by_rule_simplifier(seed: int) -> None:
    taken = 0
    for m in CASES[seed::6]:
        clear_caches()
        got = simplify_digits(m)
        if got is None:
            continue
        taken += 1
        assert not got.constraints
        _same_as_every_point_and_the_rules(m, got)
        # simplify() takes the digit pass and stays a fixed point.
        assert simplify(m) == got
        assert simplify(got) == got
    assert taken >= 10


def test_the_digit_pass_is_taken_by_simplify(monkeypatch) -> None:
    m = _chain([[2, 3, 4], [6, 4], [24], [2, 3, 4]])
    assert simplify_digits(m) == IndexingMap.identity([2, 3, 4])
    # the general simplifier reaches the same map, so watch which path gave it
    taken = []

    def watched(*args, **kwargs):
        got = simplify_digits(*args, **kwargs)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(map_simplify, "simplify_digits", watched)
    clear_caches()
    assert simplify(m) == IndexingMap.identity([2, 3, 4])
    assert taken == [True]


def test_maps_outside_the_digit_case_are_left_to_the_general_simplifier() -> None:
    d0, d1 = dim(0), dim(1)
    # a negative coefficient, a divisor that does not line up, a symbol, a shifted domain
    assert simplify_digits(IndexingMap.build([floordiv(add(d0, mul(d1, -4)), 4)], [4, 4])) is None
    assert (
        simplify_digits(IndexingMap.build([floordiv(add(mul(d0, 77), d1), 15)], [30, 77])) is None
    )
    # a negative constant stays inside, as written (the general simplifier's choice)
    assert simplify_digits(IndexingMap.build([floordiv(add(d0, -3), 4)], [16])) is None
    # a result that keeps the digit of a sum (`(d0 * 6 + d1) floordiv 8`)
    assert simplify_digits(_chain([[4, 6], [3, 8]])) is None
    # a divisor inside a digit that does not divide the digit's radix
    assert simplify_digits(IndexingMap.build([floordiv(mod(d0, 6), 4)], [12])) is None
    # values near the int64 ends, where interval arithmetic saturates
    huge = IndexingMap.build([floordiv(add(mul(d0, 1 << 30), d1), 1 << 30)], [1 << 40, 1 << 30])
    assert simplify_digits(huge) is None
    with_symbol = IndexingMap.build([add(d0, range_var(0))], [4], [3])
    assert simplify_digits(with_symbol) is None
    shifted = IndexingMap((mod(d0, 4),), (Variable(Interval(2, 7)),), (), (), ())
    assert simplify_digits(shifted) is None


def test_a_constraint_not_implied_is_left_to_the_general_simplifier() -> None:
    d0 = dim(0)
    m = IndexingMap.build([d0], [16]).add_constraints([(mod(d0, 4), Interval(0, 1))])
    assert simplify_digits(m) is None
    implied = IndexingMap.build([d0], [16]).add_constraints([(mod(d0, 4), Interval(0, 3))])
    assert simplify_digits(implied) == IndexingMap.build([d0], [16])


def _hand_written() -> list[IndexingMap]:
    d0, d1 = dim(0), dim(1)
    return [
        # digits that recombine, and some that must not (coefficients that do not match)
        IndexingMap.build([add(mod(d0, 4), mul(floordiv(d0, 4), 4))], [16]),
        IndexingMap.build([add(mod(d0, 4), mul(floordiv(d0, 4), 2))], [16]),
        IndexingMap.build([add(mul(mod(d0, 4), 3), mul(floordiv(d0, 4), 6))], [16]),
        IndexingMap.build([add(mod(d0, 2), mul(mod(floordiv(d0, 2), 4), 2))], [16]),
        IndexingMap.build([add(mod(d0, 2), mul(mod(floordiv(d0, 4), 2), 2))], [16]),
        # a divisor inside a digit whose size is one more than the quotient's radix
        IndexingMap.build([floordiv(d0, 2), mod(d0, 2)], [3]),
        IndexingMap.build([floordiv(add(mul(d0, 4), d1), 2)], [3, 4]),
        IndexingMap.build([mod(floordiv(add(mul(d0, 6), d1), 2), 3)], [4, 6]),
        # a mod that does nothing over the whole range
        IndexingMap.build([mod(d0, 8), mod(floordiv(d0, 2), 4)], [8]),
    ]


def _split_twice() -> list[IndexingMap]:
    """Sums whose quotient or remainder gets a digit twice: once from a digit that the
    divisor cuts (``d0 * 2`` by 8 gives ``(d0 floordiv 4) * 1`` and ``(d0 mod 4) * 2``), once
    as a summand of its own. The summands are in the order written (nodes built directly, not
    sorted by the builders), since the order decides which of the two comes first."""
    d0 = dim(0)
    sums = [
        # the quotient's digit twice: d0 * 2 cut by 8, then (d0 floordiv 4) * 8
        (Add((Mul(d0, const(2)), Mul(FloorDiv(d0, const(4)), const(8)))), 8),
        # the remainder's digit twice: d0 * 2 cut by 4, then d0 mod 2
        (Add((Mul(d0, const(2)), Mod(d0, const(2)))), 4),
    ]
    maps = []
    for total, d in sums:
        for terms in (total.terms, total.terms[::-1]):
            x = Add(terms)
            maps.append(IndexingMap.build([FloorDiv(x, const(d)), Mod(x, const(d))], [16]))
    return maps


@pytest.mark.parametrize("m", _hand_written() + _split_twice(), ids=str)
def test_hand_written_digit_sums(m: IndexingMap) -> None:
    clear_caches()
    got = simplify_digits(m)
    assert got is not None
    _same_as_every_point_and_the_rules(m, got)


# Chains whose sizes do not line up: digits of sums (`(d0 * 77 + d1) floordiv 15`), sums
# with a common factor (`(d0 * 20 + d1 * 10 + ...) floordiv 30`), and their recombination.
UNALIGNED = [
    [[30, 77], [2, 7, 55, 3], [154, 15], [30, 77]],
    [[12, 2, 2, 5], [60, 4], [2, 2, 2, 30], [12, 2, 2, 5]],
    [[2, 4, 60], [2, 40, 6], [2, 2, 6, 2, 10], [2, 2, 2, 60], [2, 4, 60]],
    [[6, 7, 5], [105, 2], [3, 7, 5, 2], [3, 70], [6, 7, 5]],
    [[4, 6], [3, 8], [2, 12], [24], [4, 6]],
]


@pytest.mark.parametrize("shapes", UNALIGNED, ids=str)
def test_chains_that_do_not_line_up(shapes: list[list[int]]) -> None:
    m = _chain(shapes)
    clear_caches()
    got = simplify_digits(m)
    assert got is not None
    _same_as_every_point_and_the_rules(m, got)


def test_digit_sums_are_built_in_xla_summand_order() -> None:
    # _expr writes each summand's sort key from its numbers rather than asking
    # traversal.xla_order_key: the sum it builds must be the one that sorting by that key gives,
    # for digits with and without a divisor, a modulus and a coefficient, and a constant.
    from hloidx.maps.digits import _expr
    from hloidx.maps.traversal import xla_order_key

    rng = random.Random(31)
    for _ in range(400):
        form: dict = {}
        for _ in range(rng.randint(1, 5)):
            digit = (rng.randrange(4), rng.choice([1, 2, 3, 7, 12]), rng.choice([None, 2, 5, 9]))
            form[digit] = rng.choice([1, 1, 2, 6, 35])
        k = rng.choice([0, 0, 1, 17])
        summands = []
        for (v, a, b), c in form.items():
            x = dim(v) if a == 1 else floordiv(dim(v), a)
            if b is not None:
                x = mod(x, b)
            summands.append(x if c == 1 else mul(x, c))
        if k:
            summands.append(const(k))
        expected = (
            summands[0] if len(summands) == 1 else Add(tuple(sorted(summands, key=xla_order_key)))
        )
        assert _expr(form, k) == expected, (form, k)
