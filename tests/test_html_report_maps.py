"""Opening an instruction in the `maps --format html` page shows its maps as `hloidx maps --format
json` gives them (issue 44: the page carries its content packed and writes an instruction's
operands when it is opened). Checked in chromium (tests/browser.py) against the JSON command, an
independent path through the CLI; with `--names roles` the maps carry their variables' names."""

from __future__ import annotations

import json

import browser
import paths
from click.testing import CliRunner

from hloidx.cli.main import cli

MODULE = paths.ROOT / "tests" / "data" / "corpus" / "einsum_heavy.pre.hlo"
LABELS = {"output\u2192input": "output_to_input", "input\u2192output": "input_to_output"}


def _from_json(args: list[str]) -> dict[str, dict]:
    run = CliRunner().invoke(cli, ["maps", str(MODULE), "--format", "json", *args])
    assert run.exit_code == 0, run.output
    return {i["name"]: i for i in json.loads(run.stdout)["instructions"] if i["operands"]}


def _shown(page, name: str) -> list[dict]:
    """Each operand of instruction ``name`` as the opened page shows it: its status and its
    map lines read back into maps and verdicts per direction."""
    operands = page.eval_on_selector_all(
        f'[id="ins-{name}"] div.operand',
        "all => all.map(d => [d.querySelector('h4 span').textContent,"
        " d.querySelector('pre').textContent])",
    )
    shown = []
    for status, text in operands:
        got: dict = {"status": status}
        for line in text.splitlines():
            label, _, rest = line.partition(": ")
            key = LABELS[label]
            text_map, _, verdict = rest.partition("   verified: ")
            got.setdefault(key, []).append(text_map)
            got.setdefault(key + "_verdicts", []).append(verdict or None)
        shown.append(got)
    return shown


def _expected(ins: dict) -> list[dict]:
    keys = ["output_to_input", "input_to_output"]
    out = []
    for op in ins["operands"]:
        want: dict = {"status": op["status"] or ""}
        for key in keys:
            if op[key] != ["UNDEFINED"]:  # the page writes no line for an undefined map
                want[key] = op[key]
                want[key + "_verdicts"] = op[key + "_verdicts"]
        out.append(want)
    return out


def test_opening_an_instruction_shows_its_maps_as_json_gives_them(tmp_path) -> None:
    sync_api = browser.sync_api()
    with sync_api.sync_playwright() as p:
        chromium = browser.launch(p)
        plain = _from_json([])
        for args in ([], ["--names", "roles"]):
            report = tmp_path / "report.html"
            command = ["maps", str(MODULE), "--format", "html", "--all-computations", *args]
            run = CliRunner().invoke(cli, [*command, "-o", str(report)])
            assert run.exit_code == 0, run.output
            expected = _from_json(args)
            if args:  # the named maps differ from the plain ones: the page must follow them
                assert _texts(expected) != _texts(plain)
            page = chromium.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.on(
                "console",
                lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None,
            )
            page.goto(report.as_uri())
            page.wait_for_selector("body[data-ready]")
            names = page.eval_on_selector_all("details.instruction", "d => d.map(x => x.id)")
            assert [n.removeprefix("ins-") for n in names] == list(expected)
            # closed, an instruction has written nothing yet
            assert page.eval_on_selector_all("div.operand", "d => d.length") == 0
            first = next(iter(expected))
            page.click(f'[id="ins-{first}"] > summary')  # as a reader opens it
            page.wait_for_selector(f'[id="ins-{first}"][data-filled]')
            assert page.eval_on_selector(f'[id="ins-{first}"]', "d => d.open")
            # and the others, each by a click on its heading (in the page: quicker)
            page.eval_on_selector_all(
                "details.instruction:not([open]) > summary", "all => all.forEach(s => s.click())"
            )
            for name in expected:
                assert _shown(page, name) == _expected(expected[name]), name
            # the summary table's link opens its instruction
            page.click("#open-all")
            page.click("#close-all")
            linked = page.eval_on_selector("#summary tbody a", "a => a.textContent")
            page.click("#summary tbody a")
            assert page.eval_on_selector(f'[id="ins-{linked}"]', "d => d.open")
            assert not errors
            page.close()
        chromium.close()


def _texts(instructions: dict[str, dict]) -> list[str]:
    return [m for i in instructions.values() for op in i["operands"] for m in op["output_to_input"]]
