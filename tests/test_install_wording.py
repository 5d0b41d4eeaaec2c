"""Install spellings that work from a clone, and README sections the help texts name (issue 44)."""

import re
from pathlib import Path

import click

from hloidx.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
# Installing the extra by the package name (hloidx and brackets) asks a registry for a package named hloidx: from a clone the
# extra is installed with `pip install -e '.[lsp]'`.
REGISTRY_SPELLING = re.compile(r"pip install\s+['\"]?hloidx\[")


def _texts() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    for folder in ("hloidx", "editors", "examples", "tests", "bench"):
        for suffix in ("*.py", "*.md", "*.ipynb"):
            files.extend((ROOT / folder).rglob(suffix))
    return files


def test_no_file_spells_the_install_as_a_registry_package():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _texts()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if REGISTRY_SPELLING.search(line)
    ]
    assert offenders == []


def _help_texts() -> dict[str, str]:
    texts = {}
    commands = [("hloidx", cli)]
    while commands:
        name, command = commands.pop()
        with click.Context(command, info_name=name) as context:
            texts[name] = command.get_help(context)
        if isinstance(command, click.Group):
            commands.extend((f"{name} {sub}", cmd) for sub, cmd in command.commands.items())
    return texts


def _readme_headings() -> set[str]:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return {line.lstrip("#").strip().replace("`", "") for line in lines if line.startswith("#")}


def test_every_readme_section_a_help_text_names_exists():
    headings = _readme_headings()
    cited = []
    for name, text in _help_texts().items():
        flat = " ".join(text.split())
        for match in re.finditer(r"README'?s? (?:section )?\"([^\"]+)\"", flat):
            cited.append((name, match.group(1)))
    assert cited, "no help text names a README section: the pattern is stale"
    missing = [(name, title) for name, title in cited if title not in headings]
    assert missing == []


def test_lsp_help_names_the_editor_section_and_the_clone_install():
    text = " ".join(_help_texts()["hloidx lsp"].split())
    assert '"In the editor: hloidx lsp"' in text
    assert "pip install -e '.[lsp]'" in text
