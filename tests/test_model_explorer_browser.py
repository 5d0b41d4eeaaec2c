"""Model Explorer itself, with hloidx's extension, in a real browser: the server that
``model-explorer FILE --extensions=hloidx.model_explorer`` starts (here through
``python -m hloidx.model_explorer``, which is the same but asks no package index for a newer
release), Debian's chromium driven by Playwright, WebGL drawn in software.

Skipped where Model Explorer (``hloidx[explorer]``), Playwright or chromium is missing, except in
CI (``HLOIDX_BROWSER_TESTS=required``), where it must run.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import browser
import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "samples" / "corpus" / "einsum_heavy.opt.hlo"
#: the colour Model Explorer gives the largest value (hloidx.model_explorer.convert.GRADIENT)
HOTTEST = (0xD7, 0x30, 0x1F)


def _model_explorer_installed() -> None:
    try:
        import model_explorer  # noqa: F401
    except ImportError:
        browser._missing("Model Explorer is not installed (pip install -e '.[explorer]')")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Model Explorer serving MODULE with hloidx's cost estimate as node data: (url, node data)."""
    _model_explorer_installed()
    api = browser.sync_api()
    folder = tmp_path_factory.mktemp("explorer")
    result = CliRunner().invoke(
        cli, ["cost", str(MODULE), "--device", "h100", "--format", "model-explorer"]
    )
    assert result.exit_code == 0, result.output
    node_data = folder / "cost.json"
    node_data.write_text(result.output)
    port = _free_port()
    log = (folder / "server.log").open("w+")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # the server prints its address and keeps running: unbuffered, or the line waits in a
    # buffer that is never flushed into the log
    env["PYTHONUNBUFFERED"] = "1"
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "hloidx.model_explorer", str(MODULE), str(node_data)),
            *("--port", str(port), "--host", "127.0.0.1"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        url = None
        deadline = time.monotonic() + 90
        while url is None and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.3)
            log.seek(0)
            for line in log.read().splitlines():
                if line.startswith(f"http://127.0.0.1:{port}/"):
                    url = line.strip()
        log.seek(0)
        assert url is not None, f"Model Explorer did not start:\n{log.read()}"
        yield api, url, json.loads(result.output)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_model_explorer_draws_the_module_with_maps_and_node_data(served):
    api, url, node_data = served
    from hloidx.model_explorer.convert import read_module

    module = read_module(str(MODULE))
    entry = module.entry
    maps = json.loads(CliRunner().invoke(cli, ["maps", str(MODULE), "--format", "json"]).output)
    dot = next(
        i for i in maps["instructions"] if i["computation"] == entry.name and i["name"] == "dot.2"
    )
    with api.sync_playwright() as playwright:
        chromium = browser.launch(playwright, webgl=True)
        try:
            page = chromium.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url)
            # the graph of the entry computation renders: its op count is the adapter's nodes
            page.wait_for_selector("text=op node count", timeout=90_000)
            panel = page.inner_text("body")
            fused = sum(
                len(i.called_computations["calls"][0].instructions)
                for i in entry.instructions
                if i.opcode == "fusion"
            )
            assert f"op node count\n\t\n{len(entry.instructions) + fused}" in panel
            # the node data colours nodes: the slowest kernel's colour is drawn on the graph
            time.sleep(2)
            assert any(
                all(abs(c - h) <= 6 for c, h in zip(colour, HOTTEST, strict=True))
                for colour in browser.png_colours(page.locator("canvas").first.screenshot())
            ), "no node drawn in the hottest node-data colour"
            # a node's side panel shows its operands' maps, as `hloidx maps` prints them
            search = page.locator("input[placeholder*='Search']").first
            search.fill("^dot\\.2$")
            search.press("Enter")
            found = page.locator(".search-results-container mat-tree-node").filter(has_text="dot.2")
            found.last.click(modifiers=["Alt"])
            page.wait_for_selector("text=NODE INFO", timeout=30_000)
            side = page.inner_text("body")
            for operand in dot["operands"]:
                for text in operand["output_to_input"]:
                    assert text in side
            estimate = node_data[entry.name]["results"]["dot.2"]["value"]
            assert str(estimate) in side
        finally:
            chromium.close()
