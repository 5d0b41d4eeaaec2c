"""Does a long-running process keep flat memory? Simplify a stream of distinct maps.

Every memo table of hloidx is bounded (``hloidx/caches.py``), so resident memory must level off
however many distinct maps a process simplifies. This streams distinct reshape-chain and
linearize/delinearize maps (each with its own shapes, so no two are equal) through
``hloidx.simplify`` and prints RSS every ``--every`` maps, as a markdown table.

    python bench/bench_memory.py --maps 1000000     # the issue's figure (about 10 minutes)
    python bench/bench_memory.py --maps 100000      # a quicker look
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hloidx  # noqa: E402
from hloidx.maps.expr import add, dim, floordiv, mod, mul  # noqa: E402
from hloidx.maps.indexing_map import IndexingMap  # noqa: E402


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return pages * 4096 / 2**20


def distinct_maps() -> Iterator[IndexingMap]:
    """An endless stream of pairwise different maps: (a, b) linearized and delinearized by c,
    for every a, b and divisor c; then a second shape family, and so on."""
    for size in itertools.count(2):
        for a in range(2, size + 2):
            b = size
            linear = add(mul(dim(0), b), dim(1))
            for c in range(2, 2 + size):
                yield IndexingMap.build(
                    [floordiv(linear, c), mod(linear, c), add(dim(0), size)], (a, b)
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--maps", type=int, default=200_000, help="how many distinct maps")
    parser.add_argument("--every", type=int, default=0, help="report interval (default maps/10)")
    options = parser.parse_args()
    every = options.every or max(options.maps // 10, 1)
    hloidx.clear_caches()
    rows = [f"| {0:,} | {_rss_mb():.1f} | - |"]
    start = last = time.perf_counter()
    for n, m in enumerate(itertools.islice(distinct_maps(), options.maps), 1):
        hloidx.simplify(m)
        if n % every == 0:
            now = time.perf_counter()
            rows.append(f"| {n:,} | {_rss_mb():.1f} | {every / (now - last):,.0f} |")
            last = now
            print(rows[-1], file=sys.stderr, flush=True)
    total = time.perf_counter() - start
    print(f"simplified {options.maps:,} distinct maps in {total:.0f} s\n")
    print("| maps simplified | RSS (MB) | maps/s since the last row |")
    print("|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
