"""Symbolic tiling over the corpus: every entry-computation fusion tiled symbolically, with
16-element tiles, and with --tile auto; how long each takes and what came out.

    python bench/bench_tile.py

Prints a Markdown table (bench/run_all.py appends it to bench/RESULTS.md).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hloidx  # noqa: E402
from hloidx.tiling.auto import candidates  # noqa: E402
from hloidx.tiling.operand_tiles import output_dims, tile_instruction  # noqa: E402


def _outcome(operand) -> str:
    if operand.undefined:
        return "undefined"
    if not operand.map_tiles:
        return "never read"
    if operand.rectangle:
        return "one rectangle"
    if all(t.described for t in operand.map_tiles):
        return "rectangles"
    return "no description"


def main() -> None:
    fusions = []
    for path in sorted((ROOT / "tests" / "data" / "corpus").glob("*.hlo")):
        module = hloidx.parse_hlo(path.read_text(), path.name)
        fusions += [i for i in module.entry.instructions if i.opcode == "fusion"]
    rows = []
    for label, run in (
        ("symbolic", lambda f: tile_instruction(f, None)),
        (
            "16-element tiles",
            lambda f: tile_instruction(f, tuple(min(n, 16) or 1 for n in output_dims(f))),
        ),
        ("--tile auto", lambda f: candidates(f, output_dims(f))),
    ):
        hloidx.clear_caches()
        times, outcomes = [], Counter()
        start = time.perf_counter()
        for f in fusions:
            t0 = time.perf_counter()
            result = run(f)
            times.append(time.perf_counter() - t0)
            if not isinstance(result, list):
                outcomes.update(_outcome(o) for o in result.operands)
        total = time.perf_counter() - start
        summary = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())) or "-"
        rows.append(
            f"| {label} | {len(fusions)} | {total:.2f} | {statistics.median(times) * 1e3:.1f} "
            f"| {max(times) * 1e3:.0f} | {summary} |"
        )
    print("| request | fusions | total s | median ms | max ms | operands |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
