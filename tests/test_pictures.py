"""Pictures of access patterns: the counts come from the maps and equal what the provenance
interpreter says each op reads; the SVG and the HTML report carry those counts, readable back.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import browser
import numpy as np
import paths
import pytest
from click.testing import CliRunner

from hloidx import parse_map
from hloidx.check.interpreter import oracle_relation
from hloidx.cli.main import cli
from hloidx.hlo.analysis import analyze
from hloidx.hlo.syntax import parse_hlo
from hloidx.pictures import operand_picture, read_counts
from hloidx.pictures.grid import picture
from hloidx.pictures.page_data import unpack
from hloidx.pictures.svg import svg

SVG_NS = "{http://www.w3.org/2000/svg}"

# Ops whose output elements each read an operand element at most once (one map): the count of
# an element is the number of output elements that read it, which the interpreter gives.
OPS = {
    "pad": "ROOT r = f32[12,11] pad(p0, p1), padding=1_4_1x2_3_0",
    "slice": "ROOT r = f32[2,3] slice(p0), slice={[1:4:2], [0:6:2]}",
    "transpose": "ROOT r = f32[6,4] transpose(p0), dimensions={1,0}",
    "reverse": "ROOT r = f32[4,6] reverse(p0), dimensions={0}",
    "reduce-window": "ROOT r = f32[3,5] reduce-window(p0, p1), window={size=2x2 stride=1x1},"
    " to_apply=add",
    "reduce": "ROOT r = f32[4] reduce(p0, p1), dimensions={1}, to_apply=add",
    "broadcast": "ROOT r = f32[3,4,6] broadcast(p0), dimensions={1,2}",
}
HEAD = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[4,6] parameter(0)
  p1 = f32[] parameter(1)
  %s
}
"""


def _root_analysis(body: str):
    module = parse_hlo(HEAD % body)
    (ins,) = [i for i in analyze(module, verify=False).instructions if i.name == "r"]
    return ins


@pytest.mark.parametrize("op", sorted(OPS))
def test_counts_equal_the_interpreters_reads(op: str) -> None:
    ins = _root_analysis(OPS[op])
    counts = read_counts(list(ins.operands[0].output_to_input), (4, 6))
    assert counts.kind == "exact"
    pairs = oracle_relation(ins.instruction, 0)
    expected = np.zeros((4, 6))
    for _, source in pairs:
        expected[source] += 1
    assert np.array_equal(counts.counts, expected), (counts.counts, expected)
    # the counts are the reads that utilization averages
    u = ins.operands[0].utilization
    assert counts.counts.sum() / 24 == pytest.approx(u.reads)


@pytest.mark.parametrize("op", ["pad", "reduce-window", "slice"])
def test_one_output_element_reads_what_the_interpreter_says(op: str) -> None:
    ins = _root_analysis(OPS[op])
    shape = tuple(ins.instruction.shape.dims)
    point = tuple(n // 2 for n in shape)
    counts = read_counts(list(ins.operands[0].output_to_input), (4, 6), point=point)
    read = {source for out, source in oracle_relation(ins.instruction, 0) if out == point}
    assert {tuple(int(i) for i in ix) for ix in np.argwhere(counts.counts > 0)} == read


def test_undefined_operands_have_no_picture() -> None:
    module = parse_hlo(
        "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
        '  ROOT c = f32[4] custom-call(p), custom_call_target="mystery"\n}\n'
    )
    ins = next(i for i in analyze(module, verify=False).instructions if i.name == "c")
    pic, counts = operand_picture(ins, 0)
    assert pic is None
    assert counts.is_unknown
    assert "without an indexing rule" in counts.note


def test_sampled_counts_say_so() -> None:
    # a linear index ties both dimensions into one group of 24 points, over the budget of 10
    # (a map whose variables separate, like a broadcast's, is counted exactly instead)
    m = parse_map(
        "(d0, d1) -> ((d0 * 6 + d1) floordiv 6, (d0 * 6 + d1) mod 6), "
        "domain: d0 in [0, 3], d1 in [0, 5]"
    )
    counts = read_counts([m], (4, 6), budget=10)
    assert counts.kind == "sampled"
    assert "sample" in counts.note
    assert counts.counts.sum() == pytest.approx(24, rel=0.2)


# ---------------------------------------------------------------------------
# SVG and blocks
# ---------------------------------------------------------------------------


def _cells(svg_text: str) -> list[ET.Element]:
    root = ET.fromstring(svg_text)
    return [r for r in root.iter(f"{SVG_NS}rect") if "data-index" in r.attrib]


def test_svg_cells_carry_index_and_count() -> None:
    ins = _root_analysis(OPS["reduce-window"])
    pic, counts = operand_picture(ins, 0, output_element=(1, 2))
    cells = _cells(svg(pic, "reduce-window operand 0"))
    assert len(cells) == 24
    for cell in cells:
        i, j = (int(x) for x in cell.attrib["data-index"].split(","))
        assert float(cell.attrib["data-count"]) == counts.counts[i, j]
    marked = {c.attrib["data-index"] for c in cells if c.attrib.get("data-highlight") == "1"}
    assert marked == {"1,2", "1,3", "2,2", "2,3"}


def test_large_operands_are_drawn_in_blocks() -> None:
    counts = read_counts([], (100, 300))
    counts.counts[:, :] = 1
    counts.counts[0, 0] = 5
    pic = picture(counts, (100, 300), max_rows=10, max_cols=30)
    assert pic.block == (10, 10)
    root = ET.fromstring(svg(pic))
    assert "block of 10x10 elements" in root.attrib["data-aggregation"]
    cells = _cells(svg(pic))
    assert len(cells) == 300
    first = next(c for c in cells if c.attrib["data-index"] == "0-9,0-9")
    assert first.attrib["data-count"] == "5"
    assert first.attrib["data-total"] == "104"
    assert first.attrib["data-aggregate"] == "max"


def test_higher_ranks_are_projected_on_two_dimensions() -> None:
    counts = read_counts([], (2, 3, 4))
    counts.counts[:] = np.arange(24).reshape(2, 3, 4)
    pic = picture(counts, (2, 3, 4), dims=(0, 2))
    assert pic.summed == (1,)
    assert pic.cells[1][3].count == sum(np.arange(24).reshape(2, 3, 4)[1, :, 3])


# ---------------------------------------------------------------------------
# The command and the HTML report
# ---------------------------------------------------------------------------

PAD = paths.ROOT / "samples" / "seed000" / "pad.hlo"


def test_show_text_json_and_svg(tmp_path: Path) -> None:
    target = tmp_path / "pad.svg"
    text = CliRunner().invoke(
        cli,
        ["show", str(PAD), "--instruction", "pad", "--output-element", "3,5", "--svg", str(target)],
    )
    assert text.exit_code == 0, text.output
    assert "XX" in text.output  # the output element's reads, marked (no colour in a pipe)
    assert "\x1b[" not in text.output
    cells = _cells(target.read_text())
    assert [c.attrib["data-index"] for c in cells if c.attrib.get("data-highlight")] == ["1,1"]
    doc = json.loads(
        CliRunner()
        .invoke(cli, ["show", str(PAD), "--instruction", "pad", "--format", "json"])
        .stdout
    )
    assert doc["kind"] == "exact"
    assert sum(c["count"] for row in doc["cells"] for c in row) == 16


def test_show_errors_are_usage_errors() -> None:
    bad = CliRunner().invoke(cli, ["show", str(PAD), "--instruction", "nosuch"])
    assert bad.exit_code == 2
    outside = CliRunner().invoke(
        cli, ["show", str(PAD), "--instruction", "pad", "--output-element", "99,0"]
    )
    assert outside.exit_code == 2
    assert "outside" in outside.output


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            if name in ("src", "href") and value and "://" in value:
                self.external.append(value)


def test_html_report_is_self_contained_and_holds_the_pictures(tmp_path: Path) -> None:
    path = paths.ROOT / "samples" / "corpus" / "cnn_pool_batchnorm.opt.hlo"
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "html"])
    assert result.exit_code == 0
    page = _Page()
    page.feed(result.stdout)
    assert page.tags["table"] == 1
    assert not page.external  # no network
    assert page.tags["script"] == 2  # the page's data (JSON) and its own script, nothing else
    assert "<script src" not in result.stdout
    _, data = unpack(result.stdout)
    assert data["pictures"] >= 10  # drawn by the page when their instruction is opened


def test_html_report_in_a_browser(tmp_path: Path) -> None:
    """Playwright with Debian's chromium (tests/browser.py): skipped where either is missing,
    except in CI."""
    sync_api = browser.sync_api()
    report = tmp_path / "report.html"
    path = paths.ROOT / "samples" / "corpus" / "cnn_pool_batchnorm.opt.hlo"
    CliRunner().invoke(cli, ["maps", str(path), "--format", "html", "-o", str(report)])
    with sync_api.sync_playwright() as p:
        chromium = browser.launch(p)
        page = chromium.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(report.as_uri())
        page.wait_for_selector("body[data-ready]")
        assert not errors
        page.click("#open-all")  # every instruction opened: its maps and pictures written
        pictures = page.query_selector_all("svg")
        assert len(pictures) >= 10
        assert all(svg_el.is_visible() for svg_el in pictures)
        for markup in page.eval_on_selector_all(
            "svg", "all => all.map(s => new XMLSerializer().serializeToString(s))"
        ):
            ET.fromstring(markup)  # each picture is valid SVG
        page.click("#summary th:nth-child(6)")  # reads, ascending
        reads = page.eval_on_selector_all(
            "#summary tbody tr td:nth-child(6)",
            "cells => cells.map(c => parseFloat(c.getAttribute('data-value')))",
        )
        assert reads == sorted(reads)
        page.click("#summary th:nth-child(6)")  # and descending
        reads = page.eval_on_selector_all(
            "#summary tbody tr td:nth-child(6)",
            "cells => cells.map(c => parseFloat(c.getAttribute('data-value')))",
        )
        assert reads == sorted(reads, reverse=True)
        assert not errors
        chromium.close()


@pytest.mark.parametrize("op", ["pad", "reduce-window", "transpose", "broadcast"])
def test_a_tile_reads_what_the_interpreter_says(op: str) -> None:
    ins = _root_analysis(OPS[op])
    shape = tuple(ins.instruction.shape.dims)
    region = tuple((n // 3, min(n - 1, n // 3 + 1)) for n in shape)
    counts = read_counts(list(ins.operands[0].output_to_input), (4, 6), region=region)
    inside = {
        source
        for out, source in oracle_relation(ins.instruction, 0)
        if all(lo <= i <= hi for i, (lo, hi) in zip(out, region, strict=True))
    }
    assert {tuple(int(i) for i in ix) for ix in np.argwhere(counts.counts > 0)} == inside


def _show(*args: str):
    return CliRunner().invoke(cli, ["show", *args])


def test_show_a_tile_and_a_warp() -> None:
    seed004 = str(paths.DATA / "tiling" / "seed004.hlo")
    tile_args = ("--instruction", "fusion", "--tile", "4,100", "--tile-index", "2,0")
    assert _show(seed004, *tile_args).exit_code == 0
    doc = json.loads(_show(seed004, *tile_args, "--dims", "0,1", "--format", "json").output)
    # rows 8..11 of the collapsed output straddle two rows of 10: (0, 8), (0, 9), (1, 0), (1, 1)
    cells = {cell["index"] for row in doc["cells"] for cell in row if cell["highlight"]}
    assert cells == {"0,8", "0,9", "1,0", "1,1"}

    coalescing = str(paths.DATA / "gpu" / "view" / "coalescing.hlo")
    warp_args = ("--instruction", "added", "--operand", "1", "--warp", "0,1")
    assert _show(coalescing, *warp_args).exit_code == 0
    doc = json.loads(_show(coalescing, *warp_args, "--format", "json").output)
    assert doc["shape"] == [100, 200]
    lit = [cell["index"].split(",") for row in doc["cells"] for cell in row if cell["highlight"]]
    rows = {r for r, _ in lit}
    spans = [tuple(int(x) for x in c.split("-")) for _, c in lit]
    # warp 1 of block 0 writes output elements 32..63 of row 0: operand b is read there too
    assert rows == {"0-3"}
    assert min(a for a, _ in spans) <= 32
    assert max(b for _, b in spans) >= 63
    bad = _show(seed004, "--instruction", "fusion", "--tile", "4,100", "--output-element", "0,0")
    assert bad.exit_code == 2
