"""What a user sees: ``hloidx`` run from the shell, end to end (start-up, parse, analysis,
verification, writing the output to a pipe), in text and in JSON.

    python bench/bench_cli.py              # the resnet module (and a JAX transformer if jax)
    python bench/bench_cli.py --layers 0   # the corpus module only

Each figure is the median of three runs of a fresh process; peak RSS is the largest resident
set of those processes. Prints a Markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESNET = ROOT / "tests" / "data" / "corpus" / "large_resnet12_fwd_bwd.opt.hlo"

RUNS = [
    ("text", []),
    ("JSON", ["--format", "json"]),
    ("text, --no-verify", ["--no-verify"]),
    ("JSON, --no-verify", ["--format", "json", "--no-verify"]),
]


def _instructions(path: Path) -> int:
    return sum(1 for line in path.open() if " = " in line and "(" in line)


def _time(args: list[str], repeat: int = 3) -> tuple[float, float, float]:
    """Median wall seconds of ``repeat`` fresh processes, their median CPU seconds (user +
    system: the steadier figure on a shared machine), and their peak RSS in MB."""
    times, cpus, peaks = [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "hloidx", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        assert process.stdout is not None
        while process.stdout.read(1 << 20):  # a reader at the other end of the pipe, like `less`
            pass
        _, status, usage = os.wait4(process.pid, 0)
        times.append(time.perf_counter() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
        peaks.append(usage.ru_maxrss / 1024)
        process.stdout.close()
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"hloidx {' '.join(args)} failed")
    return statistics.median(times), statistics.median(cpus), max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--layers",
        type=int,
        default=26,
        help="JAX transformer depth (0: none; 26: 55,705 instructions)",
    )
    args = parser.parse_args()
    targets = [("large_resnet12_fwd_bwd.opt", RESNET)]
    if args.layers:
        # generated in another process: a child forked from a parent that imported jax would
        # report the parent's resident set as its own peak
        made = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; sys.path.insert(0, sys.argv[1]); import gen_models as g; "
                "print(g.transformer_hlo(int(sys.argv[2])) if g.have_jax() else '')",
                str(HERE),
                str(args.layers),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if made:
            targets.append((f"transformer {args.layers} layers (JAX)", Path(made)))
        else:
            print("(jax is not installed: the transformer module is skipped)", file=sys.stderr)
    startup, _, _ = _time(["--version"])
    print("| module | instructions | run | seconds | CPU s | instructions/s | peak RSS |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, path in targets:
        n = _instructions(path)
        runs = [(f"`maps` {label}", ["maps", str(path), *extra]) for label, extra in RUNS]
        for label, args_ in [*runs, ("`summary`", ["summary", str(path)])]:
            seconds, cpu, peak = _time(args_)
            print(
                f"| {name} | {n:,} | {label} | {seconds:.2f} | {cpu:.2f} | {n / seconds:,.0f} "
                f"| {peak:.0f} MB |"
            )
    print(f"\nstart-up (`hloidx --version`): {startup:.2f} s")


if __name__ == "__main__":
    main()
