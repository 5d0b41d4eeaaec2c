"""The bound-free proof of large maps decides linear results without SymPy, exactly as SymPy's
``expand`` of the difference would (checked against SymPy itself on random linear forms)."""

from __future__ import annotations

import subprocess
import sys

import sympy
from hypothesis import given
from hypothesis import strategies as st

from hloidx.maps.expr import add, const, dim, mul, range_var
from hloidx.maps.polynomial import to_sympy
from hloidx.maps.prover import _linear_coefficients

VARIABLES = [dim(0), dim(1), range_var(0)]

terms = st.lists(st.tuples(st.sampled_from(range(len(VARIABLES))), st.integers(-5, 5)), max_size=5)


def _build(summands: list[tuple[int, int]], constant: int, scale: int):
    expr = const(constant)
    for index, coefficient in summands:
        expr = add(expr, mul(VARIABLES[index], coefficient))
    return mul(expr, scale)


@given(terms, terms, st.integers(-3, 3), st.integers(-3, 3), st.integers(-2, 2))
def test_linear_coefficients_agree_with_sympy(a, b, ka, kb, scale) -> None:
    x, y = _build(a, ka, scale), _build(b, kb, 1)
    cx, cy = _linear_coefficients(x), _linear_coefficients(y)
    assert cx is not None
    assert cy is not None
    assert (cx == cy) == (sympy.expand(to_sympy(x) - to_sympy(y)) == 0)


def test_a_product_of_variables_or_a_division_is_not_linear() -> None:
    assert _linear_coefficients(mul(dim(0), dim(1))) is None
    assert _linear_coefficients(dim(0) // 4) is None
    assert _linear_coefficients(dim(0) % 4) is None


def test_verifying_a_large_linear_map_does_not_import_sympy() -> None:
    # XLA's dynamic-slice input-to-output map against its folded form: a domain too large to
    # enumerate, linear results that differ as forms (equal only under the constraint): the
    # prover replaces rt0 by d0, which the equality pins, and proves it without SymPy
    program = (
        "import sys\n"
        "from hloidx import parse_map\n"
        "from hloidx.maps.equivalence import verify\n"
        "dom = 'domain: d0 in [0, 99999], rt0 in [0, 99999], d0 - rt0 in [0, 0]'\n"
        "a = parse_map('(d0){rt0} -> (d0 - rt0), ' + dom)\n"
        "b = parse_map('(d0){rt0} -> (0), ' + dom)\n"
        "v = verify(a, b)\n"
        "assert v.kind == 'proved', v\n"
        "assert 'sympy' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
