"""The simplifier benchmark corpus: maps with their simplest known form.

``corpus()`` returns at least 200 ``CorpusEntry(name, original, simplest)`` where
``simplest`` is the map a perfect simplifier should produce, known independently of
hloidx's simplifier:

* the issue's acceptance examples (forms worked by hand);
* reshape round trips and chains through random factorizations of the same size (the
  identity; size-1 dimensions are the constant 0);
* linearize/delinearize pairs: ``(d0..dk) -> L = Σ d_i * stride_i`` followed by the digits
  of ``L`` (the identity);
* XLA's ``Simplify`` cases from ``tests/data/xla/map_cases.json`` with XLA's expected
  output (where our form is simpler than XLA's, XLA's output is not "simplest": those entries
  count as reached when the relation is equal and the printed map is no longer).

Run ``python bench/map_corpus.py`` to print the corpus size by kind.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from pathlib import Path

from hloidx.hlo.reshape import linearized_reshape_map
from hloidx.maps.expr import const, dim, floordiv, mod
from hloidx.maps.indexing_map import IndexingMap, compose

MAP_CASES = Path(__file__).resolve().parents[1] / "tests" / "data" / "xla" / "map_cases.json"


@dataclass(frozen=True)
class CorpusEntry:
    name: str
    kind: str
    original: IndexingMap
    simplest: IndexingMap


def reshape_chain(shapes: list[list[int]]) -> IndexingMap:
    m = IndexingMap.identity(shapes[-1])
    for source, target in zip(reversed(shapes[:-1]), reversed(shapes[1:]), strict=True):
        m = compose(m, linearized_reshape_map(target, source))
    return m


def identity_of(shape: list[int]) -> IndexingMap:
    return IndexingMap.build([const(0) if n == 1 else dim(i) for i, n in enumerate(shape)], shape)


def prime_factors(n: int) -> list[int]:
    primes, x, p = [], n, 2
    while x > 1:
        while x % p == 0:
            primes.append(p)
            x //= p
        p += 1
    return primes


def factorization(n: int, rng: random.Random) -> list[int]:
    primes = prime_factors(n)
    rng.shuffle(primes)
    parts, current = [], 1
    for q in primes:
        current *= q
        if rng.random() < 0.5:
            parts.append(current)
            current = 1
    if current > 1 or not parts:
        parts.append(current)
    return parts


def _examples() -> list[CorpusEntry]:
    d0, d1, d2 = dim(0), dim(1), dim(2)
    b = IndexingMap.build
    items = [
        ("div-mod-small", b([d0 + floordiv(d1, 16), mod(d1, 16)], [7, 15]), b([d0, d1], [7, 15])),
        (
            "digits-100",
            b(
                [
                    floordiv(d0 * 100 + d1 * 10 + d2, 100),
                    floordiv(mod(d0 * 100 + d1 * 10 + d2, 100), 10),
                    mod(d2, 10),
                ],
                [10, 10, 10],
            ),
            b([d0, d1, d2], [10, 10, 10]),
        ),
        (
            "divisible-multipliers",
            b([floordiv(d0 * 16 + d1 * 4 + d2, 8), mod(d0 * 16 + d1 * 4 + d2, 8)], [10, 10, 10]),
            b([d0 * 2 + floordiv(d1 * 4 + d2, 8), mod(d1 * 4 + d2, 8)], [10, 10, 10]),
        ),
        ("reverse", b([-floordiv(d0 * -11 - d1 + 109, 11) + 9], [10, 11]), b([d0], [10, 11])),
        (
            "reverse-2",
            b(
                [
                    -floordiv(d0 * -11 - d1 + 109, 11) + 9,
                    d0 * 11 + d1 + floordiv(d0 * -11 - d1 + 109, 11) * 11 - 99,
                ],
                [8, 9],
            ),
            b([d0, d1], [8, 9]),
        ),
    ]
    return [CorpusEntry(n, "example", o, s) for n, o, s in items]


def _reshape_chains(count: int, seed: int) -> list[CorpusEntry]:
    rng = random.Random(seed)
    sizes = [
        12,
        24,
        36,
        48,
        60,
        64,
        72,
        90,
        96,
        120,
        128,
        144,
        180,
        210,
        240,
        360,
        480,
        720,
        1024,
        2310,
    ]
    out = [
        CorpusEntry(
            "reshape-10x10x10",
            "reshape",
            reshape_chain([[10, 10, 10], [50, 20], [10, 10, 10]]),
            identity_of([10, 10, 10]),
        ),
        CorpusEntry(
            "reshape-6x8x10-chain",
            "reshape",
            reshape_chain([[6, 8, 10], [16, 30], [480], [6, 80], [6, 8, 10]]),
            identity_of([6, 8, 10]),
        ),
    ]
    for i in range(count):
        n = rng.choice(sizes)
        source = factorization(n, rng)
        shapes = [source] + [factorization(n, rng) for _ in range(rng.randint(1, 4))] + [source]
        name = "reshape-" + "-".join("x".join(map(str, s)) for s in shapes)
        out.append(
            CorpusEntry(f"{name}#{i}", "reshape", reshape_chain(shapes), identity_of(source))
        )
    return out


def _linearize_pairs(count: int, seed: int) -> list[CorpusEntry]:
    """(d...) -> digits(Σ d_i * stride_i): linearize then delinearize, the identity."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        shape = [rng.randint(2, 12) for _ in range(rng.randint(2, 4))]
        out.append(
            CorpusEntry(
                f"linearize-{'x'.join(map(str, shape))}#{i}",
                "linearize",
                linearized_reshape_map(shape, shape),
                identity_of(shape),
            )
        )
    return out


def _xla_cases() -> list[CorpusEntry]:
    if not MAP_CASES.exists():
        return []
    try:
        from hloidx.maps.syntax import parse_map
    except ImportError:
        return []
    out = []
    for case in json.loads(MAP_CASES.read_text()):
        inputs = {i["name"]: i["map"] for i in case["inputs"]}
        for entry in case["expected"]:
            ops = [o["op"] for o in entry.get("ops") or []]
            if ops != ["Simplify"] or entry["map_normalized"] == "KNOWN EMPTY":
                continue
            try:
                expected = parse_map(entry["map_normalized"])
                source = inputs.get(entry["input_var"])
                if not source:
                    original = compose(parse_map(inputs["consumer"]), parse_map(inputs["producer"]))
                else:
                    original = parse_map(source)
                    if "domain" not in source:
                        original = replace(
                            original, dim_vars=expected.dim_vars, range_vars=expected.range_vars
                        )
            except Exception:
                continue
            out.append(CorpusEntry(case["test"], "xla", original, expected))
    return out


def corpus(seed: int = 2024) -> list[CorpusEntry]:
    return _examples() + _xla_cases() + _reshape_chains(140, seed) + _linearize_pairs(40, seed + 1)


if __name__ == "__main__":
    from collections import Counter

    entries = corpus()
    print(len(entries), dict(Counter(e.kind for e in entries)))
