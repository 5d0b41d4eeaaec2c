"""Cut-off and damaged files: every prefix and every single-token deletion ends well.

Run from the repository root: ``python bench/cut_points.py [--lines N] [--sample-lines K]``.
For every sample and corpus file (``samples/``, ``tests/data/corpus/``) it parses, leniently as
``hloidx maps`` does, the text cut at every line end (at ``N`` sampled line ends for a file
with more lines; ``--big`` in a file over 100 KB), and cut after every separator of ``K``
sampled lines; for every sample it
also parses the text with one token deleted, for every token (``--deletions`` sampled ones in
a file with more tokens). Each outcome must be a module
and/or errors that all carry a location, never an exception; for HLO cuts, every instruction
written whole on a line before the cut must still be in the module. Prints the counts and
every failure (exit 1 if there is one).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hloidx.errors import HloidxError  # noqa: E402
from hloidx.stablehlo import parse_module_lenient  # noqa: E402

SEPARATORS = frozenset(",(){}[]= :")
#: a whole instruction on one line, as XLA prints it: its name
INSTRUCTION_LINE = re.compile(
    r"^[ \t]*(?:ROOT[ \t]+)?%?([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*\S.*\)(?:,.*)?[ \t]*$"
)
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|%?[A-Za-z_][\w.\-]*|\d+|\S')


def files() -> list[Path]:
    found = []
    for folder in (ROOT / "samples", ROOT / "tests" / "data" / "corpus"):
        found += [p for p in folder.rglob("*") if p.suffix in (".hlo", ".mlir", ".txt")]
    return sorted(found)


def line_end_cuts(text: str) -> list[int]:
    return [i + 1 for i, c in enumerate(text) if c == "\n"]


def separator_cuts(text: str, lines: list[int], rng: random.Random, count: int) -> list[int]:
    """Offsets just after each separator of ``count`` sampled non-blank lines."""
    starts = [0, *line_end_cuts(text)]
    chosen = [k for k in range(len(starts)) if text[starts[k] : starts[k] + 200].strip()]
    cuts = []
    for k in rng.sample(chosen, min(count, len(chosen))):
        end = text.find("\n", starts[k])
        end = len(text) if end < 0 else end
        cuts += [i + 1 for i in range(starts[k], end) if text[i] in SEPARATORS]
    return cuts


def deletions(text: str) -> list[str]:
    return [text[: m.start()] + text[m.end() :] for m in TOKEN.finditer(text)]


def whole_instructions_before(text: str, cut: int) -> list[str]:
    """Names of the instructions written whole on lines ending before ``cut``."""
    complete = text[:cut].split("\n")[:-1]  # the last piece is the line the cut is in
    return [m.group(1) for line in complete if (m := INSTRUCTION_LINE.match(line)) is not None]


def check(text: str, name: str, cut: int | None) -> str | None:
    """None when the outcome is well formed, else what went wrong."""
    try:
        module, errors = parse_module_lenient(text, name)
    except HloidxError as error:
        return f"raised instead of returning: {error}"
    except Exception:
        return "crash: " + traceback.format_exc(limit=3).replace("\n", " | ")[-400:]
    unlocated = [e for e in errors if e.span is None]
    if unlocated:
        return f"error without a location: {unlocated[0]}"
    if cut is not None and name.endswith(".hlo") and "{" in text:
        kept = {i.name for i in module.instructions()} if module is not None else set()
        lost = [n for n in whole_instructions_before(text, cut) if n not in kept]
        if lost:
            return f"instructions before the cut lost: {lost[:5]}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300, help="line ends per file at most")
    parser.add_argument("--sample-lines", type=int, default=10, help="lines cut at separators")
    parser.add_argument("--deletions", type=int, default=400, help="deletions per file at most")
    parser.add_argument(
        "--big", type=int, default=15, help="cuts of each kind in a file over 100 KB (seconds each)"
    )
    options = parser.parse_args()
    rng = random.Random(28)
    failures: list[str] = []
    totals = {"line ends": 0, "separators": 0, "deletions": 0}
    started = time.perf_counter()
    for path in files():
        text = path.read_text(encoding="utf-8")
        big = len(text) > 100_000  # a cut-off file is re-read piece by piece: seconds each
        ends = line_end_cuts(text)
        limit = options.big if big else options.lines
        if len(ends) > limit:
            ends = sorted(rng.sample(ends, limit))
        separators = separator_cuts(text, ends, rng, 1 if big else options.sample_lines)
        if big and len(separators) > options.big:
            separators = sorted(rng.sample(separators, options.big))
        for kind, cuts in (("line ends", ends), ("separators", separators)):
            for cut in cuts:
                totals[kind] += 1
                problem = check(text[:cut], path.name, cut)
                if problem:
                    failures.append(f"{path.name} cut at {cut} ({kind}): {problem}")
        if (ROOT / "samples") in path.parents:
            variants = deletions(text)
            if len(variants) > options.deletions:
                variants = rng.sample(variants, options.deletions)
            for mutated in variants:
                totals["deletions"] += 1
                problem = check(mutated, path.name, None)
                if problem:
                    failures.append(f"{path.name} with a token deleted: {problem}")
        print(f"{path.relative_to(ROOT)}: done", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    print(f"{len(files())} files; " + ", ".join(f"{v} {k}" for k, v in totals.items()))
    print(f"{len(failures)} failures in {seconds:.0f} s")
    for failure in failures:
        print(" ", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
