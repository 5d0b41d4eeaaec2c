"""Benchmark the simplifier on the corpus of ``bench/map_corpus.py``; print a markdown table.

For each map: does ``simplify`` reach the simplest known form (structurally equal after
canonical summand order; for XLA's cases, also counted when the relation is equal and our
printed map is no longer than XLA's expected one), and how long one call takes, three ways:

* ``cold``: every memo table cleared before the call (``hloidx.maps.simplify.clear_caches``);
  median over ``--repeat`` calls — the cost of simplifying a map never seen before;
* ``first``: the first call on the map in one pass over the corpus, keeping what earlier
  maps left in the shared caches (what a long run such as ``hloidx maps`` sees);
* ``repeat``: a call on a map simplified before (memoised by map).

When ``hloidx.maps.equivalence`` exists, each simplification is also verified and its cost and
verdict mix reported.

    python bench/bench_simplify.py [--repeat 5] [--no-verify] [--misses]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from map_corpus import CorpusEntry, corpus

from hloidx.maps.expr import sort_summands
from hloidx.maps.indexing_map import IndexingMap
from hloidx.maps.printer import format_map
from hloidx.maps.simplify import clear_caches, simplify


def canonical(m: IndexingMap) -> IndexingMap:
    if m.is_known_empty or m.is_undefined:
        return m
    return IndexingMap(
        tuple(sort_summands(r) for r in m.results),
        m.dim_vars,
        m.range_vars,
        m.rt_vars,
        tuple((sort_summands(e), i) for e, i in m.constraints),
    )


def reached(entry: CorpusEntry, got: IndexingMap, verifier) -> bool:
    if got == canonical(entry.simplest):
        return True
    if entry.kind != "xla" or verifier is None:
        return False
    if len(format_map(got)) > len(format_map(entry.simplest)):
        return False
    return verifier(entry.simplest, got).kind in ("proved", "exhaustive")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument(
        "--misses", action="store_true", help="list maps that miss the simplest form"
    )
    args = parser.parse_args()

    verifier = None
    if not args.no_verify:
        try:
            from hloidx.maps.equivalence import verify as verifier
        except ImportError:
            verifier = None

    entries = corpus()
    clear_caches()
    first_us: list[float] = []
    repeat_us: list[float] = []
    for entry in entries:
        start = time.perf_counter()
        simplify(entry.original)
        first_us.append((time.perf_counter() - start) * 1e6)
        start = time.perf_counter()
        simplify(entry.original)
        repeat_us.append((time.perf_counter() - start) * 1e6)
    times_us: list[float] = []
    by_kind: dict[str, list[bool]] = {}
    misses = []
    verify_us: list[float] = []
    verdicts: Counter[str] = Counter()
    for entry in entries:
        samples = []
        for _ in range(args.repeat):
            clear_caches()
            start = time.perf_counter()
            got = simplify(entry.original)
            samples.append((time.perf_counter() - start) * 1e6)
        times_us.append(statistics.median(samples))
        ok = reached(entry, got, verifier)
        by_kind.setdefault(entry.kind, []).append(ok)
        if not ok:
            misses.append((entry, got))
        if verifier is not None:
            start = time.perf_counter()
            verdict = verifier(entry.original, got, seed=1)  # seed 1: not the cached call above
            verify_us.append((time.perf_counter() - start) * 1e6)
            verdicts[verdict.kind] += 1

    # parse_map of each map's printed text, cold (a fresh text each time: nothing memoised)
    from hloidx.maps.printer import format_map
    from hloidx.maps.syntax import parse_map

    parse_us: list[float] = []
    for entry in entries:
        text = format_map(entry.original)
        samples = []
        for k in range(args.repeat):
            clear_caches()
            start = time.perf_counter()
            parse_map(text + " " * k)
            samples.append((time.perf_counter() - start) * 1e6)
        parse_us.append(statistics.median(samples))

    total = sum(len(v) for v in by_kind.values())
    hits = sum(sum(v) for v in by_kind.values())
    print("| corpus | maps | simplest form reached |")
    print("|---|---:|---:|")
    for kind, oks in sorted(by_kind.items()):
        print(f"| {kind} | {len(oks)} | {sum(oks)} ({100 * sum(oks) / len(oks):.1f}%) |")
    print(f"| **all** | {total} | {hits} ({100 * hits / total:.1f}%) |")
    print()
    print("| measure | median µs | p90 µs |")
    print("|---|---:|---:|")
    for label, values in (
        ("simplify, cold (per map)", times_us),
        ("simplify, first call in a corpus pass", first_us),
        ("simplify, repeat call (memoised)", repeat_us),
        ("parse_map of the printed map, cold", parse_us),
    ):
        print(f"| {label} | {statistics.median(values):.1f} | {percentile(values, 0.9):.1f} |")
    if verify_us:
        print(
            f"| verify (per map) | {statistics.median(verify_us):.0f} "
            f"| {percentile(verify_us, 0.9):.0f} |"
        )
        print()
        print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    if args.misses:
        for entry, got in misses:
            print(f"\nMISS {entry.name}\n  got    {got}\n  wanted {canonical(entry.simplest)}")


if __name__ == "__main__":
    main()
