"""The `maps --format html` report stays a small multiple of its module: each picture's cells
are written compactly and drawn by the page's script when the picture comes into view
(issue 44). Before, transformer_block's report was 6.7 MB for a 42 KB module (157x)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import browser
import paths
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.hlo.analysis import analyze
from hloidx.hlo.syntax import parse_hlo
from hloidx.pictures import operand_picture
from hloidx.pictures.html import PICTURE_BUDGET
from hloidx.pictures.svg import svg

MODULE = paths.ROOT / "tests" / "data" / "corpus" / "transformer_block.opt.hlo"
SMALL = paths.ROOT / "samples" / "corpus" / "cnn_pool_batchnorm.opt.hlo"
SVG_NS = "{http://www.w3.org/2000/svg}"


def test_the_report_is_within_five_times_its_module(tmp_path) -> None:
    report = tmp_path / "report.html"
    run = CliRunner().invoke(cli, ["maps", str(MODULE), "--format", "html", "-o", str(report)])
    assert run.exit_code == 0, run.output
    assert report.stat().st_size <= 5 * MODULE.stat().st_size
    assert report.read_text().count("<svg") >= 20  # the pictures are still there


def _expected_counts(name: str, operand: int) -> list[str]:
    """The cells' counts as the standalone SVG writes them (one rect each)."""
    analysis = analyze(parse_hlo(SMALL.read_text(), SMALL.name), verify=False)
    ins = next(i for i in analysis.instructions if i.name == name)
    pic, _ = operand_picture(ins, operand, budget=PICTURE_BUDGET, max_cols=48)
    root = ET.fromstring(svg(pic))
    return [r.attrib["data-count"] for r in root.iter(f"{SVG_NS}rect") if "data-index" in r.attrib]


def test_the_page_draws_a_picture_when_it_comes_into_view(tmp_path) -> None:
    sync_api = browser.sync_api()
    report = tmp_path / "report.html"
    CliRunner().invoke(cli, ["maps", str(SMALL), "--format", "html", "-o", str(report)])
    with sync_api.sync_playwright() as p:
        chromium = browser.launch(p)
        page = chromium.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(report.as_uri())
        pictures = page.query_selector_all("svg.hloidx-picture")
        last = pictures[-1]
        last.scroll_into_view_if_needed()
        page.wait_for_function("s => s.querySelectorAll('rect[data-index]').length > 0", arg=last)
        where = last.evaluate(
            "s => [s.closest('section').id.slice(4),"
            " Array.from(s.closest('section').querySelectorAll('div.operand'))"
            ".indexOf(s.closest('div.operand'))]"
        )
        drawn = last.evaluate(
            "s => Array.from(s.querySelectorAll('rect[data-index]'))"
            ".map(r => r.getAttribute('data-count'))"
        )
        assert not errors
        chromium.close()
    assert drawn == _expected_counts(where[0], where[1])
