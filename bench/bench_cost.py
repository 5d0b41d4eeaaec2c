"""``hloidx cost`` end to end: wall and CPU seconds on the corpus, the resnet and the 26-layer
transformer (``bench/gen_models.py 26``, when generated), and whether every kernel of the
corpus got a row or a stated reason.

    python bench/bench_cost.py [--runs 3] [--append]

Prints a Markdown section; ``--append`` also appends it to bench/RESULTS.md. Each module is run
``--runs`` times as a subprocess (``python -m hloidx cost FILE --format json``), modules in
turn (A/B/A/B...), and the median is reported with the host's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "data" / "corpus"
GENERATED = ROOT / "bench" / "generated"


def _run(path: Path, model: str) -> tuple[float, float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "hloidx", "cost", str(path), "--format", "json", "--model", model],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out.stdout)


def _instructions(path: Path) -> int:
    import hloidx

    return len(hloidx.parse_hlo(path.read_text(), path.name).instructions())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--append", action="store_true")
    args = parser.parse_args()
    timed = [CORPUS / "large_resnet12_fwd_bwd.opt.hlo"]
    transformer = GENERATED / "transformer_26l_64w.opt.hlo"
    if transformer.exists():
        timed.append(transformer)
    samples: dict[tuple[Path, str], list[tuple[float, float]]] = {}
    docs: dict[Path, dict] = {}
    for _ in range(args.runs):
        for path in timed:
            for model in ("hloidx", "xla"):
                wall, cpu, doc = _run(path, model)
                samples.setdefault((path, model), []).append((wall, cpu))
                docs[path] = doc
    load = os.getloadavg()
    lines = [
        f"### `hloidx cost` end to end ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"`bench/bench_cost.py --runs {args.runs}`)",
        "",
        f"Busy host: load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on 2 cores; "
        "medians of the runs, taken in turn.",
        "",
        "| module | instructions | model | kernels | wall s (median) | CPU s (median) |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for (path, model), runs in samples.items():
        walls = statistics.median(w for w, _ in runs)
        cpus = statistics.median(c for _, c in runs)
        lines.append(
            f"| {path.name} | {_instructions(path):,} | {model} | "
            f"{len(docs[path]['kernels'])} | {walls:.2f} | {cpus:.2f} |"
        )
    # every kernel of the corpus: a row or a stated reason
    from hloidx.perf import estimate_module

    kernels = rows = 0
    reasons: Counter[str] = Counter()
    for path in sorted(CORPUS.glob("*.opt.hlo")) + sorted(CORPUS.glob("*after_optimizations.hlo")):
        import hloidx

        module = hloidx.parse_hlo(path.read_text(), path.name)
        report = estimate_module(module)
        rows += len(report.kernels)
        kernels += len(module.entry.instructions)
        unexplained = [
            i.name
            for i in module.entry.instructions
            if i.name not in {k.name for k in report.kernels}
            and i.name not in {s.name for s in report.skipped if s.reason}
        ]
        assert not unexplained, (path.name, unexplained)
        for s in report.skipped:
            reasons[s.reason.split(":")[0].split(" (")[0]] += 1
    lines += [
        "",
        f"Corpus (`tests/data/corpus/*.opt.hlo` and `*after_optimizations.hlo`): {kernels} entry "
        f"instructions, {rows} kernel rows, 0 without a row or a stated reason; the others: "
        + ", ".join(f"{n} {r}" for r, n in reasons.most_common())
        + ".",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.append:
        with (ROOT / "bench" / "RESULTS.md").open("a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
