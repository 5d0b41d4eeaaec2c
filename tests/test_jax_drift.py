"""The drift check: what the installed JAX's XLA writes today, hloidx reads, and reads as XLA
does.

Small JAX programs (``tests/jax_drift_programs.py``: a scan, a ``fori_loop``, a ``cond``, argmax,
top-k, a sort of several operands, a fusion with two outputs, a transformer block, a loss with
its gradient) are compiled once, in one subprocess, with ``XLA_FLAGS=--xla_dump_to=DIR``.
Every module text XLA writes (before and after optimization), and each program's
``compile().as_text()`` and ``lower().as_text(dialect="hlo")`` (with and without debug info),
must analyse with exit 0; and every dump file must give, instruction by instruction, the maps
and statuses of the same module as jaxlib's own parser reads and prints it back (the oracle:
XLA's reading, get-tuple-elements spelled out). Skipped where jax is not installed; the dumps
kept in ``tests/data/jax012/`` check the same without jax.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import paths
import pytest

from hloidx.hlo.analysis import analyze
from hloidx.hlo.report import instruction_to_json
from hloidx.hlo.syntax import parse_hlo

PROGRAMS = Path(__file__).parent / "jax_drift_programs.py"
KEPT = paths.ROOT / "tests" / "data" / "jax012"


@pytest.fixture(scope="module")
def dumped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("jax", reason="the drift check compiles JAX programs: jax is not installed")
    out = tmp_path_factory.mktemp("jax_drift")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    subprocess.run(
        [sys.executable, str(PROGRAMS), str(out)],
        check=True,
        env=env,
        timeout=600,
        capture_output=True,
    )
    return out


def _module_files(out: Path) -> list[Path]:
    return sorted((out / "dump").glob("*_optimizations.txt"))


def test_every_module_xla_writes_analyses_with_exit_0(dumped: Path) -> None:
    files = _module_files(dumped)
    programs = ["scan", "fori_loop", "cond", "argmax", "top_k", "sort3", "multi_output"]
    for program in [*programs, "transformer", "train_step"]:
        stages = {
            p.name.split("_optimizations")[0].rsplit(".", 1)[-1]
            for p in files
            if f"jit_{program}." in p.name
        }
        assert stages >= {"before", "cpu_after"} or stages >= {"before", "after"}, program
    texts = sorted((dumped / "text").glob("*.hlo"))
    assert len(texts) == 3 * 9
    result = subprocess.run(
        [sys.executable, "-m", "hloidx", "maps", "-q", *map(str, files + texts)],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"{len(files) + len(texts)} files" in result.stdout
    assert "0 files with problems" in result.stdout


def test_dumps_read_as_xla_reads_them(dumped: Path) -> None:
    pairs = [(p, _reprint_of(p)) for p in _module_files(dumped)]
    if not any(reprint.exists() for _, reprint in pairs):
        pytest.skip("this jaxlib has no HLO text parser to compare with")
    for path, reprint in pairs:
        assert_reads_as_xla(path.read_text(), reprint.read_text(), path.name)


def _reprint_of(path: Path) -> Path:
    return path.with_name(path.name[: -len(".txt")] + ".xla_reprint.hlo")


def assert_reads_as_xla(text: str, reprinted: str, name: str) -> int:
    """Every instruction of ``text`` as hloidx reads it (the get-tuple-elements it makes for
    ``t#i`` operands included) has, operand by operand, the maps, verdicts, statuses and
    utilization of the same instruction in ``reprinted`` (XLA's reading, printed by XLA).
    Returns how many operands were compared."""
    mine = parse_hlo(text, name)
    theirs = parse_hlo(reprinted, name + " (as XLA prints it back)")
    my_analysis = {(i.computation, i.name): i for i in analyze(mine).instructions}
    their_analysis = {(i.computation, i.name): i for i in analyze(theirs).instructions}
    compared = 0
    for computation in mine.computations.values():
        other = theirs.computations[computation.name]
        written = {i.name for i in computation.instructions}
        # XLA names the get-tuple-elements it makes for `t#1` after the operand (t_1); by
        # what they select, they are the ones hloidx names t#1
        by_path = {_path(i, written): i for i in other.instructions}
        for instruction in computation.instructions:
            counterpart = by_path.get(instruction.name)
            assert counterpart is not None, (name, computation.name, instruction.name)
            assert counterpart.opcode == instruction.opcode
            assert str(counterpart.shape) == str(instruction.shape)
            assert [_path(o, written) for o in counterpart.operands] == [
                o.name for o in instruction.operands
            ]
            a = instruction_to_json(my_analysis[(computation.name, instruction.name)])
            b = instruction_to_json(their_analysis[(computation.name, counterpart.name)])
            assert len(a["operands"]) == len(b["operands"])
            for x, y in zip(a["operands"], b["operands"], strict=True):
                if "#" in x["name"]:  # an element operand says which element it is
                    assert x["tuple_element"] == int(x["name"].rsplit("#", 1)[1])
                for key in x:
                    if key not in ("name", "tuple_element"):
                        assert x[key] == y[key], (name, instruction.name, x["name"], key)
                compared += 1
    return compared


def _path(instruction, written: set[str]) -> str:
    """A get-tuple-element XLA's parser made for an operand `t#1` (not in the text): `t#1`."""
    if instruction.opcode != "get-tuple-element" or instruction.name in written:
        return instruction.name
    return f"{_path(instruction.operands[0], written)}#{instruction.tuple_index}"


# -- the dumps kept as data (jax 0.12): the same checks without jax ---------------------------


def _kept() -> list[Path]:
    return sorted(KEPT.glob("*_optimizations.txt"))


def test_kept_dumps_use_element_operands() -> None:
    files = _kept()
    assert len(files) >= 6
    assert sum("#" in p.read_text() for p in files) >= 4


@pytest.mark.parametrize("path", _kept(), ids=lambda p: p.name)
def test_kept_dumps_read_as_xla_reads_them(path: Path) -> None:
    assert assert_reads_as_xla(path.read_text(), _reprint_of(path).read_text(), path.name)


def test_kept_dumps_analyse_with_exit_0() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hloidx", "maps", "-q", str(KEPT)],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "0 files with problems" in result.stdout
