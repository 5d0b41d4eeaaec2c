"""Benchmark the simplifier on the corpus of ``bench/map_corpus.py``; print a markdown table.

For each map: does ``simplify`` reach the simplest known form (structurally equal after
canonical summand order; for XLA's cases, also counted when the relation is equal and our
printed map is no longer than XLA's expected one), and how long one call takes, three ways:

* ``cold``: every memo table cleared before the call (``hloidx.maps.simplify.clear_caches``);
  median over ``--repeat`` calls — the cost of simplifying a map never seen before;
* ``first``: the first call on the map in one pass over the corpus, keeping what earlier
  maps left in the shared caches (what a long run such as ``hloidx maps`` sees);
* ``repeat``: a call on a map simplified before (memoised by map): a loop of ``--memo-calls``
  calls on the map, timed as a whole and divided by their number (a clock read costs about
  as much as the call itself; bracketing each call with two would mostly time the clock).

* ``end to end``: ``parse_map`` of the map's text, ``simplify``, ``format_map``, cold.

When ``hloidx.maps.equivalence`` exists, each simplification is also verified and its cost and
verdict mix reported. ``--chains`` times the same on the maps of the reshape-chain generator
(``bench/reshape_chains.py``: its random chains and a fixed sample of its non-nesting family,
steps simplified) instead of the corpus; a chain reaches its simplest form when it comes back
as the direct reshape's simplified map or no longer.

On a loaded host, ``--cpu-time`` times with the process's CPU clock: wall-clock medians and
above all p90s then mostly measure the scheduler.

    python bench/bench_simplify.py [--repeat 5] [--memo-calls 2000] [--no-verify] [--misses]
                                   [--chains] [--cpu-time]
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
from hloidx.maps.map_simplify import operation_count
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


def chain_entries(random_chains: int = 140, non_nesting: int = 160) -> list[CorpusEntry]:
    """The reshape-chain generator's maps: random chains (naive steps) and a fixed sample of
    the non-nesting family (steps simplified), each with the direct reshape's simplified map
    as its simplest form."""
    import random

    import reshape_chains as rc

    from hloidx.hlo.reshape import linearized_reshape_map

    def entry(kind: str, shapes: list[list[int]], simplified_steps: bool) -> CorpusEntry:
        best = simplify(linearized_reshape_map(shapes[-1], shapes[0]))
        chained = rc.chain_map(shapes, simplified_steps)
        return CorpusEntry(f"{kind} {shapes}", kind, chained, best)

    out = [entry("random", s, False) for s in rc.chains(random_chains, 1)]
    family = random.Random(5).sample(rc.non_nesting_chains(), non_nesting)
    out += [entry("non-nesting", s, True) for _, _, s in family]
    clear_caches()
    return out


def reached(entry: CorpusEntry, got: IndexingMap, verifier) -> bool:
    if got == canonical(entry.simplest):
        return True
    if entry.kind in ("random", "non-nesting"):
        return operation_count(got) <= operation_count(entry.simplest)
    if entry.kind != "xla" or verifier is None:
        return False
    if len(format_map(got)) > len(format_map(entry.simplest)):
        return False
    return verifier(entry.simplest, got).kind in ("proved", "exhaustive")


#: The clock every measure is taken with (``--cpu-time``: the process's CPU time).
clock = time.perf_counter


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--memo-calls",
        type=int,
        default=2000,
        help="memoised calls per map, timed as one loop and divided (default 2000)",
    )
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument(
        "--misses", action="store_true", help="list maps that miss the simplest form"
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with the process's CPU clock (a loaded host's preemption left out)",
    )
    parser.add_argument(
        "--chains", action="store_true", help="the reshape-chain generator's maps, not the corpus"
    )
    args = parser.parse_args()
    global clock
    clock = time.process_time if args.cpu_time else time.perf_counter

    verifier = None
    if not args.no_verify:
        try:
            from hloidx.maps.equivalence import verify as verifier
        except ImportError:
            verifier = None

    entries = chain_entries() if args.chains else corpus()
    clear_caches()
    first_us: list[float] = []
    repeat_us: list[float] = []
    for entry in entries:
        start = clock()
        simplify(entry.original)
        first_us.append((clock() - start) * 1e6)
        original = entry.original
        calls = range(args.memo_calls)
        start = clock()
        for _ in calls:
            simplify(original)
        repeat_us.append((clock() - start) * 1e6 / args.memo_calls)
    times_us: list[float] = []
    by_kind: dict[str, list[bool]] = {}
    misses = []
    verify_us: list[float] = []
    verdicts: Counter[str] = Counter()
    for entry in entries:
        samples = []
        for _ in range(args.repeat):
            clear_caches()
            start = clock()
            got = simplify(entry.original)
            samples.append((clock() - start) * 1e6)
        times_us.append(statistics.median(samples))
        ok = reached(entry, got, verifier)
        by_kind.setdefault(entry.kind, []).append(ok)
        if not ok:
            misses.append((entry, got))
        if verifier is not None:
            start = clock()
            verdict = verifier(entry.original, got, seed=1)  # seed 1: not the cached call above
            verify_us.append((clock() - start) * 1e6)
            verdicts[verdict.kind] += 1

    # parse_map of each map's printed text, cold
    from hloidx.maps.printer import format_map
    from hloidx.maps.syntax import parse_map

    def cold_medians(run) -> list[float]:
        """Per map, the median over ``--repeat`` cold calls of ``run`` on its printed text
        (a fresh text each time: nothing memoised)."""
        medians = []
        for entry in entries:
            text = format_map(entry.original)
            samples = []
            for k in range(args.repeat):
                clear_caches()
                start = clock()
                run(text + " " * k)
                samples.append((clock() - start) * 1e6)
            medians.append(statistics.median(samples))
        return medians

    parse_us = cold_medians(parse_map)
    # parse + simplify + print, cold: what a user of `hloidx simplify` waits for
    end_to_end_us = cold_medians(lambda text: format_map(simplify(parse_map(text))))

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
        ("parse + simplify + print, cold", end_to_end_us),
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
