"""Verdicts that say what they mean: an empty domain's maps agree only vacuously, and the
prover uses equality constraints (``d0 - rt0 in [0, 0]`` pins ``rt0``) (issue 44)."""

from __future__ import annotations

import itertools
import json

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx import parse_map
from hloidx.cli.main import cli
from hloidx.maps.equivalence import verify
from hloidx.maps.prover import _prove

# --------------------------------------------------------------------------- empty domains


def test_an_empty_domain_is_proved_only_vacuously() -> None:
    # d0 in [5, 2] holds no integer: the map has no point, so "proved" alone would mislead.
    text = "(d0) -> (d0), domain: d0 in [5, 2]"
    plain = CliRunner().invoke(cli, ["simplify", text])
    assert plain.exit_code == 0, plain.output
    lines = plain.output.splitlines()
    assert lines[0] == "KNOWN EMPTY"
    assert lines[1] != "verdict: proved"
    assert "vacuously" in lines[1]
    assert "empty" in lines[1]
    doc = json.loads(CliRunner().invoke(cli, ["simplify", text, "--format", "json"]).output)
    assert doc["verdict"]["kind"] == "proved"
    assert doc["verdict"]["vacuous"] is True


def test_a_non_empty_domain_is_not_vacuous() -> None:
    verdict = verify(
        parse_map("(d0) -> (d0 * 2), domain: d0 in [0, 9]"),
        parse_map("(d0) -> (d0 + d0), domain: d0 in [0, 9]"),
    )
    assert verdict.kind in ("proved", "exhaustive")
    assert not verdict.vacuous
    assert "vacuous" not in verdict.to_json()


# ------------------------------------------------------------- equality constraints


def test_the_405b_step_shape_is_proved_not_sampled() -> None:
    # Where d0 - rt0 = 0 holds, d0 - rt0 is 0: by hand. The domain (10^12 points) is far
    # beyond enumeration, so only a proof can say so.
    domain = "domain: d0 in [0, 999999], rt0 in [0, 999999], d0 - rt0 in [0, 0]"
    original = parse_map(f"(d0)[rt0] -> (d0 - rt0), {domain}")
    assert verify(original, parse_map(f"(d0)[rt0] -> (0), {domain}")).kind == "proved"
    # and the equality is not a licence for anything: 1 differs from d0 - rt0 everywhere
    assert verify(original, parse_map(f"(d0)[rt0] -> (1), {domain}")).kind == "refuted"


def test_an_offset_equality_pins_a_dimension_too() -> None:
    # d0 + 3 * d1 - rt0 in [2, 2]: rt0 = d0 + 3 d1 - 2, so rt0 floordiv 3 = d1 + (d0 - 2) // 3.
    domain = (
        "domain: d0 in [2, 4], d1 in [0, 99999], rt0 in [0, 400000], d0 + d1 * 3 - rt0 in [2, 2]"
    )
    a = parse_map(f"(d0, d1)[rt0] -> (rt0 floordiv 3), {domain}")
    b = parse_map(f"(d0, d1)[rt0] -> (d1), {domain}")
    assert verify(a, b).kind == "proved"


class _NoClock:
    def check_time(self) -> None:
        pass


# expressions as (map text, Python function of d0, d1, r): floor semantics like the maps'
_LEAVES = st.sampled_from(
    [("d0", lambda d0, d1, r: d0), ("d1", lambda d0, d1, r: d1), ("rt0", lambda d0, d1, r: r)]
) | st.integers(-3, 3).map(lambda c: (f"{c}", lambda d0, d1, r, c=c: c))


def _grow(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: (f"({p[0][0]} + {p[1][0]})", lambda *v, p=p: p[0][1](*v) + p[1][1](*v))),
        st.tuples(children, st.integers(-3, 3)).map(
            lambda p: (f"({p[0][0]} * {p[1]})", lambda *v, p=p: p[0][1](*v) * p[1])
        ),
        st.tuples(children, st.integers(1, 4)).map(
            lambda p: (f"({p[0][0]} floordiv {p[1]})", lambda *v, p=p: p[0][1](*v) // p[1])
        ),
        st.tuples(children, st.integers(1, 4)).map(
            lambda p: (f"({p[0][0]} mod {p[1]})", lambda *v, p=p: p[0][1](*v) % p[1])
        ),
    )


EXPRS = st.recursive(_LEAVES, _grow, max_leaves=4)


@settings(max_examples=60, deadline=None)
@given(
    x=EXPRS,
    y=EXPRS,
    a=st.integers(-2, 2),
    sign=st.sampled_from([1, -1]),
    k=st.integers(-2, 4),
    hi=st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 6)),
)
def test_proofs_under_equalities_agree_with_enumeration(x, y, a, sign, k, hi) -> None:
    # a * d0 + d1 + sign * rt0 in [k, k]: one equality, the unit coefficients free to pin
    constraint = f"d0 * {a} + d1 + rt0 * {sign} in [{k}, {k}]"
    domain = f"domain: d0 in [0, {hi[0]}], d1 in [0, {hi[1]}], rt0 in [0, {hi[2]}], {constraint}"
    ma = parse_map(f"(d0, d1)[rt0] -> ({x[0]}), {domain}")
    mb = parse_map(f"(d0, d1)[rt0] -> ({y[0]}), {domain}")
    feasible = [
        p
        for p in itertools.product(range(hi[0] + 1), range(hi[1] + 1), range(hi[2] + 1))
        if a * p[0] + p[1] + sign * p[2] == k
    ]
    equal = all(x[1](*p) == y[1](*p) for p in feasible)
    proof = _prove(ma, mb, _NoClock())
    if proof is not None:
        assert proof.kind == "proved"
        assert equal, (x[0], y[0], constraint)
    verdict = verify(ma, mb)
    assert verdict.is_refuted == (not equal), (x[0], y[0], constraint, verdict)


@settings(max_examples=40, deadline=None)
@given(x=EXPRS, a=st.integers(-2, 2), k=st.integers(-2, 4))
def test_a_result_rewritten_through_the_equality_is_proved(x, a, k) -> None:
    # rt0 = k - a * d0 - d1 on the feasible set: the same expression with rt0 written out
    constraint = f"d0 * {a} + d1 + rt0 in [{k}, {k}]"
    domain = f"domain: d0 in [0, 300], d1 in [0, 300], rt0 in [0, 900], {constraint}"
    written_out = x[0].replace("rt0", f"({k} - d0 * {a} - d1)")
    ma = parse_map(f"(d0, d1)[rt0] -> ({x[0]}), {domain}")
    mb = parse_map(f"(d0, d1)[rt0] -> ({written_out}), {domain}")
    proof = _prove(ma, mb, _NoClock())
    assert proof is not None, (x[0], written_out, constraint)
    assert proof.kind == "proved"
