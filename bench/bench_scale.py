"""Real training steps at scale: XLA's own benchmark modules (Llama 3.1 8B, Mixtral 8x7B, the
small Llama 3.1 405B step) through ``hloidx maps --format json`` and ``hloidx summary``, from the
shell, as a user runs them.

For each module and command: the median wall and CPU seconds of ``--repeat`` fresh processes,
instructions per second (by wall time and by CPU time: the CPU figure is the steadier one on a
shared machine), and the peak resident set above the same command on a one-op module (a
parameter and a negate: what the interpreter, the imports and one analysed instruction cost),
against the targets of issue #29: at least 10,000 instructions/s, and at most 64 MB + 20x the
file above that floor.

    python bench/bench_scale.py              # the three modules, three runs each
    python bench/bench_scale.py --repeat 5 --only llama31_8b

The modules are read from ``bench/data/*.hlo.gz`` (see its README) and decompressed into a
temporary directory for the command line.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_cli import _time  # noqa: E402

DATA = HERE / "data"
MODULES = [
    "hlo_llama31_8b_bf16_1x8",
    "hlo_mixtral_8x7b_bf16_1x8",
    "hlo_llama31_405b_bf16_16x8",
]
ONE_OP = (
    "HloModule one_op\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n"
)
COMMANDS = [
    ("`maps --format json`", ["maps", "{}", "--format", "json"]),
    ("`summary`", ["summary", "{}"]),
]
TARGET_RATE = 10_000


def instructions(text: str) -> int:
    """Instructions of an HLO module's text: the lines that assign a value."""
    return len(re.findall(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*\S", text, re.MULTILINE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="modules whose name contains this")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    with tempfile.TemporaryDirectory() as tmp:
        one_op = Path(tmp) / "one_op.hlo"
        one_op.write_text(ONE_OP)
        floors = {}
        for label, command in COMMANDS:
            argv = [a.format(one_op) for a in command]
            floors[label] = _time(argv, args.repeat)[2]
        print(
            "| module | instructions | file | run | wall s | CPU s | instr/s (wall) "
            "| instr/s (CPU) | peak RSS | above the floor | limit | memory |"
        )
        print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for name in MODULES:
            if args.only not in name:
                continue
            text = gzip.decompress((DATA / f"{name}.hlo.gz").read_bytes()).decode()
            path = Path(tmp) / f"{name}.hlo"
            path.write_text(text)
            n = instructions(text)
            size_mb = len(text.encode()) / 2**20
            for label, command in COMMANDS:
                wall, cpu, peak = _time([a.format(path) for a in command], args.repeat)
                above = peak - floors[label]
                limit = 64 + 20 * size_mb
                print(
                    f"| {name} | {n:,} | {size_mb:.2f} MB | {label} | {wall:.2f} | {cpu:.2f} "
                    f"| {n / wall:,.0f} | {n / cpu:,.0f} | {peak:.0f} MB | {above:.0f} MB "
                    f"| {limit:.0f} MB | {'ok' if above <= limit else 'OVER'} |"
                )
        print(
            "\nfloor (the one-op module): "
            + ", ".join(f"{label} {peak:.1f} MB" for label, peak in floors.items())
        )
        print(
            f"target: {TARGET_RATE:,} instructions/s end to end; memory above the floor <= 64 MB + 20x the file"
        )


if __name__ == "__main__":
    main()
