"""Run as a program, hloidx ends its process as soon as the output is flushed (no interpreter
teardown): the output is still complete, to a pipe and to --output, and exit codes hold."""

from __future__ import annotations

import subprocess
import sys

import paths

MODULE = paths.CORPUS / "rnn_scan.opt.hlo"


def _hloidx(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hloidx", *args], cwd=paths.ROOT, capture_output=True, text=True
    )


def test_the_whole_output_reaches_the_pipe_and_the_file(tmp_path) -> None:
    piped = _hloidx("maps", str(MODULE), "--format", "json")
    assert piped.returncode == 0
    assert piped.stdout.rstrip().endswith("}")
    written = tmp_path / "maps.json"
    to_file = _hloidx("maps", str(MODULE), "--format", "json", "-o", str(written))
    assert to_file.returncode == 0
    assert written.read_text(encoding="utf-8") == piped.stdout


def test_exit_codes_survive_the_early_exit() -> None:
    missing = _hloidx("maps", "/nonexistent/module.hlo")
    assert missing.returncode == 2
    assert "no such file" in missing.stderr
    assert _hloidx("--version").returncode == 0
