"""The printer writes each large subtree of a map once (composed maps restate them hundreds of
times); its text is byte for byte what the one-pass printer it replaced wrote. That printer is
kept here as the reference, and both are run on the simplifier benchmark's maps, the maps of
XLA's test expectations, reshape chains and random maps."""

from __future__ import annotations

import sys

import paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hloidx.errors import HloidxError
from hloidx.maps.expr import Add, CeilDiv, Const, Expr, FloorDiv, Max, Min, Mod, Mul, Var
from hloidx.maps.indexing_map import IndexingMap
from hloidx.maps.nodes import is_negated_division
from hloidx.maps.printer import format_expr, format_map, variable_names
from hloidx.maps.syntax import parse_map
from tests.strategies import expressions, factorizations, indexing_maps

_SPELLING = {Mul: " * ", CeilDiv: " ceildiv ", Mod: " mod "}


def _reference(expr: Expr, names: tuple, floordiv_spelling: str = "floordiv") -> str:
    """The printer as it was: one walk of the tree, every repeat written again."""
    div = f" {floordiv_spelling} "
    out: list[str] = []
    emit = out.append

    def name(var: Var) -> str:
        given = names[var.kind]
        if var.index < len(given) and given[var.index]:
            return given[var.index]
        return f"{var.kind.prefix}{var.index}"

    def visit(node: Expr, strong: bool) -> None:
        t = type(node)
        if t is Var:
            emit(name(node))
            return
        if t is Const:
            emit(str(node.value))
            return
        if t is Add:
            if strong:
                emit("(")
            terms = node.terms
            visit(terms[0], False)
            for term in terms[1:]:
                if type(term) is Const and term.value < 0:
                    emit(f" - {-term.value}")
                elif type(term) is Mul and type(term.rhs) is Const and term.rhs.value < 0:
                    emit(" - ")
                    if term.rhs.value == -1:
                        visit(term.lhs, type(term.lhs) is Add)
                    else:
                        visit(term.lhs, True)
                        emit(f" * {-term.rhs.value}")
                else:
                    emit(" + ")
                    visit(term, False)
            if strong:
                emit(")")
            return
        if t is Min or t is Max:
            emit("min(" if t is Min else "max(")
            visit(node.lhs, False)
            emit(", ")
            visit(node.rhs, False)
            emit(")")
            return
        if t is Mul and type(node.rhs) is Const and node.rhs.value == -1 and type(node.lhs) is Var:
            emit("-")
            visit(node.lhs, True)
            return
        if strong:
            emit("(")
        if t is Mul and type(node.rhs) is Const and node.rhs.value == -1:
            emit("-")
            visit(node.lhs, True)
        elif is_negated_division(node):
            visit(node.lhs.lhs, True)
            emit(div if t is FloorDiv else _SPELLING[t])
            emit(str(-node.rhs.value))
        else:
            visit(node.lhs, True)
            emit(div if t is FloorDiv else _SPELLING[t])
            visit(node.rhs, True)
        if strong:
            emit(")")

    visit(expr, False)
    return "".join(out)


def _same_text(m: IndexingMap) -> None:
    if m.is_undefined or m.is_known_empty:
        return
    names = tuple(variable_names(m))
    expressions_of_m = [*m.results, *(e for e, _ in m.constraints)]
    for spelling in ("floordiv", "/"):
        printed = format_map(m, spelling)
        for e in expressions_of_m:
            text = _reference(e, names, spelling)
            assert format_expr(e, *names, floordiv_spelling=spelling) == text
            assert text in printed
    # the map's text put together from the reference's expressions
    head = f"({', '.join(names[0])})"
    if names[1]:
        head += f"[{', '.join(names[1])}]"
    if names[2]:
        head += "{" + ", ".join(names[2]) + "}"
    head += f" -> ({', '.join(_reference(e, names) for e in m.results)})"
    if not any(names):
        assert format_map(m) == head
        return
    variables = (*m.dim_vars, *m.range_vars, *m.rt_vars)
    domain = [
        f"{n} in {v.bounds}"
        for n, v in zip([*names[0], *names[1], *names[2]], variables, strict=True)
    ]
    domain += sorted(f"{_reference(e, names)} in {b}" for e, b in m.constraints)
    assert format_map(m) == head + ", domain: " + ", ".join(domain)


def _bench_module(name: str):
    sys.path.insert(0, str(paths.ROOT / "bench"))
    return __import__(name)


def test_benchmark_maps_print_as_before() -> None:
    rc = _bench_module("reshape_chains")
    maps = [entry.original for entry in _bench_module("map_corpus").corpus()]
    maps += [rc.chain_map(s) for s in rc.chains(20, 2)]
    for m in maps:
        _same_text(m)


def test_xla_expectation_maps_print_as_before() -> None:
    count = 0
    for text in paths.xla_map_texts():
        try:
            m = parse_map(text)
        except HloidxError:
            continue  # a few are not XLA's map text (see tests/data/xla)
        _same_text(m)
        count += 1
    assert count >= 100


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indexing_maps(with_names=True))
def test_random_maps_print_as_before(m: IndexingMap) -> None:
    _same_text(m)


@settings(max_examples=100, deadline=None)
@given(expressions(2, 1, 1, max_depth=5), st.integers(1, 4))
def test_repeated_subtrees_print_as_before(e, repeats: int) -> None:
    grown = e
    for k in range(repeats):
        grown = (grown - e * 3).floordiv(k + 2) * (k + 2) + (-grown) % (k + 3)
    assert format_expr(grown) == _reference(grown, ((), (), ()))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(factorizations(120), min_size=2, max_size=4))
def test_reshape_chains_print_as_before(shapes) -> None:
    _same_text(_bench_module("reshape_chains").chain_map(shapes))
