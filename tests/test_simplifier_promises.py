"""What the simplifier promises a reader (issue "Simplifier: never worse than its input"):
never longer than the map given, XLA's canonical summand order (so a map XLA printed already
simplified comes back as it was), size-1 dimensions kept as variables, symbols pinned to one
residue rescaled. Every result is also compared with its input as a relation, by enumeration."""

from __future__ import annotations

import json

import paths
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from hloidx.cli.main import cli
from hloidx.maps.domain import relation
from hloidx.maps.map_simplify import SimplifyOptions, operation_count, simplify
from hloidx.maps.printer import format_map
from hloidx.maps.syntax import parse_map
from tests.strategies import indexing_maps

LONGER = (
    "(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2), domain: d0 in [5, 10], "
    "d1 in [3, 30], d2 in [0, 9], (d1 - 3) mod 7 in [0, 0]"
)


def _same_relation(a, b) -> bool:
    return relation(a) == relation(b)


def test_the_reported_map_is_not_made_longer() -> None:
    m = parse_map(LONGER)
    s = simplify(m)
    assert format_map(s) == LONGER
    assert operation_count(s) <= operation_count(m)
    out = CliRunner().invoke(cli, ["simplify", LONGER])
    assert out.output.splitlines()[0] == LONGER


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indexing_maps())
def test_operation_count_never_grows(m) -> None:
    s = simplify(m)
    assert operation_count(s) <= operation_count(m), (str(m), str(s))
    assert simplify(s) == s  # and simplifying again changes nothing


@pytest.mark.parametrize(
    "text",
    [
        "(th_x, bl_x) -> (bl_x * 128 + th_x), domain: th_x in [0, 127], bl_x in [0, 9]",
        "(d0, d1) -> (d1 * 1000 + d0), domain: d0 in [0, 999], d1 in [0, 999]",
        "(d0)[s0] -> (s0 mod 3 + d0), domain: d0 in [0, 1], s0 in [0, 3]",
        "(d0)[s0] -> ((s0 mod 3) * 4 + s0 * 3 + d0), domain: d0 in [0, 1], s0 in [0, 3]",
        "(d0, d1) -> (d0 mod 2 + d1), domain: d0 in [0, 3], d1 in [-4, 4]",
        "(d0) -> (-d0 mod 2), domain: d0 in [0, 127]",
    ],
)
def test_xla_canonical_order_comes_back(text: str) -> None:
    # simplified in canonical order (not only kept as written): the order is XLA's
    assert format_map(simplify(parse_map(text))) == text


def test_canonical_order_is_xlas_whatever_the_order_written() -> None:
    written = parse_map(
        "(th_x, bl_x) -> (th_x + bl_x * 128), domain: th_x in [0, 127], bl_x in [0, 9]"
    )
    assert format_map(simplify(written)).startswith("(th_x, bl_x) -> (bl_x * 128 + th_x)")
    # `hloidx simplify` keeps a sum it did not change as written ...
    out = CliRunner().invoke(cli, ["simplify", format_map(written)])
    assert "(th_x + bl_x * 128)" in out.output
    # ... unless asked for the canonical order
    out = CliRunner().invoke(cli, ["simplify", format_map(written), "--canonical-order"])
    assert "(bl_x * 128 + th_x)" in out.output


def _xla_simplified_maps() -> list[tuple[str, str]]:
    cases = json.loads((paths.XLA_TESTS / "map_cases.json").read_text())
    out = []
    for case in cases:
        for entry in case["expected"]:
            text = entry.get("map_normalized")
            if "Simplify" in entry.get("what", "") and text and "domain" in text:
                out.append((case["test"], " ".join(text.replace("( ", "(").split())))
    return out


def test_maps_xla_printed_simplified_come_back() -> None:
    """Each map that XLA's tests print after Simplify() comes back character for character,
    or (where hloidx goes further) shorter or with tighter bounds, and the same relation."""
    same, further = [], []
    for name, text in _xla_simplified_maps():
        text = text.replace(" )", ")")
        m = parse_map(text, name)
        s = simplify(m)
        if format_map(s, "/") == text:
            same.append(name)
            continue
        assert _same_relation(m, s), name
        tighter = any(
            a.bounds.lower > b.bounds.lower or a.bounds.upper < b.bounds.upper
            for a, b in zip(s.dim_vars + s.range_vars, m.dim_vars + m.range_vars, strict=True)
        )
        assert operation_count(s) < operation_count(m) or tighter, (name, str(s))
        further.append(name)
    assert len(same) >= 44, further
    assert sorted(further) == [
        "ConstraintIntervalSimplification_Sum",  # d0 in [1, 99]: 0 mod 8 is not in [1, 5]
        "SymbolicMapSimplification_DivSumConstant",  # (s0 + 1) / 3
    ]


def test_size_one_dimensions_stay() -> None:
    text = "(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]"
    assert format_map(simplify(parse_map(text))) == text
    folded = simplify(parse_map(text), options=SimplifyOptions(preserve_point_dims=False))
    assert format_map(folded).startswith("(d0, d1, d2, d3) -> (0, ")
    out = CliRunner().invoke(cli, ["simplify", text, "--fold-point-dims"])
    assert "-> (0, " in out.output


@pytest.mark.parametrize(
    ("given_text", "expected"),
    [
        (  # XLA's RescaleSymbols_Simple
            "(d0)[s0, s1, s2] -> (s2, d0, s1, s0 floordiv 6), domain: d0 in [0, 3], s0 in [0, 6], "
            "s1 in [0, 1], s2 in [0, 5], s0 mod 6 in [0, 0]",
            "(d0)[s0, s1, s2] -> (s2, d0, s1, s0), domain: d0 in [0, 3], s0 in [0, 1], "
            "s1 in [0, 1], s2 in [0, 5]",
        ),
        (  # XLA's RescaleSymbols_TwoModConstraints
            "(d0)[s0, s1, s2] -> (s2, d0, s1, s0 floordiv 6), domain: d0 in [0, 3], s0 in [0, 7], "
            "s1 in [0, 1], s2 in [0, 5], s0 mod 2 in [0, 0], s0 mod 3 in [0, 0]",
            "(d0)[s0, s1, s2] -> (s2, d0, s1, s0), domain: d0 in [0, 3], s0 in [0, 1], "
            "s1 in [0, 1], s2 in [0, 5]",
        ),
    ],
)
def test_rescale_symbols_is_part_of_simplify(given_text: str, expected: str) -> None:
    m = parse_map(given_text)
    s = simplify(m)
    assert format_map(s) == expected
    assert _same_relation(m, s)
    kept = simplify(m, options=SimplifyOptions(rescale=False))
    assert "mod" in format_map(kept)
    out = CliRunner().invoke(cli, ["simplify", given_text, "--no-rescale"])
    assert "s0 mod 6 in [0, 0]" in out.output or "s0 mod 6" in out.output


def test_rescaling_that_would_lengthen_the_map_is_not_done() -> None:
    # `s0` with `s0 mod 3 in [1, 1]` would become `s0 * 3 + 1`: one operation more
    text = "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 69], s0 mod 3 in [1, 1]"
    m = parse_map(text)
    assert format_map(simplify(m)) == text.replace("s0 in [0, 69]", "s0 in [1, 67]")


def test_reshape_chains_collapse_completely() -> None:
    """Chains whose intermediate factors straddle each other (the issue's examples and 80
    random ones from bench/reshape_chains.py) simplify to what the direct reshape does."""
    import sys

    sys.path.insert(0, str(paths.ROOT / "bench"))
    import reshape_chains

    for shapes in reshape_chains.chains(82, seed=7):
        ok, got, best = reshape_chains.collapsed(shapes)
        assert ok, (shapes, got, best)
        chained = reshape_chains.chain_map(shapes)
        assert _same_relation(chained, simplify(chained)), shapes
