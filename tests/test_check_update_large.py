"""``check --update`` on modules too large for the whole-tensor oracle: confirmed by the point-wise
oracle on sampled output points, and saying so; refused when that check disagrees; rewritten
without an oracle only when neither can confirm and every map equals the committed one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import paths
from click.testing import CliRunner

from hloidx.check import expectations, sampled_check
from hloidx.check.expectations import check_file, expectation_path
from hloidx.check.sampled_check import SampledOutcome
from hloidx.cli import cli
from hloidx.maps.printer import format_map
from hloidx.maps.syntax import parse_map

LARGE = ["dot", "fusion_add_transpose", "fusion_softmax", "gather", "reduce_window", "transpose"]
CONFIRMED = "confirmed by the point-wise provenance oracle on 64 sampled output points"


def _run(*args: str):
    result = CliRunner().invoke(cli, ["--color", "never", *args], env={"HLOIDX_WIDTH": "200"})
    assert "Traceback" not in result.output
    return result


def _copy(sample: str, dest: Path, with_expectation: bool = True) -> Path:
    src = paths.SAMPLES / "seed000" / f"{sample}.hlo"
    shutil.copy(src, dest / src.name)
    if with_expectation:
        shutil.copy(expectation_path(src), dest / expectation_path(src).name)
    return dest / src.name


def test_update_confirms_the_large_seed_modules_by_sampling(tmp_path: Path) -> None:
    for sample in LARGE:
        _copy(sample, tmp_path)
    before = {p.name: p.read_text() for p in tmp_path.glob("*.expected")}
    result = _run("check", "--update", str(tmp_path), "--format", "json")
    assert result.exit_code == 0
    files = json.loads(result.stdout)["files"]
    assert [Path(f["path"]).stem for f in files] == LARGE
    for f in files:
        assert f["status"] == "ok", f
        (record,) = f["oracle"]
        assert record["method"] == "sampled", f
        assert record["points"] == 64
        assert record["status"] == "agrees"
        assert any(CONFIRMED in n for n in f["notes"]), f["notes"]
        assert not any("without the oracle" in n for n in f["notes"])
    assert {p.name: p.read_text() for p in tmp_path.glob("*.expected")} == before
    text = _run("check", "--update", str(tmp_path / "gather.hlo"))
    assert f"gather: {CONFIRMED} (too large for the whole-tensor oracle)" in text.output


def test_update_writes_a_new_large_module_and_says_how_it_was_confirmed(tmp_path: Path) -> None:
    hlo = tmp_path / "transpose.hlo"
    hlo.write_text(
        "HloModule transpose\nENTRY main {\n  p0 = f32[5,4096,3,100] parameter(0)\n"
        "  ROOT t = f32[3,100,5,4096] transpose(p0), dimensions={2,3,0,1}\n}\n"
    )
    result = _run("check", "--update", str(hlo), "--format", "json")
    assert result.exit_code == 0
    (f,) = json.loads(result.stdout)["files"]
    assert f["status"] == "updated"
    assert f["oracle"] == [
        {"instruction": "t", "method": "sampled", "points": 64, "status": "agrees"}
    ]
    written = expectation_path(hlo).read_text()
    header = " ".join(line[3:] for line in written.splitlines() if line.startswith("// "))
    assert (
        "after the point-wise provenance oracle agreed with them on 64 sampled output points "
        "of each instruction" in header
    )
    assert "(d2, d3, d0, d1)" in written
    assert _run("check", str(hlo)).exit_code == 0


def _changed_dot(tmp_path: Path) -> Path:
    """dot.hlo contracting another dimension, with its old expectation corrupted."""
    hlo = _copy("dot", tmp_path)
    text = hlo.read_text()
    text = text.replace("f32[4,128,256] parameter(0)", "f32[4,256,128] parameter(0)")
    text = text.replace("lhs_contracting_dims={2}", "lhs_contracting_dims={1}")
    hlo.write_text(text)
    exp = expectation_path(hlo)
    exp.write_text(exp.read_text().replace("(d0, s0, d2)", "(d0, d2, s0)"))
    return hlo


def test_changed_large_module_with_a_corrupt_expectation_is_rewritten_once_confirmed(
    tmp_path: Path,
) -> None:
    hlo = _changed_dot(tmp_path)
    assert _run("check", str(hlo)).exit_code == 1
    result = _run("check", "--update", str(hlo), "--format", "json")
    assert result.exit_code == 0
    (f,) = json.loads(result.stdout)["files"]
    assert f["status"] == "updated"
    assert any(CONFIRMED in n for n in f["notes"])
    written = expectation_path(hlo).read_text()
    assert "output_to_input operand id = 0: (d0, d1, d2)[s0] -> (d0, s0, d1)" in written
    assert "output_to_input operand id = 1: (d0, d1, d2)[s0] -> (d0, s0, d2)" in written
    assert _run("check", str(hlo)).exit_code == 0


def test_changed_large_module_is_refused_when_the_sampled_oracle_disagrees(
    tmp_path: Path, monkeypatch
) -> None:
    hlo = _changed_dot(tmp_path)
    before = expectation_path(hlo).read_text()
    analyse = expectations._analyse

    def wrong_analysis(path, result):  # the analysis gets operand 1's offset wrong
        analysed = analyse(path, result)
        for ins in analysed.analysis.instructions:
            if ins.name == "dot":
                op = ins.operands[1]
                text = format_map(op.output_to_input[0]).replace("(d0, s0, d2)", "(d0, s0, d2 + 1)")
                op.output_to_input = [parse_map(text)]
        return analysed

    monkeypatch.setattr(expectations, "_analyse", wrong_analysis)
    result = check_file(str(hlo), update=True)
    assert result.status == "update refused"
    assert "dot: oracle disagrees (the point-wise provenance oracle on 64" in result.update_refused
    assert "operand 1 output_to_input" in result.update_refused
    assert expectation_path(hlo).read_text() == before


def test_without_a_confirming_oracle_only_an_unchanged_module_is_rewritten(
    tmp_path: Path, monkeypatch
) -> None:
    def cannot_check(instr, analysed, **kw):
        return SampledOutcome("unchecked", 64, [], ["output (0, 0, 0, 0): not interpreted"])

    monkeypatch.setattr(sampled_check, "sampled_oracle_check", cannot_check)
    unchanged = _copy("transpose", tmp_path)
    result = check_file(str(unchanged), update=True)
    assert result.status == "ok"
    assert not any(CONFIRMED in n for n in result.notes)
    assert any("without the oracle (it could not confirm" in n for n in result.notes)
    assert result.oracle[0]["status"] == "refused"
    changed = _changed_dot(tmp_path)
    before = expectation_path(changed).read_text()
    result = check_file(str(changed), update=True)
    assert result.status == "update refused"
    assert "could not confirm it (0 of 64 sampled output points checked)" in result.update_refused
    assert expectation_path(changed).read_text() == before
