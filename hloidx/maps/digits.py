"""Maps of mixed-radix digits, simplified in one pass over linear forms.

A reshape chain or a linearize/delinearize pair takes the digits of a sum of dimensions
again and again: ``((d0 * 8 + d1 * 4 + d2) floordiv 4) mod 2`` and so on. When every
dimension starts at 0, each node is a sum of *digits* ``(x floordiv a) mod b`` with exact
coefficients, where ``x`` is a dimension or, where a divisor does not line up with the
coefficients (``(d0 * 77 + d1) floordiv 15``), a sum of digits itself; such a digit of a
sum is taken apart again when the sum's digits are recombined. The whole map is simplified
in one pass over these linear forms, without building the intermediate nodes that the
rule-by-rule simplifier (.simplify) rewrites and simplifies again.

:func:`simplify_digits` gives the simplified map or None. None whenever a step is outside
this exact case (a negative coefficient, a result that keeps the digit of a sum, symbols,
``min``/``max``, a constraint not implied by the bounds, large numbers, ...): the caller then
runs the general simplifier. The form of the result is the general simplifier's canonical
form: digits of dimensions as ``(d floordiv a) mod b`` with the ``floordiv`` and ``mod``
left out where they do nothing, summands collected and in canonical order. The tests check
it against the general simplifier and against evaluation at every point.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from math import gcd
from operator import attrgetter, itemgetter

from .expr import (
    Add,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    const,
    dim,
    mod,
    xla_order_key,
)
from .indexing_map import IndexingMap

#: A digit ``(x floordiv a) mod b`` as ``(x, a, b)``; ``b`` None: no mod. ``x`` is a
#: dimension, by its index (ints hash in C, nodes through ``Expr.__hash__``), or a sum of
#: digits, ``("sum", frozenset of (digit, coefficient))``. Over ``x`` in ``[0, size - 1]``
#: the digit takes the values 0 to ``most = (size - 1) // a``, or to ``b - 1`` if smaller.
Digit = tuple["int | tuple", int, "int | None"]
#: ``Σ coefficient * digit + constant``.
Form = tuple[dict[Digit, int], int]

#: Every ``|coefficient| * size`` and constant stays below this, and a sum has at most
#: ``_MAX_DIGITS`` digits: every value stays below 2^63, where interval arithmetic would
#: saturate (then exact digits and the general simplifier could disagree).
_LIMIT = 1 << 56
_MAX_DIGITS = 64


#: A node's depth (the results' order of work).
_depth = attrgetter("depth")
_first = itemgetter(0)


#: ``id(dim(k))`` by ``k``: dimension nodes below 4096 live for good (see .nodes), so their
#: ids are read once, not looked up on every map.
_DIM_IDS: list[int] = []


def _dim_ids(n: int) -> list[int]:
    """``_DIM_IDS``, holding at least the first ``min(n, 4096)`` dimensions."""
    if n > len(_DIM_IDS):
        _DIM_IDS.extend(id(dim(i)) for i in range(len(_DIM_IDS), min(n, 4096)))
    return _DIM_IDS


class _NotDigits(Exception):
    """The map is not in the exact digit case."""


def simplify_digits(m: IndexingMap, keep: Collection[Var] = ()) -> IndexingMap | None:
    """``m`` simplified, or None when it is not a map of digits (see the module doc).

    ``m`` must be a normal map. Results in ``keep`` (dimensions of size 1 that stay
    variables) are left as they are. Every constraint must be implied by the bounds once
    its expression is a digit sum: it is dropped; otherwise None.
    """
    if m.range_vars or m.rt_vars:
        return None
    sizes: dict[int, int] = {}
    seen: dict = {}  # id(node) -> its form; (id(sum), divisor) -> quotient, remainder
    dim_vars = m.dim_vars
    ids = _DIM_IDS if len(dim_vars) <= len(_DIM_IDS) else _dim_ids(len(dim_vars))
    for k, v in enumerate(dim_vars):
        b = v.bounds
        if b.lower != 0 or not 0 <= b.upper < _LIMIT:
            return None
        sizes[k] = b.upper + 1
        if k < 4096:  # each dimension's form, as _form gives it (on its node: unique)
            seen[ids[k]] = ({(k, 1, None): 1} if b.upper > 0 else {}, 0)
    results = _digit_results(m, sizes, seen, keep)
    if results is None:
        return None
    return IndexingMap(results, m.dim_vars, m.range_vars, m.rt_vars, ())


def digits_over_index(
    m: IndexingMap, strides: list[int], sizes: list[int]
) -> tuple[Expr, ...] | None:
    """The results of ``m`` as digit sums of one variable ``L = Σ d_k * strides[k]`` (each
    dimension ``d_k`` in ``[0, sizes[k] - 1]`` read as the digit ``(L floordiv stride) mod
    size`` of it), written over ``d0`` standing for ``L``; None when a result or constraint is
    no digit sum of ``L`` or a constraint can fail. The digits of ``L`` are set on the map's
    own dimension nodes, so no node is rebuilt (see .linear_index)."""
    if m.range_vars or m.rt_vars or len(sizes) > 4096:  # (dimension nodes are unique below)
        return None
    total = strides[0] * sizes[0]
    if total >= _LIMIT:
        return None
    index_sizes = {0: total}
    seen: dict = {}
    for k, (stride, size) in enumerate(zip(strides, sizes, strict=True)):
        form: dict[Digit, int] = {}
        _put(form, (0, stride, None if k == 0 else size), 1, index_sizes)
        seen[id(dim(k))] = (form, 0)
    return _digit_results(m, index_sizes, seen, ())


def _digit_results(
    m: IndexingMap, sizes: dict[int, int], seen: dict, keep: Collection[Var]
) -> tuple[Expr, ...] | None:
    try:
        # The results first: a result that keeps the digit of a sum ends the pass (the usual
        # way out), before any constraint is looked at; the shallowest first, so that it ends
        # with the least work (a form is its node's, whatever the order they are made in).
        given = m.results
        if len(given) > 1:
            built = {}
            for r in sorted(given, key=_depth):
                if not (keep and r in keep):  # (most maps keep none: no hash of the result)
                    built[id(r)] = _expr(*(seen.get(id(r)) or _form(r, sizes, seen)))
            results = []
            for r in given:
                results.append(r if keep and r in keep else built[id(r)])
        else:
            results = []
            for r in given:
                if keep and r in keep:
                    results.append(r)
                else:
                    results.append(_expr(*(seen.get(id(r)) or _form(r, sizes, seen))))
        for e, interval in m.constraints:
            form, k = seen.get(id(e)) or _form(e, sizes, seen)
            lower = upper = k
            for (v, a, b), c in form.items():
                most = (sizes[v] - 1) // a  # the digit's largest value (see Digit)
                top = c * (most if b is None or b > most else b - 1)
                if top < 0:
                    lower += top
                else:
                    upper += top
            if not (interval.lower <= lower and upper <= interval.upper):
                return None
        return tuple(results)
    except _NotDigits:
        return None


def _put(form: dict[Digit, int], d: Digit, c: int, sizes: dict[int, int]) -> None:
    """``form += c * d``: a digit that is always 0 is left out, a mod that does nothing too."""
    v, a, b = d
    size = sizes[v]
    top = (size - 1) // a + 1
    if b is not None:
        if b < top:
            if b == 1:
                return
        else:
            d = (v, a, None)
            b = None
    if b is None:
        if top <= 1:
            return
        if a == 1 and type(v) is tuple:
            _add(form, v[1], c, sizes)  # a whole sum taken apart earlier: its digits again
            return
    had = form.get(d)
    if had is None:
        if c == 0:
            return
        if len(form) >= _MAX_DIGITS:
            raise _NotDigits
    else:
        c += had
        if c == 0:
            del form[d]
            return
    if (c if c > 0 else -c) * size < _LIMIT:
        form[d] = c
    else:
        raise _NotDigits


def _add(form: dict[Digit, int], digits: Iterable[tuple[Digit, int]], c: int, sizes: dict) -> None:
    """``form += c * Σ k * digit`` for normal digits (:func:`_put` with nothing to normalise)."""
    for digit, k in digits:
        k *= c
        had = form.get(digit)
        if had is None:
            if k == 0:
                continue
            if len(form) >= _MAX_DIGITS:
                raise _NotDigits
        else:
            k += had
            if k == 0:
                del form[digit]
                continue
        if (k if k > 0 else -k) * sizes[digit[0]] < _LIMIT:
            form[digit] = k
        else:
            raise _NotDigits


def _recombine(form: dict[Digit, int], sizes: dict[int, int]) -> None:
    """``c * (x mod b0) + c * b0 * ((x floordiv b0) mod b)`` -> ``c * (x mod (b0 * b))``
    (the general simplifier's ``sum`` rule merges them alike),
    with ``x = v floordiv a0`` (``b`` None: ``c * x``), until no pair is left."""
    while len(form) > 1:
        for low, c in form.items():
            v, a0, b0 = low
            if b0 is None:
                continue
            start = a0 * b0  # where the higher digit starts, and its coefficient
            scaled = c * b0
            for high, ch in form.items():
                if high[1] == start and ch == scaled and high[0] == v:
                    break
            else:
                continue
            break
        else:
            return
        del form[low], form[high]
        merged_digit = (v, a0, None if high[2] is None else b0 * high[2])
        if type(v) is tuple and merged_digit[2] is not None:
            # the digit of a sum: its digits again, where they now line up
            f, fk = dict(v[1]), 0
            if a0 > 1:
                (f, fk), _ = _split(f, 0, a0, sizes)
            _, (f, fk) = _split(f, fk, merged_digit[2], sizes)
            if fk:
                raise _NotDigits
            _add(form, f.items(), c, sizes)
        else:
            _put(form, merged_digit, c, sizes)


def _split(form: dict[Digit, int], k: int, d: int, sizes: dict[int, int]) -> tuple[Form, Form]:
    """``form + k`` as ``d * high + low`` with ``low`` in ``[0, d - 1]``: the quotient and the
    remainder by ``d``. Digits are split where ``d`` falls inside one."""
    if k < 0:
        raise _NotDigits
    high: dict[Digit, int] = {}
    low: dict[Digit, int] = {}
    cut = False  # whether a digit was split (else high and low have no pair to recombine)
    top = 0  # the remainder's largest value, less its constant (coefficients are positive)
    for digit, c in form.items():
        if c <= 0:
            raise _NotDigits
        if c % d == 0:
            # a digit of a form is normal (see _put): only the coefficients to merge, and
            # only with a digit that a cut made (the form's own digits are distinct)
            c //= d
            if cut:
                had = high.get(digit)
                if had is not None:
                    c += had
                    if c * sizes[digit[0]] >= _LIMIT:
                        raise _NotDigits
            high[digit] = c
        elif c < d and d % c == 0:
            s = d // c
            v, a, b = digit
            most = (sizes[v] - 1) // a  # the digit's largest value (see Digit)
            if b is not None and b <= most:
                most = b - 1
            if most < s:
                top += c * most
                if cut:  # (as above)
                    had = low.get(digit)
                    if had is not None:
                        c += had
                        if c * sizes[v] >= _LIMIT:
                            raise _NotDigits
                low[digit] = c
                continue
            # c * x = d * (x floordiv s) + c * (x mod s), x = (v floordiv a) mod b, s | b.
            if b is not None and b % s:
                raise _NotDigits
            cut = True
            top += c * (s - 1)  # x mod s, a normal digit ((v floordiv a) mod b >= s values)
            digit = (v, a, s)
            had = low.get(digit)
            if had is None:
                low[digit] = c
            else:
                c += had
                if c * sizes[v] >= _LIMIT:
                    raise _NotDigits
                low[digit] = c
            # x floordiv s = (v floordiv (a * s)) mod (b / s): a normal digit (it takes at
            # least 2 values: (v floordiv a) mod b takes more than s), the mod left out where
            # it does nothing (see _put)
            a *= s
            if b is not None:
                b //= s
                if b > (sizes[v] - 1) // a:
                    b = None
            digit = (v, a, b)
            had = high.get(digit)
            if had is None:
                high[digit] = 1
            else:
                if (had + 1) * sizes[v] >= _LIMIT:
                    raise _NotDigits
                high[digit] = had + 1
        else:
            return _opaque_split(form, k, d, sizes)
    q, r = divmod(k, d)
    if top + r >= d:
        return _opaque_split(form, k, d, sizes)
    if cut:
        # A form has no pair left to recombine (every form is recombined as it is made):
        # nor has a part of it, scaled alike; only split digits can make one.
        if len(high) > 1:
            _recombine(high, sizes)
        if len(low) > 1:
            _recombine(low, sizes)
    return (high, q), (low, r)


def _opaque_split(
    form: dict[Digit, int], k: int, d: int, sizes: dict[int, int]
) -> tuple[Form, Form]:
    """Quotient and remainder by ``d`` of a sum whose digits do not line up with ``d``: the
    digits ``x floordiv d`` and ``x mod d`` of the sum ``x`` itself, which only the digit
    recombination can take apart again (a result that keeps one is left to the general
    simplifier)."""
    if k < 0:
        raise _NotDigits
    # One pass: every coefficient positive, each digit's largest value (see Digit), and the
    # factors that coefficients share with d.
    mosts = []
    factors = set()
    size = 1  # the sum's
    for (v, a, b), c in form.items():
        if c <= 0:
            raise _NotDigits
        most = (sizes[v] - 1) // a
        if b is not None and b <= most:
            most = b - 1
        mosts.append(most)
        size += c * most
        g = gcd(c, d)
        if g > 1:
            factors.add(g)
    # g * high + low with g | d and low in [0, g - 1] (the largest such g): the digits of the
    # sum by d are those of high by d / g, with low under the remainder.
    for g in sorted(factors, reverse=True) if factors else ():
        top = k % g
        for c, most in zip(form.values(), mosts, strict=True):
            if c % g:
                top += c * most
                if top >= g:  # (the low part only grows: this g fails)
                    break
        else:
            high = {digit: c // g for digit, c in form.items() if c % g == 0}
            (qf, qk), (rf, rk) = _split(high, k // g, d // g, sizes)
            low = {digit: c for digit, c in form.items() if c % g}
            for digit, c in rf.items():
                _put(low, digit, c * g, sizes)
            _recombine(low, sizes)
            return (qf, qk), (low, rk * g + k % g)
    if k != 0:
        raise _NotDigits
    base = ("sum", frozenset(form.items()))
    if size >= _LIMIT:
        raise _NotDigits
    sizes[base] = size  # type: ignore[index]
    # x floordiv d and x mod d, as _put leaves them (d > 1 here: every coefficient lines
    # up with 1): the quotient only where it can be non-zero, the remainder the sum itself
    # where it stays below d
    high = {(base, d, None): 1} if size > d else {}
    low = {(base, 1, d): 1} if size > d else dict(base[1])
    return (high, 0), (low, 0)


def _form(e: Expr, sizes: dict[int, int], seen: dict) -> Form:
    """``e`` as a digit sum (memoised by node: maps share their sub-expressions; and the
    quotient and remainder of one sum by one divisor, which reshapes take both of). The
    callers look the memo up first (a call is dearer than a look-up)."""
    t = type(e)
    if t is FloorDiv or t is Mod:
        divisor = e.rhs  # type: ignore[attr-defined]
        if type(divisor) is not Const:
            raise _NotDigits
        d = divisor.value
        if d <= 0:
            raise _NotDigits
        lhs = e.lhs  # type: ignore[attr-defined]
        key = (id(lhs), d)
        parts = seen.get(key)
        if parts is None:
            uf, uk = seen.get(id(lhs)) or _form(lhs, sizes, seen)
            parts = seen[key] = _split(uf, uk, d, sizes)
        result = parts[0] if t is FloorDiv else parts[1]
    elif t is Mul:
        factor = e.rhs  # type: ignore[attr-defined]
        if type(factor) is not Const:
            raise _NotDigits
        lhs = e.lhs  # type: ignore[attr-defined]
        uf, uk = seen.get(id(lhs)) or _form(lhs, sizes, seen)
        c = factor.value
        form = {}
        for digit, v in uf.items():  # normal digits, scaled: only the bound to check
            scaled = v * c
            if (scaled if scaled > 0 else -scaled) * sizes[digit[0]] >= _LIMIT:
                raise _NotDigits
            form[digit] = scaled
        uk *= c
        if not -_LIMIT < uk < _LIMIT:
            raise _NotDigits
        result = (form, uk)
    elif t is Add:
        form = None
        k = 0
        for u in e.terms:  # type: ignore[attr-defined]
            factor = u.rhs if type(u) is Mul else None  # type: ignore[attr-defined]
            if type(factor) is Const:
                # c * x: x's digits scaled as they are merged (no form of its own for the
                # product, which no other node shares)
                x = u.lhs  # type: ignore[attr-defined]
                uf, uk = seen.get(id(x)) or _form(x, sizes, seen)
                c = factor.value
                uk *= c
                if not -_LIMIT < uk < _LIMIT:
                    raise _NotDigits
                if form is None:
                    form = {}
                    for digit, v in uf.items():  # normal digits, scaled: only the bound
                        v *= c
                        if (v if v > 0 else -v) * sizes[digit[0]] >= _LIMIT:
                            raise _NotDigits
                        form[digit] = v
                    k = uk
                    continue
            else:
                uf, uk = seen.get(id(u)) or _form(u, sizes, seen)
                if form is None:
                    form = dict(uf)  # a form's digits are already normal: nothing to merge
                    k = uk
                    continue
                c = 1
            k += uk
            for digit, v in uf.items():  # normal digits (see _put): only the merge
                size = sizes[digit[0]]
                if c != 1:
                    v *= c
                    if (v if v > 0 else -v) * size >= _LIMIT:
                        raise _NotDigits
                had = form.get(digit)
                if had is None:
                    if len(form) >= _MAX_DIGITS:
                        raise _NotDigits
                    form[digit] = v
                    continue
                v += had
                if v == 0:
                    del form[digit]
                elif (v if v > 0 else -v) * size < _LIMIT:
                    form[digit] = v
                else:
                    raise _NotDigits
        if not -_LIMIT < k < _LIMIT:
            raise _NotDigits
        if len(form) > 1:  # type: ignore[arg-type]
            _recombine(form, sizes)  # type: ignore[arg-type]
        result = (form, k)
    elif t is Var:
        index = e.index  # type: ignore[attr-defined]
        if e.kind != 0 or index not in sizes:  # type: ignore[attr-defined]
            raise _NotDigits
        result = ({(index, 1, None): 1} if sizes[index] > 1 else {}, 0)
    elif t is Const:
        k = e.value  # type: ignore[attr-defined]
        if not -_LIMIT < k < _LIMIT:
            raise _NotDigits
        result = ({}, k)
    else:
        raise _NotDigits
    seen[id(e)] = result
    return result


def _expr(form: dict[Digit, int], k: int) -> Expr:
    """``Σ c * digit + k`` as _combine builds it: the digits are distinct non-zero
    summands, nothing to collect, so the sum is sorted and built at once."""
    # Each summand with its xla_order_key (.traversal), made as the node is: the key of
    # ``((d floordiv a) mod b) * c`` from its numbers, without a memoised call per level.
    keyed = []
    zero = False  # a summand made zero by a mod 1 (no normal digit has one)
    for (v, a, b), c in form.items():
        if type(v) is not int:
            raise _NotDigits  # the digit of a sum that did not line up
        x = dim(v)
        key = (7, (0, v))
        if a != 1:  # (the nodes the builders give for a divisor above 1, built directly)
            x = FloorDiv(x, const(a))
            key = (3, (key, (8, a)))
        if b is not None:
            if b > 1:
                x = Mod(x, const(b))
                key = (2, (key, (8, b)))
            else:  # (sorted by xla_order_key below, as before)
                x = mod(x, b)
                zero = True
        if c != 1:
            x = Mul(x, const(c))
            key = (1, (key, (8, c)))
        keyed.append((key, x))
    if not keyed:
        return const(k)
    if len(keyed) == 1 and k == 0:
        return keyed[0][1]
    if zero:
        summands = [x for _, x in keyed]
        if k != 0:
            summands.append(const(k))
        summands.sort(key=xla_order_key)
        return Add(tuple(summands))
    keyed.sort(key=_first)  # (distinct summands have distinct keys)
    summands = [x for _, x in keyed]
    if k != 0:
        summands.append(const(k))  # a constant sorts after every other summand
    return Add(tuple(summands))
