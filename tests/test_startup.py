"""What a command imports (issue 38): the first answer must not wait for libraries it never
uses. Each case runs the command line in a fresh process with ``-X importtime`` and reads the
modules Python reports importing; no timings are taken, so the test is as stable as the
import graph. Also: the Python-loop counting of small utilization groups (which keeps NumPy
out of small modules) agrees with the NumPy counting on random maps."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx.caches import clear_caches
from hloidx.maps import point_loops
from hloidx.maps import utilization as util
from tests.strategies import indexing_maps

ROOT = Path(__file__).resolve().parent.parent
SNIPPET = "tests/data/startup/snippet.hlo"
MAP = "(d0, d1) -> (d0 floordiv 4, d0 mod 4 + d1 * 3), domain: d0 in [0, 15], d1 in [0, 7]"

#: never for these commands: the heavy libraries and the layers of other commands
HEAVY = ("numpy", "lark", "sympy", "hloidx.gpu", "hloidx.tiling", "hloidx.perf")
#: nor, for a map or the version, the HLO layers
HLO_LAYERS = ("hloidx.hlo", "hloidx.stablehlo", "hloidx.check", "hloidx.notebook")


def imported(*args: str) -> tuple[set[str], str]:
    """The modules a run of ``hloidx ARGS`` imports (output to a pipe), and its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "hloidx", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert "hloidx.cli.main" in modules  # the report was read
    return modules, done.stdout


def loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


@pytest.mark.parametrize(
    "args",
    [
        ("simplify", MAP),
        ("simplify", MAP, "--format", "json"),
        ("simplify", MAP, "--explain"),
        ("--version",),
        ("--help",),
    ],
    ids=["simplify", "simplify-json", "simplify-explain", "version", "help"],
)
def test_map_commands_import_no_analysis(args):
    modules, out = imported(*args)
    assert loaded(modules, (*HEAVY, *HLO_LAYERS, "rich")) == []
    if args[0] == "simplify":
        # the answer itself is there (the fast paths did the work, not a skipped step)
        assert "(d0 floordiv 4, d0 mod 4 + d1 * 3)" in out
        assert "proved" in out


#: nor, for `maps` on a module without these ops, the rule families loaded on first use and
#: the libraries only some inputs need (a directory, an xz file, a name that matches nothing)
LOADED_ON_USE = (
    "hloidx.hlo.rules.collectives",
    "hloidx.hlo.rules.dynamic_slicing",
    "hloidx.hlo.rules.gather_scatter",
    "hloidx.hlo.rules.custom_calls",
    "pathlib",
    "lzma",
    "difflib",
)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_maps_on_a_snippet_imports_no_heavy_library(fmt):
    modules, out = imported("maps", SNIPPET, "--format", fmt)
    assert loaded(modules, (*HEAVY, "rich")) == []
    assert loaded(modules, LOADED_ON_USE) == []
    assert "hloidx.hlo.analysis" in modules
    assert "mx" in out  # the last instruction was analysed
    assert "refuted" not in out.replace("refuted 0", "").replace('"refuted": 0', "")


def test_summary_on_a_snippet_imports_no_heavy_library():
    modules, _ = imported("summary", SNIPPET, "--format", "json")
    assert loaded(modules, HEAVY) == []


def test_a_malformed_map_still_gets_lark():
    """The fast reader hands a map it cannot read to the grammar, which locates the error."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "hloidx", "simplify", "(d0) -> (d0 +), domain: d0 in [0, 3]"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert "<map>:1:" in done.stderr
    assert "^" in done.stderr


# ---------------------------------------------------------------------------
# Small utilization groups: Python loops against the NumPy counting
# ---------------------------------------------------------------------------


def _numpy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(point_loops, "_SMALL", -1)
    monkeypatch.setattr(point_loops, "_SMALL_WITHOUT_NUMPY", -1)


@settings(max_examples=150, deadline=None)
@given(
    indexing_maps(max_dims=3, max_ranges=2, max_rts=1, max_size=2000, min_dims=1),
    st.lists(st.integers(1, 12), min_size=3, max_size=3),
    st.integers(1, 3),
)
def test_small_groups_count_as_numpy_does(m, extents, copies):
    if m.num_results == 0:
        return
    operand = tuple(extents[: m.num_results] + [5] * max(0, m.num_results - 3))
    maps = [m] * copies if copies < 3 else [m, m.with_results(m.results[::-1])]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(point_loops, "_SMALL", 1 << 14)  # NumPy is loaded in this process
        clear_caches()
        try:
            python = util.utilization(maps, operand)
        except Exception as error:  # the same failure is expected of both paths
            python = type(error)
        _numpy_only(patch)
        clear_caches()
        try:
            vectorised = util.utilization(maps, operand)
        except Exception as error:
            vectorised = type(error)
    clear_caches()
    assert python == vectorised


def test_summary_sort_keys_spelled_as_the_library_has_them():
    from hloidx.cli.summary_command import SORT_KEYS as spelled
    from hloidx.hlo.summary import SORT_KEYS

    assert spelled == SORT_KEYS


def test_version_is_the_packaged_one():
    """``--version`` prints ``hloidx.__version__`` (no metadata look-up at start-up): it must
    be the version the package is built with."""
    import tomllib

    from hloidx import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert __version__ == project["version"]
    _, out = imported("--version")
    assert out.strip() == f"hloidx, version {project['version']}"


def test_an_empty_variable_empties_a_small_group_at_once():
    """A group whose box is empty because of one variable has no point, however long the other
    variables' ranges (the loops must not run over them)."""
    from hloidx.maps.expr import add, dim
    from hloidx.maps.interval import Interval

    order = [dim(0), dim(1)]
    bounds = {dim(0): Interval(0, 10**12), dim(1): Interval(3, 2)}
    assert point_loops.small_group_keys([add(dim(0), dim(1))], order, bounds, [], [100]) == set()
    assert (
        point_loops.small_feasible_count([(add(dim(0), dim(1)), Interval(0, 5))], order, bounds)
        == 0
    )


def test_a_group_without_variables_is_one_point():
    """Constraints left without variables (a runtime variable fixed to a value) are checked at
    the one point of an empty box, as the NumPy path checks them."""
    from hloidx.maps.expr import const
    from hloidx.maps.interval import Interval

    assert point_loops.small_feasible_count([(const(0), Interval(0, 3))], [], {}) == 1
    assert point_loops.small_feasible_count([(const(5), Interval(0, 3))], [], {}) == 0


# ---------------------------------------------------------------------------
# Small exhaustive equivalence checks: Python loops against the NumPy comparison
# ---------------------------------------------------------------------------


def _verdict_both_ways(original, other):
    from hloidx.maps.equivalence import verify

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(point_loops, "_SMALL", 1 << 14)  # NumPy is loaded in this process
        clear_caches()
        python = verify(original, other, timeout_s=60)
        _numpy_only(patch)
        clear_caches()
        vectorised = verify(original, other, timeout_s=60)
    clear_caches()
    return python, vectorised


@settings(max_examples=150, deadline=None)
@given(
    indexing_maps(max_dims=3, max_ranges=2, max_rts=0, max_size=2000, min_dims=1),
    st.sampled_from(["same", "simplified", "shifted", "narrowed", "constrained"]),
)
def test_small_equivalence_checks_give_numpys_verdict(m, change):
    """Equal and unequal pairs alike: the same verdict, the same points counted, the same
    counterexample (the first differing point in the same order)."""
    from hloidx.maps.expr import add, const
    from hloidx.maps.indexing_map import Variable
    from hloidx.maps.interval import Interval
    from hloidx.maps.map_simplify import simplify

    if change == "same":
        other = m
    elif change == "simplified":
        other = simplify(m)
    elif change == "shifted":
        if m.num_results == 0:
            return
        other = m.with_results([add(m.results[0], const(1)), *m.results[1:]])
    elif change == "narrowed":
        bounds = m.dim_vars[0].bounds
        if bounds.upper <= bounds.lower:
            return
        narrowed = Variable(Interval(bounds.lower, bounds.upper - 1))
        other = replace(m, dim_vars=(narrowed, *m.dim_vars[1:]))
    else:
        if m.num_results == 0:
            return
        other = m.with_constraints([*m.constraints, (m.results[0], Interval(0, 3))])
    python, vectorised = _verdict_both_ways(m, other)
    assert python == vectorised


def test_each_lazy_rule_family_registers_the_opcodes_it_is_loaded_for():
    """A family loaded on first use must be listed under every opcode it registers or replaces
    (a missing one would read as an op without a rule, or keep the rule it replaces) and no
    other; checked in a fresh process, where no family has been loaded yet."""
    probe = """
import hloidx.hlo.rules as rules
from hloidx.hlo import rule_registry as registry
def rules_now():
    return {(d, op): rule for d, table in enumerate((registry._OUTPUT_TO_INPUT,
            registry._INPUT_TO_OUTPUT)) for op, rule in table.items()}
for load, opcodes in rules.LAZY_FAMILIES.items():
    before = rules_now()
    load()
    set_here = sorted({op for key, rule in rules_now().items() if before.get(key) is not rule
                       for op in [key[1]]})
    print(load.__name__, set_here == sorted(opcodes), set_here)
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 3, done.stdout
    for line in lines:
        name, same, added = line.split(" ", 2)
        assert same == "True", f"{name} registers {added}"
