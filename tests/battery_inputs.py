"""Deterministic generators of bad and extreme inputs for the bad-input battery.

HLO inputs are mutations of real text: small modules of the corpus, XLA's own test modules and
the samples. Map inputs are malformed or extreme maps built from XLA's map texts and from
hand-written extremes. Everything is seeded, so a failure names a reproducible case.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import paths

ROOT = Path(__file__).resolve().parent.parent


_INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_SHAPE_DIMS = re.compile(r"\b([a-z]\w*)\[([0-9, ]+)\]")
_OPCODE = re.compile(r"\]\S*\s+([a-z][\w\-]*)\(")


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    #: 1-based line of the one instruction a "one broken line" mutation corrupted (else 0)
    broken_line: int = 0
    base: str = ""


def hlo_bases() -> list[tuple[str, str]]:
    """(name, text) of the small real modules the HLO mutations start from."""
    bases: list[tuple[str, str]] = []
    for path in sorted(paths.CORPUS.glob("*.hlo")):
        if path.stat().st_size <= 8_000:
            bases.append((path.name, path.read_text(encoding="utf-8")))
    cases = json.loads((paths.XLA_TESTS / "analysis_cases.json").read_text(encoding="utf-8"))
    for case in cases:
        if case.get("hlo"):
            bases.append((f"xla:{case['test']}", case["hlo"]))
    for path in sorted((ROOT / "samples").rglob("*.hlo")):
        if path.stat().st_size <= 16_000:
            bases.append(
                (f"sample:{path.relative_to(ROOT / 'samples')}", path.read_text(encoding="utf-8"))
            )
    return bases


def _instruction_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.split("\n")) if _INSTRUCTION.match(line)]


def hlo_cases(count: int = 1100, seed: int = 20261121) -> list[Case]:
    rng = random.Random(seed)
    bases = hlo_bases()
    out: list[Case] = []
    kinds = [
        "truncate",
        "delete",
        "duplicate",
        "swap",
        "shuffle_lines",
        "huge_dim",
        "zero_dim",
        "negative_dim",
        "unknown_opcode",
        "attribute_typo",
        "drop_operand",
        "cycle",
        "deep_nesting",
        "non_utf8",
        "break_one_line",
        "nul_byte",
        "long_line",
    ]
    for n in range(count):
        name, text = bases[n % len(bases)]
        kind = kinds[n % len(kinds)] if n < len(kinds) * 4 else rng.choice(kinds)
        case = _mutate(kind, text, rng)
        out.append(Case(f"{n:04d}-{kind}-{name}", case[0], case[1], name))
    return out


def _mutate(kind: str, text: str, rng: random.Random) -> tuple[bytes, int]:
    lines = text.split("\n")
    instr_lines = _instruction_lines(text) or [0]
    if kind == "truncate":
        return text[: rng.randrange(len(text) + 1)].encode(), 0
    if kind == "delete":
        i = rng.randrange(max(1, len(text)))
        return (text[:i] + text[i + 1 :]).encode(), 0
    if kind == "duplicate":
        i = rng.randrange(max(1, len(text)))
        return (text[: i + 1] + text[i:]).encode(), 0
    if kind == "swap":
        i = rng.randrange(max(1, len(text) - 1))
        return (text[:i] + text[i + 1 : i + 2] + text[i : i + 1] + text[i + 2 :]).encode(), 0
    if kind == "shuffle_lines":
        shuffled = lines[:]
        rng.shuffle(shuffled)
        return "\n".join(shuffled).encode(), 0
    if kind in ("huge_dim", "zero_dim", "negative_dim"):
        value = {"huge_dim": "1000000000000,1000000000000", "zero_dim": "0", "negative_dim": "-3"}[
            kind
        ]
        k = rng.choice(instr_lines)
        lines[k] = _SHAPE_DIMS.sub(lambda m: f"{m.group(1)}[{value}]", lines[k], count=1)
        return "\n".join(lines).encode(), 0
    if kind == "unknown_opcode":
        k = rng.choice(instr_lines)
        lines[k] = _OPCODE.sub(
            lambda m: m.group(0).replace(m.group(1), "frobnicate"), lines[k], count=1
        )
        return "\n".join(lines).encode(), 0
    if kind == "attribute_typo":
        k = rng.choice(instr_lines)
        typo = rng.choice(
            [
                ("dimensions=", "dimensionz="),
                ("={", "=("),
                ("slice=", "slice=[["),
                ("window=", "window={size=0x"),
                ("padding=", "padding=1_x"),
                ("=", "= ="),
            ]
        )
        lines[k] = lines[k].replace(typo[0], typo[1], 1)
        return "\n".join(lines).encode(), 0
    if kind == "drop_operand":
        k = rng.choice(instr_lines)
        lines[k] = re.sub(r"\(([^(),]+),\s*", "(", lines[k], count=1)
        return "\n".join(lines).encode(), 0
    if kind == "cycle":
        k = rng.choice(instr_lines)
        m = _INSTRUCTION.match(lines[k])
        own = m.group(2) if m else "x"
        lines[k] = re.sub(r"\((%?)([\w.\-]+)", lambda mm: f"({mm.group(1)}{own}", lines[k], count=1)
        return "\n".join(lines).encode(), 0
    if kind == "deep_nesting":
        depth = rng.choice([50, 200, 1000])
        k = rng.choice(instr_lines)
        nested = "(" * depth + "f32[2]" + ")" * depth
        lines.insert(k, f"  deep.{depth} = {nested} parameter(99)")
        return "\n".join(lines).encode(), 0
    if kind == "non_utf8":
        data = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            data.insert(rng.randrange(len(data) + 1), rng.choice([0xFF, 0xFE, 0xC3, 0x80]))
        return bytes(data), 0
    if kind == "nul_byte":
        i = rng.randrange(len(text) + 1)
        return (text[:i] + "\x00" + text[i:]).encode(), 0
    if kind == "long_line":
        k = rng.choice(instr_lines)
        lines[k] = lines[k] + " " + "x" * 100_000
        return "\n".join(lines).encode(), 0
    if kind == "break_one_line":
        k = rng.choice(instr_lines)
        m = _INSTRUCTION.match(lines[k])
        if m is None:
            return text.encode(), 0
        # Keep the name (so users still name it) but make the rest unparseable.
        lines[k] = lines[k][: m.start(3)] + "f32[2 @@ broken(" + lines[k][m.start(3) :]
        return "\n".join(lines).encode(), k + 1
    raise ValueError(kind)


# ---------------------------------------------------------------------------
# Maps
# ---------------------------------------------------------------------------


def xla_map_texts() -> list[str]:
    texts: list[str] = []
    for file in ("map_cases.json", "analysis_cases.json"):
        for case in json.loads((paths.XLA_TESTS / file).read_text(encoding="utf-8")):
            for entry in case.get("expected", []):
                text = entry.get("map_normalized") or entry.get("map")
                if text and "domain" in text:
                    texts.append(" ".join(text.split()))
            for entry in case.get("inputs", []) or []:
                if entry.get("map") and "domain" in entry["map"]:
                    texts.append(" ".join(entry["map"].split()))
    return sorted(set(texts))


def _extreme_maps() -> Iterator[str]:
    big = 2**63 - 1
    yield "(d0) -> (d0 floordiv 0), domain: d0 in [0, 9]"
    yield "(d0) -> (d0 mod 0), domain: d0 in [0, 9]"
    yield "(d0) -> (d0 ceildiv -2), domain: d0 in [0, 9]"
    yield "(d0) -> (d0 mod -1), domain: d0 in [0, 9]"
    yield "(d0) -> (d0), domain: d0 in [5, 4]"
    yield "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [3, 1]"
    yield "(d0) -> (d0), domain: d0 in [0, 9], d0 mod 2 in [3, 1]"
    yield "(d0) -> (d0), domain: d0 in [0, 9], d0 * 0 in [1, 1]"
    yield f"(d0) -> (d0 * {big}), domain: d0 in [0, {big}]"
    yield f"(d0) -> (d0 + {big}), domain: d0 in [{-big - 1}, {big}]"
    yield f"(d0, d1) -> (d0 * {big} + d1 * {big}), domain: d0 in [0, 9], d1 in [0, 9]"
    yield "(d0) -> (d0 * 99999999999999999999), domain: d0 in [0, 9]"
    yield "(d0) -> (d0), domain: d0 in [0, 99999999999999999999]"
    yield "(d0, d1) -> (d0, d1), domain: d0 in [0, 999999], d1 in [0, 999999]"
    yield "(d0, d1) -> ((d0 * 1000000 + d1) floordiv 1000000, (d0 * 1000000 + d1) mod 1000000), domain: d0 in [0, 999999], d1 in [0, 999999]"
    yield "(d0, d1, d2) -> (d0 + d1 + d2), domain: d0 in [0, 9999], d1 in [0, 9999], d2 in [0, 9999]"
    yield "(d0)[s0, s1] -> (d0 + s0 * s1), domain: d0 in [0, 999999], s0 in [0, 999999], s1 in [0, 999999]"
    yield "(d0) -> (d0 floordiv rt0), domain: d0 in [0, 9]"
    yield "(d0){rt0} -> (d0 floordiv rt0), domain: d0 in [0, 9], rt0 in [-1, 1]"
    yield "(d0){rt0} -> (d0 mod rt0), domain: d0 in [0, 9], rt0 in [0, 0]"
    for depth in (50, 100, 200, 400):
        yield "(d0) -> (" + "(" * depth + "d0" + " + 1)" * depth + "), domain: d0 in [0, 9]"
        yield (
            "(d0) -> (" + "(" * depth + "d0" + " floordiv 2)" * depth + "), domain: d0 in [0, 1000]"
        )
        yield "(d0) -> (" + "-" * depth + "d0), domain: d0 in [0, 9]"
        yield "(d0) -> (" + "min(" * depth + "d0" + ", 5)" * depth + "), domain: d0 in [0, 9]"
    yield ""
    yield "   "
    yield "()"
    yield "() -> ()"
    yield "UNDEFINED"
    yield "KNOWN EMPTY"
    yield "(d0 -> (d0)"
    yield "(d0) -> (d0), domain: d1 in [0, 9]"
    yield "(d0) -> (d0), domain:"
    yield "(d0) -> (d0 + ), domain: d0 in [0, 9]"
    yield "(d0) -> (d0), domain: d0 in [0, 9], d0 in [0"
    yield "(d0) -> (d0) domain d0 in 0 9"
    yield "(d0) -> (ü), domain: d0 in [0, 9]"
    yield "(d0) -> (d0)\x00, domain: d0 in [0, 9]"
    yield "(d0, d0) -> (d0), domain: d0 in [0, 9], d0 in [0, 9]"
    yield (
        "("
        + ", ".join(f"d{i}" for i in range(64))
        + ") -> ("
        + " + ".join(f"d{i}" for i in range(64))
        + "), domain: "
        + ", ".join(f"d{i} in [0, 9]" for i in range(64))
    )


def map_cases(count: int = 560, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out: list[tuple[str, str]] = [(f"extreme-{i:03d}", t) for i, t in enumerate(_extreme_maps())]
    texts = xla_map_texts()
    mutations = [
        "truncate",
        "delete",
        "duplicate",
        "swap",
        "zero_divisor",
        "empty_bound",
        "huge_bound",
        "flip_bound",
        "drop_paren",
    ]
    n = 0
    while len(out) < count:
        text = texts[n % len(texts)]
        kind = mutations[n % len(mutations)]
        out.append((f"{n:04d}-{kind}", _mutate_map(kind, text, rng)))
        n += 1
    return out


def _mutate_map(kind: str, text: str, rng: random.Random) -> str:
    if kind == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    if kind == "delete":
        i = rng.randrange(max(1, len(text)))
        return text[:i] + text[i + 1 :]
    if kind == "duplicate":
        i = rng.randrange(max(1, len(text)))
        return text[: i + 1] + text[i:]
    if kind == "swap":
        i = rng.randrange(max(1, len(text) - 1))
        return text[:i] + text[i + 1 : i + 2] + text[i : i + 1] + text[i + 2 :]
    if kind == "zero_divisor":
        return (
            re.sub(r"(floordiv|mod|ceildiv|/) \d+", r"\1 0", text, count=1)
            if re.search(r"(floordiv|mod|ceildiv|/) \d+", text)
            else text.replace("->", "-> (d0 floordiv 0) +", 1)
        )
    if kind == "empty_bound":
        return re.sub(
            r"in \[(-?\d+), (-?\d+)\]",
            lambda m: f"in [{int(m.group(2)) + 1}, {m.group(2)}]",
            text,
            count=1,
        )
    if kind == "huge_bound":
        return re.sub(r"in \[(-?\d+), (-?\d+)\]", "in [0, 1000000000000]", text, count=1)
    if kind == "flip_bound":
        return re.sub(
            r"in \[(-?\d+), (-?\d+)\]",
            "in [-9223372036854775808, 9223372036854775807]",
            text,
            count=1,
        )
    if kind == "drop_paren":
        i = text.find(")")
        return text[:i] + text[i + 1 :] if i >= 0 else text
    raise ValueError(kind)
