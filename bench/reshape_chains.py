"""Reshape chains whose intermediate shapes straddle each other's factors: does every chain
collapse to what the one direct reshape simplifies to?

    python bench/reshape_chains.py [--chains 500] [--seed 1] [--family random|non-nesting|both]

``random``: each chain is 3 to 5 shapes of the same size (a product of 2, 3, 5 and 7), each a
random factorization (so the factors of one shape cut across those of the next); its
output-to-input map is the composition of the naive linearize/delinearize maps of each step.

``non-nesting``: for every pair of radices ``a < b`` from 2..32 that do not divide each other
and every length 2..5, a chain whose shapes end alternately in ``a`` and ``b`` (the rest of the
size, ``lcm(a, b)`` times 2..6, cut into one or two random factors; about half the chains of
length 3 and more end in their first shape, a round trip), composed as a fusion composes it:
each step's map simplified first, then the steps composed (what the naive composition of the
random family does not exercise, and where radices that do not nest left forms such as
``(d0 floordiv 6) * 9 + ((d0 mod 6) * 6 + d1) floordiv 4``).

A chain counts as collapsed when it simplifies to the simplified direct reshape map (the
identity for a round trip), or to a map with no more operations. Prints the counts and the
times (cold: caches cleared per chain; the chain's map built first, then simplified).
"""

from __future__ import annotations

import argparse
import math
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


def chain_map(shapes: list[list[int]], simplified_steps: bool = False) -> IndexingMap:
    """The chain's output-to-input map: each step's naive map (simplified first when
    ``simplified_steps``, as a fusion's maps are), composed."""
    m = IndexingMap.identity(shapes[-1])
    for source, target in zip(reversed(shapes[:-1]), reversed(shapes[1:]), strict=True):
        step = linearized_reshape_map(target, source)
        m = compose(m, simplify(step) if simplified_steps else step)
    return m


def _cut(x: int, rng: random.Random, parts: int) -> list[int]:
    """``x`` as one or two factors (the second from 2..32 where one divides ``x``)."""
    if parts == 2:
        factors = [d for d in range(2, 33) if x % d == 0 and d < x]
        if factors:
            d = rng.choice(factors)
            return [x // d, d]
    return [x]


def non_nesting_chains() -> list[tuple[int, int, list[list[int]]]]:
    """``(a, b, shapes)`` for every pair of radices ``2 <= a < b <= 32`` with ``a`` not
    dividing ``b`` and every chain length 2..5 (see the module doc); the same every run."""
    out = []
    for a in range(2, 33):
        for b in range(a + 1, 33):
            if b % a == 0:
                continue
            for length in range(2, 6):
                rng = random.Random(a * 1000 + b * 10 + length)
                n = math.lcm(a, b) * rng.choice([2, 3, 4, 5, 6])
                shapes = []
                for i in range(length):
                    radix = a if i % 2 == 0 else b
                    shapes.append([*_cut(n // radix, rng, rng.randint(1, 2)), radix])
                if length >= 3 and rng.random() < 0.5:
                    shapes[-1] = shapes[0]
                out.append((a, b, shapes))
    return out


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


def collapsed(shapes: list[list[int]], simplified_steps: bool = False) -> tuple[bool, str, str]:
    got = simplify(chain_map(shapes, simplified_steps))
    best = simplify(linearized_reshape_map(shapes[-1], shapes[0]))
    ok = format_map(got) == format_map(best) or operation_count(got) <= operation_count(best)
    return ok, format_map(got), format_map(best)


def _run(
    name: str, all_chains: list[list[list[int]]], simplified_steps: bool
) -> list[tuple[list[list[int]], str, str]]:
    times, failures = [], []
    for shapes in all_chains:
        clear_caches()
        started = time.perf_counter()
        ok, got, best = collapsed(shapes, simplified_steps)
        times.append(time.perf_counter() - started)
        if not ok:
            failures.append((shapes, got, best))
    done = len(all_chains) - len(failures)
    print(
        f"| {name} | {len(all_chains)} | {done} ({100 * done / len(all_chains):.1f}%) "
        f"| {1000 * statistics.median(times):.2f} |"
    )
    return failures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chains", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--family", choices=("random", "non-nesting", "both"), default="both")
    args = parser.parse_args()
    print("| reshape chains | chains | collapsed | median ms (cold, chain and direct) |")
    print("|---|---:|---:|---:|")
    failures = []
    if args.family in ("random", "both"):
        failures += _run(f"random (seed {args.seed})", chains(args.chains, args.seed), False)
    if args.family in ("non-nesting", "both"):
        family = [shapes for _, _, shapes in non_nesting_chains()]
        failures += _run("non-nesting radices, steps simplified", family, True)
        failures += _run("non-nesting radices, naive steps", family, False)
    for shapes, got, best in failures[:10]:
        print(f"\nnot collapsed: {shapes}\n  got:  {got}\n  best: {best}")


if __name__ == "__main__":
    main()
