"""Time a benchmark script at two git revisions, alternating runs, and print both medians.

On a shared host a single benchmark run drifts by up to ±40% with the load, so "before" and
"after" figures taken minutes apart compare the load as much as the code. This script checks
out ``--base`` (default ``HEAD~1``) into a temporary worktree and runs the same script with
the same arguments from each tree in turn (base, work tree, base, work tree, ...): both feel
the same load, and the medians over ``--rounds`` runs can be compared.

The script must print markdown tables of the form ``| label | number | number | ...``; every
row whose first cell is text and whose other cells are numbers is collected, and for each
label and column the median over the rounds is printed for both revisions, with the ratio.

    python bench/compare_revisions.py --base d4395b7 --rounds 5 -- \\
        bench/bench_simplify.py --no-verify --cpu-time
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_NUMBER = re.compile(r"^-?[\d,]*\.?\d+(?:\s*\(.*\))?$")


def table_rows(output: str) -> dict[str, list[tuple[str, float]]]:
    """Numeric rows of the markdown tables in ``output``: label -> (column name, number)."""
    rows: dict[str, list[tuple[str, float]]] = {}
    header: list[str] = []
    for line in output.splitlines():
        if not line.lstrip().startswith("|"):
            header = []
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(set(c) <= set("-:") for c in cells):
            continue
        values = cells[1:]
        if not values or not all(_NUMBER.match(v) for v in values):
            header = cells
            continue
        names = (
            header[1:] if len(header) == len(cells) else [str(k + 1) for k in range(len(values))]
        )
        rows[cells[0]] = [
            (n, float(v.split("(")[0].replace(",", ""))) for n, v in zip(names, values, strict=True)
        ]
    return rows


def run(tree: Path, script: list[str]) -> dict[str, list[tuple[str, float]]]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run(
        [sys.executable, str(tree / script[0]), *script[1:]],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{script[0]} failed in {tree}:\n{done.stderr[-2000:]}")
    return table_rows(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD~1", help="revision to compare with")
    parser.add_argument("--rounds", type=int, default=5, help="runs per revision")
    parser.add_argument("script", nargs=argparse.REMAINDER, help="-- script.py [its arguments]")
    args = parser.parse_args()
    script = args.script[1:] if args.script[:1] == ["--"] else args.script
    if not script:
        parser.error("name the benchmark script after --")
    base_rows: list[dict[str, list[tuple[str, float]]]] = []
    work_rows: list[dict[str, list[tuple[str, float]]]] = []
    with tempfile.TemporaryDirectory(prefix="hloidx-base-") as scratch:
        base = Path(scratch) / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), args.base],
            check=True,
        )
        try:
            for k in range(args.rounds):
                print(f"round {k + 1}/{args.rounds}", file=sys.stderr, flush=True)
                base_rows.append(run(base, script))
                work_rows.append(run(ROOT, script))
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
            )
    load = os.getloadavg()[0]
    print(f"{args.rounds} alternating rounds of {' '.join(script)}; load {load:.1f} at the end\n")
    print(f"| measure | {args.base} | work tree | work / base |")
    print("|---|---:|---:|---:|")
    for label, first in base_rows[0].items():
        for column, (heading, _) in enumerate(first):
            before = [r[label][column][1] for r in base_rows if len(r.get(label, ())) > column]
            after = [r[label][column][1] for r in work_rows if len(r.get(label, ())) > column]
            if not after:
                continue
            b, a = statistics.median(before), statistics.median(after)
            ratio = f"{a / b:.2f}" if b else "—"
            print(f"| {label}: {heading} | {b:g} | {a:g} | {ratio} |")


if __name__ == "__main__":
    main()
