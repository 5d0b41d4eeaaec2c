"""The `maps --format html` report stays a small multiple of its module (issue 44): its content
is compact JSON (each string once), packed, and expanded by the page's script on demand; each
picture's cells are drawn when the picture comes into view. Before, transformer_block's report
was 6.7 MB for a 42 KB module (157x)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import browser
import paths
import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.hlo.analysis import analyze
from hloidx.hlo.syntax import parse_hlo
from hloidx.pictures import operand_picture
from hloidx.pictures.html import PICTURE_BUDGET
from hloidx.pictures.page_data import unpack
from hloidx.pictures.svg import svg

CORPUS = paths.ROOT / "tests" / "data" / "corpus"
MODULE = CORPUS / "transformer_block.opt.hlo"
SMALL = paths.ROOT / "samples" / "corpus" / "cnn_pool_batchnorm.opt.hlo"
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize(
    "name",
    [
        "transformer_block.opt.hlo",  # 6.7 MB (157x) before issue 44, 178 KB (4.2x) after item 7
        "transformer_block.pre.hlo",  # 336 KB (25.7x) after item 7
        "mlp_layernorm_gelu.pre.hlo",  # 249 KB (30.9x)
        "einsum_heavy.pre.hlo",  # 2.1 KB: the page's own script and style weigh most here
        "large_resnet12_fwd_bwd.pre.hlo",  # 1.39 MB (12.5x): a third of its size was maps text
    ],
)
def test_the_report_is_within_five_times_its_module(name: str, tmp_path) -> None:
    module = CORPUS / name
    report = tmp_path / "report.html"
    run = CliRunner().invoke(cli, ["maps", str(module), "--format", "html", "-o", str(report)])
    assert run.exit_code == 0, run.output
    assert report.stat().st_size <= 5 * module.stat().st_size
    _, data = unpack(report.read_text(encoding="utf-8"))
    assert data["pictures"] >= min(20, sum(len(i[5]) for i in data["ins"]))


@pytest.mark.parametrize("name", ["einsum_heavy.pre.hlo", "transformer_block.opt.hlo"])
def test_the_page_carries_every_instruction_and_map(name: str) -> None:
    """What the page writes when its instructions are opened: every instruction with operands
    and each operand's maps, as ``hloidx maps --format json`` lists them (every computation)."""
    module = str(CORPUS / name)
    page = CliRunner().invoke(cli, ["maps", module, "--format", "html", "--all-computations"])
    _, data = unpack(page.stdout)
    strings = data["s"]
    listed = json.loads(CliRunner().invoke(cli, ["maps", module, "--format", "json"]).stdout)
    listed = [i for i in listed["instructions"] if i["operands"]]
    assert [(strings[i[0]], strings[i[3]]) for i in data["ins"]] == [
        (i["name"], i["computation"]) for i in listed
    ]
    # each operand's maps as the page writes them (none where JSON says UNDEFINED)
    written = [
        [
            [strings[k] for k in op[4][::2]] or ["UNDEFINED"],
            [strings[k] for k in op[5][::2]] or ["UNDEFINED"],
        ]
        for i in data["ins"]
        for op in i[5]
    ]
    assert written == [
        [op["output_to_input"], op["input_to_output"]] for i in listed for op in i["operands"]
    ]


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
        page.wait_for_selector("body[data-ready]")
        page.click("#open-all")  # pictures are written when their instruction is opened
        pictures = page.query_selector_all("svg.hloidx-picture")
        last = pictures[-1]
        last.scroll_into_view_if_needed()
        page.wait_for_function("s => s.querySelectorAll('rect[data-index]').length > 0", arg=last)
        where = last.evaluate(
            "s => [s.closest('details').id.slice(4),"
            " Array.from(s.closest('details').querySelectorAll('div.operand'))"
            ".indexOf(s.closest('div.operand'))]"
        )
        drawn = last.evaluate(
            "s => Array.from(s.querySelectorAll('rect[data-index]'))"
            ".map(r => r.getAttribute('data-count'))"
        )
        assert not errors
        chromium.close()
    assert drawn == _expected_counts(where[0], where[1])
