"""The notebook displays: every ``_repr_html_`` parsed (well-formed, self-contained, the
expected names and maps, pictures with ``data-index``/``data-count`` cells), the DataFrames'
columns on the bundled samples, and the example notebook run top to bottom on a kernel."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import browser
import paths
import pytest

import hloidx
from hloidx.errors import HloidxError
from hloidx.notebook import COLUMNS, MapView

SEED = paths.SAMPLES / "seed000"
TILING = paths.DATA / "tiling" / "seed004.hlo"
GPU = paths.DATA / "gpu" / "view"
NOTEBOOK = paths.ROOT / "examples" / "quickstart.ipynb"
NO_EXTRA = "the notebook extra is not installed (pip install -e '.[notebook]')"
VOID = {"br", "meta", "img", "hr", "input", "link", "col", "wbr"}


class Page(HTMLParser):
    """A parsed fragment: its text, its elements with their attributes, and whether every tag
    was closed in order."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(markup)
        self.close()
        if self.stack:
            self.errors.append(f"never closed: {self.stack}")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def all_text(self) -> str:
        return "".join(self.text)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]


def _page(obj: object) -> Page:
    markup = obj._repr_html_()
    page = Page(markup)
    assert not page.errors, page.errors
    # self-contained: no script, nothing fetched
    assert not page.tags("script")
    assert not any("src" in a or "href" in a for _, a in page.elements)
    return page


def _cells(page: Page) -> list[dict[str, str | None]]:
    cells = [a for a in page.tags("rect") if "data-index" in a]
    assert cells
    assert all("data-count" in a for a in cells)
    return cells


@pytest.fixture(scope="module")
def softmax() -> hloidx.notebook.Analysis:
    return hloidx.analyze(SEED / "fusion_softmax.hlo")


def test_analysis_html_is_the_triage_table_with_statuses(softmax) -> None:
    page = _page(softmax)
    assert "softmax_sample" in page.all_text
    assert page.tags("table")
    summary = softmax.summary().as_dict()
    for row in summary["rows"]:
        assert row["name"] in page.all_text
    statuses = {a.get("class") for a in page.tags("span")}
    assert "exact" in statuses


def test_instruction_html_has_maps_verdicts_and_pictures(softmax) -> None:
    view = softmax.instruction("probs")
    page = _page(view)
    text = page.all_text
    assert "probs" in text
    for op in view.operands:
        for m in op.output_to_input:
            assert hloidx.format_map(m) in text
        assert op.name in text
    assert "verified: " in text
    cells = _cells(page)
    op = view.operands[0]
    shape = tuple(int(x) for x in op.shape.split("[")[1].split("]")[0].split(","))
    # every element of the picture's last two dims is a cell that says how often it is read
    assert len(cells) == math.prod(shape[-2:]) or any("data-aggregate" in c for c in cells)


def test_operand_html_has_its_maps_domain_and_picture(softmax) -> None:
    op = softmax.instruction("probs").operands[0]
    page = _page(op)
    assert hloidx.format_map(op.output_to_input[0]) in page.all_text
    assert "dimension" in page.all_text
    _cells(page)


def test_map_html_has_text_and_domain() -> None:
    m = hloidx.parse_map(
        "(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 7], s0 in [0, 3], d0 + s0 in [0, 9]"
    )
    page = _page(MapView(m))
    assert hloidx.format_map(m) in page.all_text  # `->` and `[` escaped and read back
    rows = [r for r in page.all_text.split("\n") if r]
    assert rows
    for needle in ("d0", "s0", "dimension", "range", "constraint", "[0, 7]", "[0, 3]", "[0, 9]"):
        assert needle in page.all_text


def test_parsed_map_shows_its_text_and_domain() -> None:
    """``hloidx.parse_map`` gives a map that Jupyter shows as its text and its domain (one row
    per variable and constraint), the same fragment as the notebook's operand maps."""
    text = "(d0, d1)[s0] -> (d0 * 4 + s0, d1), domain: d0 in [0, 7], d1 in [2, 5], s0 in [0, 3], d0 + s0 in [0, 9]"
    m = hloidx.parse_map(text)
    page = _page(m)
    assert m._repr_html_() == MapView(m)._repr_html_()
    assert text in page.all_text  # the text as given (XLA's own print of it), read back
    rows = page.tags("tr")
    assert len(rows) == 1 + 4  # the header, d0, d1, s0 and the constraint
    for needle in ("dimension", "range", "constraint", "[2, 5]", "d0 + s0", "[0, 9]"):
        assert needle in page.all_text
    # every map shows so, once maps have been parsed through the API: a simplified one too
    simpler = hloidx.simplify(hloidx.parse_map("(d0) -> (d0 floordiv 8), domain: d0 in [0, 7]"))
    assert "(d0) -&gt; (0)" in simpler._repr_html_()


def test_map_display_keeps_the_maps_layer_free_of_html() -> None:
    """Before the API has parsed a map, a map has no HTML (Jupyter shows its text), and the
    maps layer alone loads no display code."""
    code = (
        "import sys\n"
        "from hloidx.maps.syntax import parse_map\n"
        "m = parse_map('(d0) -> (d0), domain: d0 in [0, 3]')\n"
        "assert m._repr_html_() is None\n"
        "assert not [n for n in sys.modules if n.startswith(('hloidx.notebook', 'html'))]\n"
        "import hloidx\n"
        "assert '<table>' in hloidx.parse_map('(d0) -> (d0), domain: d0 in [0, 3]')._repr_html_()\n"
        "assert '<table>' in m._repr_html_()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=paths.ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_picture_html_is_the_svg() -> None:
    pic = hloidx.show(SEED / "pad.hlo", "pad", output_element=(3, 5))
    page = _page(pic)
    cells = _cells(page)
    assert any(c.get("data-highlight") == "1" for c in cells)
    counts = [c["count"] for row in pic.as_dict()["cells"] for c in row]
    assert sorted(float(c["data-count"]) for c in cells) == sorted(counts)
    assert page.tags("svg")[0]["class"] == "hloidx-picture"


@pytest.mark.parametrize("sizes", [(4, 100), "symbolic", "auto"])
def test_tile_html_has_every_operand(sizes) -> None:
    t = hloidx.tile(TILING, "fusion", sizes)
    page = _page(t)
    assert page.tags("table")
    doc = t.as_dict()
    if sizes == "auto":
        assert str(doc["candidates"][0]["tile"]) in page.all_text
    else:
        for o in doc["operands"]:
            assert o["name"] in page.all_text
            assert (o["offset_map"] or "UNDEFINED") in page.all_text


def test_gpu_html_has_every_operand() -> None:
    t = hloidx.threads(GPU / "seed001.hlo", "fusion")
    page = _page(t)
    for o in t.as_dict()["operands"]:
        assert o["name"] in page.all_text
        for m in o["maps"]:
            assert m["map"] in page.all_text
    c = hloidx.coalescing(GPU / "coalescing.hlo")
    page = _page(c)
    for f in c.as_dict()["fusions"]:
        assert f["name"] in page.all_text


def test_summary_html_has_every_row(softmax) -> None:
    page = _page(softmax.summary(limit=0))
    for row in softmax.summary().rows:
        assert row["name"] in page.all_text


def test_cost_view_shows_a_table_per_kernel() -> None:
    if importlib.util.find_spec("hloidx.perf") is None:
        pytest.skip("cost model not merged (hloidx.perf is built on the cost branch)")
    c = hloidx.cost(paths.SAMPLES / "corpus" / "cnn_pool_batchnorm.opt.hlo", "rtx-a6000")
    page = _page(c)
    assert page.tags("table")
    kernels = c.as_dict()["kernels"]
    assert kernels
    for k in kernels[:40]:
        assert k["name"] in page.all_text
    assert "not measured" in page.all_text  # an estimate says so
    pd = pytest.importorskip("pandas", reason=NO_EXTRA)
    df = c.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert len(df) == len(kernels)
    # every JSON field of every kernel is a column (nested ones as `field.subfield`)
    for kernel, row in zip(kernels, df.to_dict("records"), strict=True):
        for key, value in kernel.items():
            if isinstance(value, dict):
                assert any(c.startswith(key + ".") for c in df.columns), key
            elif not isinstance(value, list) and value is not None:
                assert row[key] == value, key


def _samples() -> list[Path]:
    found = sorted(paths.SAMPLES.glob("*/*.hlo")) + sorted(paths.SAMPLES.glob("*/*.mlir"))
    return [p for p in found if "xla_dump" not in p.parts]


@pytest.mark.parametrize("path", _samples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_dataframe_has_the_documented_columns(path: Path) -> None:
    pd = pytest.importorskip("pandas", reason=NO_EXTRA)
    a = hloidx.analyze(path, verify=False)
    df = a.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert tuple(df.columns) == COLUMNS
    doc = a.as_dict()
    operands = [(i, o) for i in doc["instructions"] for o in i["operands"]]
    assert len(df) == len(operands)
    for row, (i, o) in zip(df.itertuples(index=False), operands, strict=True):
        assert (row.computation, row.instruction, row.opcode) == (
            i["computation"],
            i["name"],
            i["opcode"],
        )
        assert (row.operand, row.shape, row.status) == (o["name"], o["shape"], o["status"])
        use = o["utilization"] or {}
        for column in ("distinct", "reads"):
            value = getattr(row, column)
            assert (
                (value is None or value != value)
                if use.get(column) is None
                else (value == use[column])
            )
        assert row.maps == len([m for m in o["output_to_input"] if m != "KNOWN EMPTY"])


def test_to_pandas_without_pandas_names_the_extra(monkeypatch, softmax) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(HloidxError, match=r"pip install -e '\.\[notebook\]'"):
        softmax.to_pandas()


def test_maps_display_in_ipython() -> None:
    pytest.importorskip("IPython", reason=NO_EXTRA)
    from IPython.core.interactiveshell import InteractiveShell

    from hloidx.notebook import register_formatters

    shell = InteractiveShell.instance()
    try:
        assert register_formatters()
        m = hloidx.parse_map("(d0) -> (d0 floordiv 4), domain: d0 in [0, 7]")
        data, _ = shell.display_formatter.format(m)
        assert data["text/plain"] == hloidx.format_map(m)
        page = Page(data["text/html"])
        assert not page.errors
        assert hloidx.format_map(m) in page.all_text
    finally:
        InteractiveShell.clear_instance()


# ---------------------------------------------------------------------------
# The example notebook
# ---------------------------------------------------------------------------


def test_example_notebook_is_committed_without_outputs() -> None:
    doc = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in doc["cells"] if c["cell_type"] == "code"]
    assert code
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)


def _executed(tmp_path_factory: pytest.TempPathFactory) -> object:
    nbformat = pytest.importorskip("nbformat", reason=NO_EXTRA)
    nbclient = pytest.importorskip("nbclient", reason=NO_EXTRA)
    pytest.importorskip("ipykernel", reason=NO_EXTRA)
    pytest.importorskip("pandas", reason=NO_EXTRA)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    if importlib.util.find_spec("hloidx.perf") is None:
        # cost model not merged (hloidx.perf is built on the cost branch): only its cells go
        nb.cells = [c for c in nb.cells if "cost" not in c.metadata.get("tags", [])]
    client = nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(paths.ROOT / "examples")}},
    )
    client.execute()
    return nb


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> object:
    return _executed(tmp_path_factory)


def test_example_notebook_runs_and_shows_tables_and_pictures(executed) -> None:
    html_outputs = [
        o["data"]["text/html"]
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.get("output_type") in ("display_data", "execute_result") and "text/html" in o["data"]
    ]
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    pages = [Page(h) for h in html_outputs]
    assert all(not p.errors for p in pages)
    assert sum(1 for p in pages if p.tags("table")) >= 3  # analysis, maps' domains, tiles
    assert any(_has_cells(p) for p in pages)  # the heatmap


def _has_cells(page: Page) -> bool:
    return any("data-index" in a and "data-count" in a for a in page.tags("rect"))


def test_example_notebook_export_renders_in_a_browser(executed, tmp_path: Path) -> None:
    sync_api = browser.sync_api()
    nbconvert = pytest.importorskip("nbconvert", reason=NO_EXTRA)
    body, _ = nbconvert.HTMLExporter(template_name="lab").from_notebook_node(executed)
    page_file = tmp_path / "quickstart.html"
    page_file.write_text(body, encoding="utf-8")
    fetched: list[str] = []

    def offline(route) -> None:
        # nbconvert's page shell asks a CDN for MathJax and require.js; the tests never go
        # online, and our outputs need neither: those requests get an empty answer
        fetched.append(route.request.url)
        route.fulfill(status=200, body="", content_type="text/javascript")

    with sync_api.sync_playwright() as p:
        chromium = browser.launch(p)
        page = chromium.new_page()
        page.route(re.compile(r"^https?://"), offline)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_file.as_uri())
        assert not errors
        pictures = page.query_selector_all("svg.hloidx-picture")
        assert pictures
        assert all(svg.is_visible() for svg in pictures)
        assert page.query_selector_all(".hloidx table")
        chromium.close()
    assert all("cdnjs" in url for url in fetched), fetched  # only nbconvert's shell fetches
