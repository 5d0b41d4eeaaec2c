"""Time the composition of every fusion in the corpus and list the ones whose maps are not exact.

Usage: python bench/bench_fusion.py [CORPUS_DIR]   (default tests/data/corpus)

For each ``*.opt.hlo`` module, each ``fusion`` instruction's output-to-input maps are
composed (:func:`hloidx.hlo.fusion.output_to_input`), cold: the compose+simplify cache is
cleared per module, so equal sub-chains are shared within a module only. Prints per-fusion
median and worst time, and every fusion with an inexact or undefined operand and the reason.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from hloidx import clear_caches, parse_hlo
from hloidx.errors import HloidxError
from hloidx.hlo import fusion


def main(corpus: Path) -> int:
    times: list[tuple[float, str]] = []
    inexact: list[tuple[str, str]] = []
    for path in sorted(corpus.glob("*.opt.hlo")):
        module = parse_hlo(path.read_text(), str(path))
        clear_caches()
        for instr in module.instructions():
            if instr.opcode != "fusion":
                continue
            where = f"{path.name}:{instr.name}"
            start = time.perf_counter()
            try:
                table = fusion.output_to_input(instr)
            except HloidxError as error:
                times.append((time.perf_counter() - start, where))
                inexact.append((where, f"error: {error.message}"))
                continue
            times.append((time.perf_counter() - start, where))
            reasons = []
            for out_id, row in enumerate(table):
                for j, cell in enumerate(row):
                    if not cell.exact:
                        why = "; ".join(cell.notes) or "an op rule on the path over-approximates"
                        reasons.append(f"out {out_id} operand {j}: {why}")
            if reasons:
                inexact.append((where, " | ".join(sorted(set(reasons))[:3])))
    if not times:
        print("no fusions found")
        return 1
    values = sorted(t for t, _ in times)
    worst = max(times)
    print(f"fusions: {len(times)}")
    print(
        f"median: {statistics.median(values) * 1e3:.2f} ms   p90: {values[int(0.9 * (len(values) - 1))] * 1e3:.2f} ms"
        f"   worst: {worst[0] * 1e3:.1f} ms ({worst[1]})   total: {sum(values):.2f} s"
    )
    print(f"not exact: {len(inexact)}")
    for where, why in inexact:
        print(f"  {where}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(
        main(
            Path(sys.argv[1])
            if len(sys.argv) > 1
            else Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus"
        )
    )
