"""Snapshot the command line's output byte for byte, to prove a refactor changes none of it.

Runs ``hloidx`` in-process (Click's test runner) over every HLO/StableHLO file under the given
directories (default: ``samples/`` and ``tests/data/corpus/``) with ``maps`` (text plain and in
colour, json, html), ``summary`` (text, json), ``show`` and ``tile`` (text, json) of one
instruction, ``threads`` and ``coalescing`` (text, json), ``cost`` (text, json, html) and
``check`` (text, json), and writes one line per run: the command, the exit code and the
SHA-256 of its standard output. Run it before and after a change and compare:

    python bench/render_snapshot.py /tmp/before.txt
    ... change ...
    python bench/render_snapshot.py /tmp/after.txt --compare /tmp/before.txt

``--full DIR`` also writes every output to ``DIR`` (to diff a mismatch by eye).
The instruction drawn/tiled is found with a regular expression over the file (the ROOT of
the entry computation, and the first fusion), so the choice does not depend on the code tested.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
#: the same console everywhere, during each run only: a colour terminal of a fixed width
CONSOLE_ENV = {"TERM": "xterm-256color", "HLOIDX_WIDTH": "100", "NO_COLOR": None}

SUFFIXES = (".hlo", ".txt", ".mlir")
_ENTRY_ROOT = re.compile(r"^ENTRY[^\n]*\{(?:\n(?!\}).*)*?\n\s*ROOT\s+%?([\w.\-]+)", re.M)
_FUSION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*?\bfusion\(", re.M)


def inputs(roots: list[Path]) -> list[Path]:
    found = []
    for root in roots:
        found += [root] if root.is_file() else sorted(root.rglob("*"))
    found = [p for p in found if p.suffix in SUFFIXES]
    return [p for p in found if "buffer-assignment" not in p.name]


def instruction(text: str) -> str | None:
    """The first fusion, else the entry's ROOT (HLO text only)."""
    match = _FUSION.search(text) or _ENTRY_ROOT.search(text)
    return match.group(1) if match else None


def runs(path: Path, quick: bool = False) -> Iterator[list[str]]:
    """The command lines run on one file (``quick``: text and json of maps and summary only)."""
    f = path.relative_to(ROOT).as_posix()  # the same text in every checkout
    yield ["maps", f, "--color", "never"]
    yield ["maps", f, "--format", "json"]
    yield ["summary", f, "--color", "never"]
    yield ["summary", f, "--format", "json"]
    if quick:
        return
    yield ["maps", f, "--color", "always"]
    yield ["maps", f, "--format", "html"]
    yield ["maps", f, "--all-computations", "--tree", "--color", "never"]
    yield ["summary", f, "--color", "always", "--limit", "5"]
    yield ["check", f, "--color", "never"]
    yield ["check", f, "--format", "json"]
    yield ["coalescing", f, "--color", "never"]
    yield ["coalescing", f, "--format", "json"]
    for fmt in ("text", "json", "html"):
        yield ["cost", f, "--format", fmt, "--color", "never"]
    if path.suffix == ".mlir":
        return
    name = instruction((ROOT / path).read_text(encoding="utf-8", errors="replace"))
    if name is None:
        return
    for fmt in ("text", "json"):
        yield ["show", f, "--instruction", name, "--format", fmt, "--color", "never"]
        yield ["tile", f, "--instruction", name, "--tile", "auto", "--format", fmt]
        yield ["tile", f, "--instruction", name, "--tile", "symbolic", "--format", fmt]
        yield ["threads", f, "--instruction", name, "--format", fmt, "--color", "never"]
        yield [
            "tile",
            f,
            "--instruction",
            name,
            "--tile",
            "auto",
            "--device",
            "a100",
            "--format",
            fmt,
        ]


_SECONDS_JSON = re.compile(rb'"seconds": [0-9.e+-]+')
_SECONDS_TEXT = re.compile(rb"  \d+\.\d\d$", re.M)


def dir_runs(root: Path) -> Iterator[list[str]]:
    """The command lines run on a whole directory (``maps`` and ``check`` of many files)."""
    d = root.relative_to(ROOT).as_posix()
    yield ["maps", d, "--color", "never"]
    yield ["maps", d, "--color", "always"]
    yield ["maps", d, "--format", "json"]
    yield ["check", d, "--color", "never"]
    yield ["check", d, "--format", "json"]


def _timeless(args: list[str], out: bytes) -> bytes:
    """``check`` and ``maps`` of many files say how long each file took: those are masked."""
    if args[0] != "check" and not (ROOT / args[1]).is_dir():
        return out
    return _SECONDS_TEXT.sub(b"  S.SS", _SECONDS_JSON.sub(b'"seconds": S', out))


def run(args: list[str]) -> tuple[int, bytes]:
    from click.testing import CliRunner

    from hloidx.__main__ import main as _  # noqa: F401  (the entry point imports)
    from hloidx.caches import clear_caches
    from hloidx.cli.main import cli

    clear_caches()
    result = CliRunner().invoke(cli, ["--quiet", *args], catch_exceptions=True, env=CONSOLE_ENV)
    out = result.stdout_bytes + b"\n--- stderr ---\n" + result.stderr_bytes
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        out += f"\nEXCEPTION {type(result.exception).__name__}: {result.exception}".encode()
    return result.exit_code, _timeless(args, out)


def snapshot(
    roots: list[Path], full: Path | None, quick: bool = False, dirs_only: bool = False
) -> list[str]:
    lines = []
    every = [args for root in roots if root.is_dir() for args in dir_runs(root)]
    if not dirs_only:
        every += [args for path in inputs(roots) for args in runs(path, quick)]
    for args in every:
        code, out = run(args)
        key = " ".join(args)
        lines.append(f"{key}\t{code}\t{hashlib.sha256(out).hexdigest()}")
        if full is not None:
            name = re.sub(r"[^\w.\-]+", "_", key)[:200]
            (full / name).write_bytes(out)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--full", type=Path)
    parser.add_argument("--dirs-only", action="store_true", help="only the directory runs")
    parser.add_argument("roots", nargs="*", type=Path)
    parsed = parser.parse_args()
    roots = parsed.roots or [ROOT / "samples", ROOT / "tests" / "data" / "corpus"]
    roots = [r.resolve() for r in roots]
    os.chdir(ROOT)
    if parsed.full:
        parsed.full.mkdir(parents=True, exist_ok=True)
    lines = snapshot(roots, parsed.full, dirs_only=parsed.dirs_only)
    parsed.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} runs written to {parsed.out}")
    if parsed.compare:
        before = parsed.compare.read_text(encoding="utf-8").splitlines()
        differ = sorted(set(before) ^ set(lines))
        for line in differ:
            print(("before " if line in before else "after  ") + line)
        print(f"{len(differ)} lines differ")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
