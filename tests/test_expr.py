"""Expression nodes and builders: folds are sound (checked by evaluation), trees are canonical."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import expressions

from hloidx.errors import DomainError
from hloidx.maps.expr import (
    Add,
    Const,
    Mul,
    add,
    add_left,
    ceildiv,
    const,
    dim,
    evaluate,
    floordiv,
    max_,
    min_,
    mod,
    mul,
    range_var,
    replace_vars,
    rt_var,
    sort_summands,
    variables,
)
from hloidx.maps.printer import format_expr

d0, d1, d2 = dim(0), dim(1), dim(2)
s0 = range_var(0)


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        ((d0 + 1) - 1, d0),
        (d0 + d1 - d0, d1),
        ((d0 + 2) * 3, add(mul(d0, 3), 6)),
        (d0 * 2 * 3, mul(d0, 6)),
        (3 * d0, mul(d0, 3)),
        (d0 * 0, const(0)),
        (d0 * 1, d0),
        (floordiv(d0, 1), d0),
        (mod(d0, 1), const(0)),
        (floordiv(7, 2), const(3)),
        (floordiv(-7, 2), const(-4)),
        (mod(-7, 3), const(2)),
        (ceildiv(7, 2), const(4)),
        (min_(d0, d0), d0),
        (max_(3, 5), const(5)),
        (mul(mul(d0, -1), -1), d0),
        (d0 + 0, d0),
    ],
)
def test_builders_fold_locally(built, expected):
    assert built == expected


def test_sum_is_flat_with_constant_last():
    e = add(d1, add(5, d0), 2)
    assert isinstance(e, Add)
    assert e.terms == (d1, d0, const(7))


def test_constant_multiplier_sits_on_the_right():
    e = mul(4, d0)
    assert isinstance(e, Mul)
    assert e.rhs == const(4)


@pytest.mark.parametrize("builder", [floordiv, ceildiv, mod])
def test_zero_constant_divisor_is_a_domain_error(builder):
    with pytest.raises(DomainError):
        builder(d0, 0)


@pytest.mark.parametrize(
    ("builder", "python"),
    [
        (floordiv, lambda x, c: x // c),
        (ceildiv, lambda x, c: -(-x // c)),
        (mod, lambda x, c: x % c),
    ],
)
@pytest.mark.parametrize("divisor", [-1, -2, -3, -7])
def test_negative_constant_divisor_has_floor_semantics(builder, python, divisor):
    e = builder(d0 * 2 + 1, divisor)
    for x in range(-20, 21):
        assert evaluate(e, {d0: x}) == python(2 * x + 1, divisor)


def test_expressions_have_no_truth_value():
    with pytest.raises(TypeError):
        bool(d0 + 1)


def test_evaluate_uses_floor_semantics():
    env = {d0: -7, d1: 2}
    assert evaluate(floordiv(d0, 2), env) == -4
    assert evaluate(mod(d0, 3), env) == 2
    assert evaluate(ceildiv(d0, 2), env) == -3
    assert evaluate(min_(d0, d1) + max_(d0, d1), env) == -5


def test_variable_divisor_zero_is_a_domain_error_not_a_crash():
    with pytest.raises(DomainError):
        evaluate(floordiv(d0, rt_var(0)), {d0: 4, rt_var(0): 0})


def test_replace_vars_returns_same_object_when_nothing_changes():
    e = d0 * 3 + floordiv(d1, 4)
    assert replace_vars(e, {d2: d0}) is e
    assert replace_vars(e, {d0: d1}) == d1 * 3 + floordiv(d1, 4)


def test_variables():
    assert variables(d0 * s0 + mod(d2, 3)) == frozenset({d0, s0, d2})


@settings(max_examples=200, deadline=None)
@given(expressions(3, 1, 0, max_depth=4), st.lists(st.integers(-20, 20), min_size=4, max_size=4))
def test_builders_preserve_value(e, values):
    """Rebuilding an expression from its parts (through the builders) never changes its value."""
    env = dict(zip([d0, d1, d2, s0], values, strict=True))
    assert evaluate(sort_summands(e), env) == evaluate(e, env)
    assert evaluate(e + 0, env) == evaluate(e, env)
    assert evaluate((e + 3) * 2 - 6, env) == 2 * evaluate(e, env)
    assert evaluate(-e, env) == -evaluate(e, env)


@settings(max_examples=100, deadline=None)
@given(expressions(3, 0, 0, max_depth=3))
def test_sort_summands_is_idempotent_and_hash_consistent(e):
    once = sort_summands(e)
    assert sort_summands(once) == once
    rebuilt = replace_vars(once, {d0: d0})
    assert hash(rebuilt) == hash(once)


def test_const_identity_and_hash():
    assert Const(5) == const(5)
    assert hash(Const(5)) == hash(const(5))
    assert d0 != d1
    assert d0 != s0


# ---------------------------------------------------------------------------
# Identity: equality and hashes of separately built trees
# ---------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(expressions(2, 1, 1, max_depth=3), expressions(2, 1, 1, max_depth=3))
def test_equality_is_structural_and_equal_trees_hash_equal(a, b):
    from hloidx.maps.expr import replace_vars

    copy = replace_vars(a, {})  # the same object: no replacement
    assert copy is a
    # A separately built copy of every node (no object shared with the original).
    rebuilt = _rebuild_deep(a)
    assert rebuilt == a
    assert hash(rebuilt) == hash(a)
    assert (a == b) == (type(a) is type(b) and a._key() == b._key())


def _rebuild_deep(node):
    from hloidx.maps.expr import Add, BinaryExpr, Const, Var

    if type(node) is Const:
        return Const(node.value)
    if type(node) is Var:
        return Var(node.kind, node.index)
    if type(node) is Add:
        return Add(tuple(_rebuild_deep(t) for t in node.terms))
    assert isinstance(node, BinaryExpr)
    return type(node)(_rebuild_deep(node.lhs), _rebuild_deep(node.rhs))


def _summands() -> st.SearchStrategy[list]:
    """Summands as a reader meets them: expressions, repeats of earlier ones (like terms that
    merge or cancel), their negations, constants, and products by 0 and 1 built directly."""
    leaf = expressions(2, 1, max_depth=2)

    @st.composite
    def build(draw: st.DrawFn) -> list:
        out: list = []
        for _ in range(draw(st.integers(1, 6))):
            choice = draw(st.integers(0, 5))
            if choice == 0 and out:
                out.append(draw(st.sampled_from(out)))
            elif choice == 1 and out:
                out.append(mul(draw(st.sampled_from(out)), -1))
            elif choice == 2:
                out.append(const(draw(st.integers(-3, 3))))
            elif choice == 3:
                out.append(Mul(draw(leaf), const(draw(st.sampled_from([0, 1, 2])))))
            else:
                out.append(draw(leaf))
        return out

    return build()


@settings(max_examples=300, deadline=None)
@given(_summands())
def test_add_left_is_add_folded_left(summands: list) -> None:
    """The reader's one-step sum equals ``add`` applied pair by pair, structurally."""
    folded = summands[0]
    for summand in summands[1:]:
        folded = add(folded, summand)
    built = add_left(list(summands))
    assert built == folded
    assert format_expr(built) == format_expr(folded)  # the same order of summands


def test_nodes_made_through_the_node_module_alone_have_operators_and_text():
    # the operators are attached by maps.builders; the package loads it, so a process that
    # imports only maps.nodes still gets nodes that add and print as map text
    import subprocess
    import sys

    program = (
        "from hloidx.maps.nodes import Expr\n"
        "assert Expr.__str__ is not object.__str__\n"
        "assert hasattr(Expr, '__add__') and hasattr(Expr, 'floordiv')\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
