"""Reshape chains whose intermediate shapes straddle each other's factors: does every chain
collapse to what the one direct reshape simplifies to?

    python bench/reshape_chains.py [--chains 500] [--seed 1]

Each chain is 3 to 5 shapes of the same size (a product of 2, 3, 5 and 7), each a random
factorization (so the factors of one shape cut across those of the next); its output-to-input
map is the composition of the naive linearize/delinearize maps of each step. A chain counts as
collapsed when it simplifies to the simplified direct reshape map, or to a map with no more
operations. Prints the count and the time (cold: caches cleared per chain).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from map_corpus import prime_factors

from hloidx.caches import clear_caches
from hloidx.hlo.reshape import linearized_reshape_map
from hloidx.maps.indexing_map import IndexingMap, compose
from hloidx.maps.map_simplify import operation_count, simplify
from hloidx.maps.printer import format_map

SIZES = (60, 210, 360, 420, 840, 1260, 2310)


def chain_map(shapes: list[list[int]]) -> IndexingMap:
    m = IndexingMap.identity(shapes[-1])
    for source, target in zip(reversed(shapes[:-1]), reversed(shapes[1:]), strict=True):
        m = compose(m, linearized_reshape_map(target, source))
    return m


def factorization(n: int, rng: random.Random, parts: int) -> list[int]:
    """``n`` as a product of at most ``parts`` factors, its primes dealt out at random."""
    primes = prime_factors(n)
    rng.shuffle(primes)
    dims = [1] * parts
    for q in primes:
        dims[rng.randrange(parts)] *= q
    return [d for d in dims if d > 1] or [1]


def chains(count: int, seed: int) -> list[list[list[int]]]:
    rng = random.Random(seed)
    out = [[[12, 35], [70, 6], [420], [35, 12]], [[6, 70], [28, 15], [420]]]
    while len(out) < count:
        n = rng.choice(SIZES)
        out.append([factorization(n, rng, rng.randint(1, 4)) for _ in range(rng.randint(3, 5))])
    return out


def collapsed(shapes: list[list[int]]) -> tuple[bool, str, str]:
    got = simplify(chain_map(shapes))
    best = simplify(linearized_reshape_map(shapes[-1], shapes[0]))
    ok = format_map(got) == format_map(best) or operation_count(got) <= operation_count(best)
    return ok, format_map(got), format_map(best)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chains", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    times, failures = [], []
    all_chains = chains(args.chains, args.seed)
    for shapes in all_chains:
        clear_caches()
        started = time.perf_counter()
        ok, got, best = collapsed(shapes)
        times.append(time.perf_counter() - started)
        if not ok:
            failures.append((shapes, got, best))
    done = len(all_chains) - len(failures)
    print("| reshape chains | collapsed | median ms (cold, chain and direct) |")
    print("|---|---:|---:|")
    print(
        f"| {len(all_chains)} (seed {args.seed}) | {done} ({100 * done / len(all_chains):.1f}%) "
        f"| {1000 * statistics.median(times):.2f} |"
    )
    for shapes, got, best in failures[:10]:
        print(f"\nnot collapsed: {shapes}\n  got:  {got}\n  best: {best}")


if __name__ == "__main__":
    main()
