"""jax 0.12's dump layout: StableHLO `module_NNNN.<name>/module.mlir` beside XLA's module
texts is before-optimization StableHLO, so `--stage after` leaves it out (issue 44)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.hlo.module_files import dump_stage, find_module_files

ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "samples" / "xla_dump"
SOFTMAX_MLIR = ROOT / "samples" / "stablehlo" / "softmax.mlir"
MODULE = "module_0000.jit_convert_element_type"


def _fake_jax012_dump(folder: Path) -> Path:
    """What jax 0.12 writes for one module: the two XLA texts, a buffer assignment, and a
    folder named like the module holding its StableHLO."""
    for stage in ("before_optimizations", "cpu_after_optimizations"):
        shutil.copy(DUMP / f"{MODULE}.{stage}.txt", folder / f"{MODULE}.{stage}.txt")
    (folder / f"{MODULE}.cpu_after_optimizations-buffer-assignment.txt").write_text("x\n")
    (folder / MODULE).mkdir()
    shutil.copy(SOFTMAX_MLIR, folder / MODULE / "module.mlir")
    return folder


def test_module_mlir_is_before_optimization() -> None:
    assert dump_stage("module.mlir") == "before"
    assert dump_stage("module_0008.jit_f.cpu_after_optimizations.txt") == "after"
    assert dump_stage("softmax.hlo") is None  # its name says no stage


def test_each_stage_takes_its_files(tmp_path) -> None:
    dump = _fake_jax012_dump(tmp_path)

    def names(stage: str) -> list[str]:
        found, missing = find_module_files([str(dump)], stage)
        assert missing == []
        return sorted(Path(name).relative_to(dump).as_posix() for name, _ in found)

    mlir = f"{MODULE}/module.mlir"
    assert names("after") == [f"{MODULE}.cpu_after_optimizations.txt"]
    assert names("before") == [f"{MODULE}.before_optimizations.txt", mlir]
    assert len(names("all")) == 3


def test_maps_stage_after_reads_one_file_per_module(tmp_path) -> None:
    dump = _fake_jax012_dump(tmp_path)
    result = CliRunner().invoke(cli, ["maps", str(dump), "--stage", "after"])
    assert result.exit_code == 0, result.output
    headers = re.findall(r"^== (.*)$", result.output, re.MULTILINE)
    assert [Path(h).name for h in headers] == [f"{MODULE}.cpu_after_optimizations.txt"]


def test_help_says_what_each_stage_takes() -> None:
    text = " ".join(CliRunner().invoke(cli, ["maps", "--help"]).output.split())
    stage = text[text.index("--stage") :]
    assert "`before` takes" in stage
    assert "module.mlir" in stage
    assert "`after` the `*after_optimizations.txt`" in stage
