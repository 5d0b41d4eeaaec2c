"""The command line through click's runner: exit codes, JSON documents, located errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli, main

SIMPLE_HLO = """HloModule m
ENTRY e {
  p0 = f32[10, 20] parameter(0)
  p1 = f32[20] parameter(1)
  bc = f32[10, 20] broadcast(p1), dimensions={1}
  ROOT a = f32[10, 20] add(p0, bc)
}
"""


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_help_teaches(runner):
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "hloidx simplify" in result.output
    for command in ("maps", "simplify"):
        sub = runner.invoke(cli, [command, "--help"])
        assert sub.exit_code == 0
        assert "Example" in sub.output or "FILE" in sub.output


def test_simplify_text(runner):
    result = runner.invoke(
        cli,
        [
            "simplify",
            "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]" in result.output
    assert "verdict: proved" in result.output


def test_simplify_json_document(runner):
    result = runner.invoke(
        cli,
        [
            "simplify",
            "--format",
            "json",
            "--explain",
            "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3], d0 + s0 in [0, 20]",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert set(doc) == {"schema_version", "input", "simplified", "verdict", "rules"}
    assert doc["schema_version"] == 1
    assert doc["simplified"] == "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3]"
    assert set(doc["verdict"]) == {"kind", "points", "counterexample"}
    assert doc["verdict"]["kind"] in ("proved", "exhaustive")
    assert doc["rules"]


def test_simplify_stdin_and_spelling(runner):
    result = runner.invoke(
        cli,
        ["simplify", "-", "--floordiv-spelling", "/", "--no-verify"],
        input="(d0) -> (d0 floordiv 4), domain: d0 in [0, 99]",
    )
    assert result.exit_code == 0, result.output
    assert "d0 / 4" in result.output


def test_simplify_malformed_map_is_located(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["simplify", "(d0) -> (d0 +), domain: d0 in [0, 9]"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "<map>:1:14: error:" in err
    assert "^" in err
    assert "Traceback" not in err


def test_simplify_zero_divisor_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["simplify", "(d0) -> (d0 floordiv 0), domain: d0 in [0, 9]"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert ":1:" in err
    assert "divisor" in err


def test_maps_text_and_json(runner, tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(SIMPLE_HLO)
    text = runner.invoke(cli, ["maps", str(path)])
    assert text.exit_code == 0, text.output
    assert "(d0, d1) -> (d1), domain: d0 in [0, 9], d1 in [0, 19]" in text.output
    result = runner.invoke(cli, ["maps", str(path), "--format", "json"])
    doc = json.loads(result.output)
    assert doc["schema_version"] == 1
    names = [i["name"] for i in doc["instructions"]]
    assert names == ["p0", "p1", "bc", "a"]
    bc = doc["instructions"][2]
    operand = bc["operands"][0]
    assert set(operand) == {
        "index",
        "name",
        "shape",
        "output_to_input",
        "input_to_output",
        "exact",
        "utilization",
        "runtime_variables",
        "verdicts",
        "output_to_input_verdicts",
        "input_to_output_verdicts",
        "status",
        "notes",
        "tuple_element",
    }
    assert operand["status"] == "exact"
    assert operand["output_to_input_verdicts"] == ["proved"]
    assert operand["utilization"] == {"distinct": 1.0, "reads": 10.0, "kind": "exact"}
    assert operand["exact"] is True
    assert set(doc["instructions"][0]) == {
        "computation",
        "name",
        "opcode",
        "shape",
        "operands",
        "notes",
    }


def test_maps_filters(runner, tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(SIMPLE_HLO)
    result = runner.invoke(
        cli, ["maps", str(path), "--format", "json", "--instruction", "%bc", "--direction", "o2i"]
    )
    doc = json.loads(result.output)
    assert [i["name"] for i in doc["instructions"]] == ["bc"]
    # a direction not asked for is empty, not UNDEFINED (that would claim a missing rule)
    assert doc["direction"] == "o2i"
    assert doc["instructions"][0]["operands"][0]["input_to_output"] == []
    missing = runner.invoke(cli, ["maps", str(path), "--instruction", "nope"])
    assert missing.exit_code == 2


def test_maps_unknown_opcode_is_reported_not_fatal(runner, tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(
        SIMPLE_HLO.replace("add(p0, bc)", 'custom-call(p0, bc), custom_call_target="foo"')
    )
    result = runner.invoke(cli, ["maps", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    root = doc["instructions"][-1]
    assert any("unknown indexing" in n and "custom-call" in n for n in root["notes"])


def test_maps_syntax_error_keeps_other_instructions(capsys, tmp_path):
    path = tmp_path / "broken.hlo"
    path.write_text(SIMPLE_HLO.replace("bc = f32[10, 20] broadcast", "bc = f32[10, 20 broadcast"))
    with pytest.raises(SystemExit) as stop:
        main(["maps", str(path), "--format", "json"])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert f"{path}:5:" in captured.err
    assert "Traceback" not in captured.err
    doc = json.loads(captured.out)
    assert {"p0", "p1"} <= {i["name"] for i in doc["instructions"]}


def test_missing_file_is_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["maps", "/nonexistent/file.hlo"])
    assert stop.value.code == 2
    assert "no such file or directory: /nonexistent/file.hlo" in capsys.readouterr().err


def test_from_to_chain_composes_reshapes(runner, tmp_path):
    path = tmp_path / "chain.hlo"
    path.write_text("""HloModule m
ENTRY e {
  p0 = f32[4, 8] parameter(0)
  r1 = f32[32] reshape(p0)
  ROOT r2 = f32[4, 8] reshape(r1)
}
""")
    result = runner.invoke(
        cli, ["maps", str(path), "--from", "r2", "--to", "p0", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["maps"] == ["(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 7]"]
