"""Command-line conventions: XLA dump directories and many files, options before or after the
command, `-o`, `-q`, Ctrl-C, broken pipes, wrapping, no escape codes off a terminal, plurals,
and every command printed in the README and in `--help` running as written."""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from hloidx.cli.main import cli, main
from hloidx.hlo.module_files import dump_stage, find_module_files
from hloidx.render.lines import Line, LineBuffer, wrap_line

ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "samples" / "xla_dump"
SOFTMAX = ROOT / "samples" / "seed000" / "fusion_softmax.hlo"
RESNET = ROOT / "tests" / "data" / "corpus" / "large_resnet12_fwd_bwd.opt.hlo"
ESC = "\x1b["


def _run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env)


# ---------------------------------------------------------------------------
# XLA dump directories
# ---------------------------------------------------------------------------


def test_dump_file_names() -> None:
    assert dump_stage("module_0008.jit_f.cpu_after_optimizations.txt") == "after"
    assert dump_stage("module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt") == "after"
    assert dump_stage("module_0008.jit_f.before_optimizations.txt") == "before"
    assert dump_stage("module_0006.jit_f.cpu_after_optimizations-buffer-assignment.txt") is None
    assert dump_stage("module_0006.jit_f.cpu_after_optimizations-memory-usage-report.txt") is None
    assert dump_stage("module_0002.jit_b.wrapped_broadcast_kernel_module.ir-no-opt.ll") is None


def test_dump_directory_picks_module_texts() -> None:
    files, missing = find_module_files([str(DUMP)])
    names = [Path(f).name for f, _ in files]
    assert not missing
    assert len(names) == 12
    assert not any("buffer-assignment" in n for n in names)
    after, _ = find_module_files([str(DUMP)], stage="after")
    assert all(dump_stage(Path(f).name) == "after" for f, _ in after)
    assert len(after) == 6


def test_maps_on_a_dump_directory_reports_per_file() -> None:
    result = _run("maps", str(DUMP), "--stage", "after")
    assert result.exit_code == 0, result.output
    headers = re.findall(r"^== (.*)$", result.output, re.MULTILINE)
    assert len(headers) == 6
    assert all(h.endswith("after_optimizations.txt") for h in headers)
    # the table of all files, then the totals
    for header in headers:
        assert re.search(rf"^{re.escape(header)}\s+ok\s+\d+", result.output, re.MULTILINE)
    assert re.search(
        r"^6 files, \d+ instructions analysed, 0 files with problems$", result.output, re.M
    )


def test_maps_json_on_many_files_is_one_document_and_jobs_agree() -> None:
    one = _run("maps", str(DUMP), "--format", "json")
    two = _run("maps", str(DUMP), "--format", "json", "--jobs", "2")
    assert one.exit_code == two.exit_code == 0
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert a["schema_version"] == 1
    assert a["totals"]["files"] == 12
    for doc in (a, b):
        for f in doc["files"]:
            f.pop("seconds")
    assert a == b
    fusions = [
        i
        for f in a["files"]
        for i in f["report"]["instructions"]
        if i["name"] == "ynn_fusion" and i["opcode"] == "fusion"
    ]
    assert fusions
    assert fusions[0]["operands"][0]["output_to_input"]


def test_a_bad_file_does_not_lose_the_others(tmp_path: Path) -> None:
    for f in sorted(DUMP.glob("module_0006*optimizations.txt")):
        (tmp_path / f.name).write_text(f.read_text())
    (tmp_path / "broken.hlo").write_text("HloModule m\nENTRY e {\n  p = f32[4] parameter(0\n}\n")
    result = _run("maps", str(tmp_path))
    assert result.exit_code == 2
    assert re.search(r"broken\.hlo:\d+:\d+: error", result.output)
    assert result.output.count("== ") == 3
    assert re.search(r"jit_f\.cpu_after_optimizations\.txt\s+ok", result.output)
    assert re.search(r"broken\.hlo\s+bad input", result.output)


def test_check_takes_a_dump_directory() -> None:
    result = _run("check", str(DUMP), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["summary"]["files"] == 12
    assert all(f["status"] == "ok" for f in doc["files"])


def test_no_module_files_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing")
    for command in ("maps", "check"):
        result = _run(command, str(tmp_path))
        assert result.exit_code == 2
        assert "no module files under" in result.output


# ---------------------------------------------------------------------------
# Options before or after the command; -o; -q
# ---------------------------------------------------------------------------


def test_global_options_after_the_command() -> None:
    plain = _run("maps", str(SOFTMAX), "--color", "never")
    assert plain.exit_code == 0
    assert ESC not in plain.output
    forced = _run("maps", str(SOFTMAX), "--color", "always")
    assert forced.exit_code == 0
    assert ESC in forced.output
    before = _run("--color", "always", "maps", str(SOFTMAX))
    assert before.output == forced.output
    # one invocation's options do not leak into the next
    assert ESC not in _run("maps", str(SOFTMAX)).output


def test_output_file_and_quiet(tmp_path: Path) -> None:
    target = tmp_path / "maps.json"
    result = _run("maps", str(SOFTMAX), "--format", "json", "-o", str(target), "-q")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert json.loads(target.read_text())["schema_version"] == 1
    text = tmp_path / "maps.txt"
    assert _run("-o", str(text), "summary", str(SOFTMAX)).exit_code == 0
    assert text.read_text().startswith("summary of ")


def test_output_to_an_unwritable_place_is_a_usage_error(tmp_path: Path) -> None:
    result = _run("maps", str(SOFTMAX), "-o", str(tmp_path / "no" / "such" / "dir.txt"))
    assert result.exit_code == 2
    assert "cannot write" in result.output


# ---------------------------------------------------------------------------
# Ctrl-C and broken pipes
# ---------------------------------------------------------------------------


def test_ctrl_c_exits_130(monkeypatch, capsys) -> None:
    import hloidx.hlo.analysis as analysis

    def interrupted(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(analysis, "analyze", interrupted)
    with pytest.raises(SystemExit) as stop:
        main(["maps", str(SOFTMAX)])
    assert stop.value.code == 130
    assert "Traceback" not in capsys.readouterr().err


# JSON is written while the module is analysed (streamed): the pipe closes inside the command,
# where click would turn it into exit 1
@pytest.mark.parametrize("options", [["--no-verify"], ["--format", "json"]])
def test_broken_pipe_is_silent_and_exits_0(options: list[str]) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "hloidx", "maps", str(RESNET), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.read(100)
    process.stdout.close()  # `| head -c 100`
    err = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=120) == 0
    assert err == ""


# ---------------------------------------------------------------------------
# Text output: wrapping, escape codes, plurals
# ---------------------------------------------------------------------------


MAP_LINE = (
    "    output→input: (d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 1], d1 in [0, 64], "
    "d2 in [0, 124], s0 in [0, 124], d0 * 65 + d1 in [0, 129]   verified: proved"
)


def test_wrap_at_token_boundaries_with_a_hanging_indent() -> None:
    line = Line("    output→input: ", style="dim")
    line.append(MAP_LINE[len("    output→input: ") :])
    pieces = [p.plain for p in wrap_line(line, 80)]
    assert len(pieces) > 1
    assert all(len(p) <= 80 for p in pieces)
    assert all(p.startswith(" " * 8) and not p.startswith(" " * 9) for p in pieces[1:])
    # nothing lost, no token cut: the pieces put back together are the line
    assert " ".join(p.strip() for p in pieces).split() == MAP_LINE.split()
    for piece in pieces[:-1]:
        assert piece.endswith(",") or piece[-1].isalnum() or piece[-1] in ")]"
    # styles travel with their text
    assert wrap_line(line, 80)[0].pieces[0] == ("    output→input: ", "dim")


def test_text_on_an_80_column_terminal_wraps() -> None:
    result = _run(
        "maps", str(SOFTMAX), "--all-computations", "--color", "always", env={"HLOIDX_WIDTH": "80"}
    )
    visible = re.sub(r"\x1b\[[0-9;]*m", "", result.output)
    assert result.exit_code == 0
    too_long = [line for line in visible.splitlines() if len(line) > 80 and " " in line.strip()]
    # only the summary table may be wider (a table is not wrapped)
    assert all("  " in line.strip() for line in too_long), too_long


def test_no_color_and_pipes_get_no_escape_codes() -> None:
    buffer = LineBuffer()
    buffer.print(Line("module m", style="bold underline"))
    buffer.print(Line(MAP_LINE, style="dim"))
    out = io.StringIO()
    buffer.write_to(Console(file=out, force_terminal=True, no_color=True, width=80))
    assert ESC not in out.getvalue()
    assert len(out.getvalue().splitlines()) > 2  # still wrapped: it is a terminal
    piped = _run("maps", str(SOFTMAX), "--all-computations")
    assert ESC not in piped.output
    # in a pipe each map stays on one line, whatever its length
    assert any(len(line) > 100 for line in piped.output.splitlines())


def test_check_table_is_plain_lines_in_a_pipe(tmp_path: Path) -> None:
    deep = tmp_path / ("a_directory_with_a_rather_long_name_" * 3)
    deep.mkdir()
    (deep / "reverse_of_a_vector_with_a_long_name.hlo").write_text(
        "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] reverse(p), dimensions={0}\n}\n"
    )
    result = _run("check", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "┃" not in result.output
    assert "│" not in result.output
    path = str(deep / "reverse_of_a_vector_with_a_long_name.hlo")
    assert re.search(rf"^{re.escape(path)}\s+ok", result.output, re.MULTILINE)


def test_plurals() -> None:
    single = "HloModule m\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n"
    result = CliRunner().invoke(cli, ["maps", "-"], input=single)
    assert "1 instruction analysed" in result.output
    checked = _run("check", str(SOFTMAX))
    assert "1 file, 1 with expectations" in checked.output


# ---------------------------------------------------------------------------
# --tree in JSON, --direction i2o, --from/--to
# ---------------------------------------------------------------------------


def test_tree_goes_into_json() -> None:
    result = _run("maps", str(SOFTMAX), "--tree", "--format", "json")
    doc = json.loads(result.stdout)
    trees = doc["composition_trees"]
    assert trees
    assert trees[0]["instruction"] == "probs"
    steps = [s["instruction"] for e in trees[0]["maps"] for s in e["steps"]]
    assert "softmax" in steps
    assert "sum" in steps


def test_i2o_keeps_utilization() -> None:
    both = json.loads(_run("maps", str(SOFTMAX), "--format", "json").stdout)
    i2o = json.loads(_run("maps", str(SOFTMAX), "--format", "json", "--direction", "i2o").stdout)

    def figures(doc):
        return {
            (i["name"], o["index"]): o["utilization"]
            for i in doc["instructions"]
            for o in i["operands"]
        }

    assert figures(i2o) == figures(both)
    assert any(u is not None for u in figures(i2o).values())
    assert all(not o["output_to_input"] for i in i2o["instructions"] for o in i["operands"])


def test_from_to_says_which_paths_it_shows() -> None:
    text = _run("maps", str(SOFTMAX), "--from", "softmax", "--to", "x")
    assert "one path per distinct map" in text.output
    doc = json.loads(
        _run("maps", str(SOFTMAX), "--from", "softmax", "--to", "x", "--format", "json").stdout
    )
    assert doc["paths_shown"].startswith("one path per distinct map")
    assert len(doc["paths"]) == len(doc["maps"])


# ---------------------------------------------------------------------------
# Every command in the README and in the --help texts runs as written
# ---------------------------------------------------------------------------


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL):
        for line in block.splitlines():
            if line.startswith("hloidx "):
                commands.append(line)
    return commands


def _help_commands() -> list[str]:
    commands = []
    for name in (
        "",
        "maps",
        "check",
        "summary",
        "simplify",
        "show",
        "threads",
        "coalescing",
        "tile",
        "cost",
    ):
        args = [name, "--help"] if name else ["--help"]
        out = _run(*args).output
        commands += [
            line.strip() for line in out.splitlines() if line.strip().startswith("hloidx ")
        ]
    return commands


def _strip_comment(command: str) -> str:
    words = shlex.split(command, comments=True)
    return words


@pytest.mark.parametrize(
    "command", sorted(set(_readme_commands()) | set(_help_commands())), ids=lambda c: c[:60]
)
def test_documented_command_runs_as_written(command: str, tmp_path: Path, monkeypatch) -> None:
    # run in a scratch copy of the layout, so that `-o maps.json` writes nothing in the repository
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(tmp_path)
    words = _strip_comment(command)
    assert words[0] == "hloidx"
    target = None
    if ">" in words:  # a shell redirect, as the README writes node data to a file
        at = words.index(">")
        words, target = words[:at], words[at + 1]
    result = CliRunner().invoke(cli, words[1:])
    assert result.exit_code == 0, (command, result.output)
    assert "Traceback" not in result.output
    if target is not None:
        (tmp_path / target).write_text(result.output)
        assert result.output.strip()


def test_the_readme_and_help_name_commands() -> None:
    assert len(_readme_commands()) >= 8
    assert len(_help_commands()) >= 8
