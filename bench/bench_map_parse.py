"""How fast map text is read and written: ``parse_map`` and ``format_map``, cold.

The texts are the printed (unsimplified) maps of the simplifier benchmark's two sets, as
``bench/bench_simplify.py`` times them: the corpus of ``bench/map_corpus.py`` and the maps of
the reshape-chain generator (``--chains`` there). Each text is parsed ``--repeat`` times, every
memo table and the interned-node table cleared before each call
(``hloidx.maps.simplify.clear_caches``), with a different number of trailing blanks each time
(nothing keyed by the text can help); a text's figure is the median of its calls, and the table
gives the median and p90 over texts (``--cpu-time``: the process's CPU clock, the stable figure
on a loaded host). ``format_map`` is timed the same way on each map parsed from its text.

    python bench/bench_map_parse.py [--repeat 5] [--cpu-time] [--set corpus|chains|both]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def texts(which: str) -> list[str]:
    """The printed maps of the corpus or of the reshape-chain generator."""
    from hloidx.maps.printer import format_map

    if which == "corpus":
        from map_corpus import corpus

        return [format_map(e.original) for e in corpus()]
    from bench_simplify import chain_entries

    return [format_map(e.original) for e in chain_entries()]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cold_times(
    items: list, repeat: int, clock: Callable[[], float], run: Callable[[Any, int], object]
) -> list[float]:
    """Per item, the median µs of ``run(item, k)`` over ``repeat`` cold calls."""
    from hloidx.maps.simplify import clear_caches

    out = []
    for text in items:
        samples = []
        for k in range(repeat):
            clear_caches()
            start = clock()
            run(text, k)
            samples.append((clock() - start) * 1e6)
        out.append(statistics.median(samples))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true", help="time with the CPU clock")
    parser.add_argument("--set", choices=("corpus", "chains", "both"), default="both")
    args = parser.parse_args()
    clock = time.process_time if args.cpu_time else time.perf_counter

    from hloidx.maps.printer import format_map
    from hloidx.maps.syntax import parse_map

    print(
        "| set | maps | text median chars | parse median µs | parse p90 µs "
        "| print median µs | print p90 µs |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for which in ("corpus", "chains") if args.set == "both" else (args.set,):
        items = texts(which)
        parse_us = cold_times(items, args.repeat, clock, lambda t, k: parse_map(t + " " * k))

        maps = [parse_map(t) for t in items]
        print_us = cold_times(maps, args.repeat, clock, lambda m, _k: format_map(m))
        lengths = [len(t) for t in items]
        print(
            f"| {which} | {len(items)} | {statistics.median(lengths):.0f} "
            f"| {statistics.median(parse_us):.1f} | {percentile(parse_us, 0.9):.1f} "
            f"| {statistics.median(print_us):.1f} | {percentile(print_us, 0.9):.1f} |"
        )


if __name__ == "__main__":
    main()
