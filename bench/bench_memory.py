"""Does a long-running process keep flat memory? Simplify a stream of distinct maps.

Every memo table of hloidx is bounded (``hloidx/caches.py``), so resident memory must level off
however many distinct maps a process simplifies. This streams distinct reshape-chain and
linearize/delinearize maps (each with its own shapes, so no two are equal) through
``hloidx.simplify`` and prints RSS every ``--every`` maps, as a markdown table.

    python bench/bench_memory.py --maps 1000000     # the issue's figure (about 10 minutes)
    python bench/bench_memory.py --maps 100000      # a quicker look

Does memory grow with the file, not with Python? ``--modules`` measures instead the peak
resident set of ``hloidx maps FILE --format json`` (fresh processes, the largest of
``--repeat``) on the corpus resnet and a 26-layer JAX transformer (when jax is installed), above
the peak of the same command on a one-op module, against 20x the file (issue #28); and that
floor itself against 35 MB.

    python bench/bench_memory.py --modules
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


def modules(repeat: int, layers: int) -> int:
    """Peak RSS of `maps --format json` on real modules above a one-op module's (issue #28)."""
    import os
    import subprocess
    import tempfile

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_cli import _time
    from bench_scale import ONE_OP

    targets = [
        ("large_resnet12_fwd_bwd.opt", ROOT / "tests/data/corpus/large_resnet12_fwd_bwd.opt.hlo")
    ]
    if layers:
        made = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; sys.path.insert(0, sys.argv[1]); import gen_models as g; "
                "print(g.transformer_hlo(int(sys.argv[2])) if g.have_jax() else '')",
                str(ROOT / "bench"),
                str(layers),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if made:
            targets.append((f"transformer {layers} layers (JAX)", Path(made)))
        else:
            print("(jax is not installed: the transformer module is skipped)", file=sys.stderr)
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    with tempfile.TemporaryDirectory() as tmp:
        one_op = Path(tmp) / "one_op.hlo"
        one_op.write_text(ONE_OP)
        floor = _time(["maps", str(one_op), "--format", "json"], repeat)[2]
        print("| module | file | peak RSS | above the one-op module | x the file | limit (20x) |")
        print("|---|---:|---:|---:|---:|---|")
        for name, path in targets:
            size = path.stat().st_size / 2**20
            peak = _time(["maps", str(path), "--format", "json"], repeat)[2]
            above = peak - floor
            verdict = "ok" if above <= 20 * size else "OVER"
            print(
                f"| {name} | {size:.2f} MB | {peak:.0f} MB | {above:.1f} MB | {above / size:.1f}x "
                f"| {20 * size:.1f} MB {verdict} |"
            )
    print(f"\none-op module (`maps --format json`): {floor:.1f} MB (limit 35 MB)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--maps", type=int, default=200_000, help="how many distinct maps")
    parser.add_argument("--every", type=int, default=0, help="report interval (default maps/10)")
    parser.add_argument("--modules", action="store_true", help="peak RSS on real modules")
    parser.add_argument("--repeat", type=int, default=3, help="--modules: runs per module")
    parser.add_argument("--layers", type=int, default=26, help="--modules: transformer depth")
    options = parser.parse_args()
    if options.modules:
        return modules(options.repeat, options.layers)
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
