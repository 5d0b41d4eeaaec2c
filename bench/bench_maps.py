"""Benchmark ``hloidx maps`` end to end: seconds, instructions/s, peak memory, and scaling.

Each measurement runs in a fresh subprocess (so peak RSS is the run's own) doing what
``hloidx maps FILE --format json [--no-verify]`` does, timing parse + analysis + JSON (the
interpreter's start-up is not counted). Prints markdown tables;
``bench/run_all.py`` runs it with the other benchmarks and appends the tables, with the date and
machine, to ``bench/RESULTS.md``.

    python bench/bench_maps.py            # corpus modules (+ JAX-generated ones when jax is installed)
    python bench/bench_maps.py --quick    # corpus only
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"
sys.path.insert(0, str(ROOT / "bench"))

_CHILD = r"""
import json, resource, sys, time, gc
from hloidx.hlo.syntax import parse_hlo
from hloidx.hlo.analysis import analyze
from hloidx.hlo.report import module_to_json
from hloidx.cli.collector import RELAXED
gc.set_threshold(*RELAXED)  # the collector's thresholds `hloidx maps` runs with
path, verify = sys.argv[1], sys.argv[2] == "1"
text = open(path, encoding="utf-8").read()
t0 = time.perf_counter()
module = parse_hlo(text, path)
t1 = time.perf_counter()
analysis = analyze(module, verify=verify)
doc = json.dumps(module_to_json(analysis))
t2 = time.perf_counter()
n = len(analysis.instructions)
unknown = sorted({i.opcode for i in analysis.instructions if any(x.startswith("unknown") for x in i.notes)})
verdicts = {}
for i in analysis.instructions:
    for o in i.operands:
        for v in o.verdicts:
            verdicts[v.kind] = verdicts.get(v.kind, 0) + 1
print(json.dumps({"instructions": n, "parse_s": t1 - t0, "total_s": t2 - t0,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "unknown": unknown, "verdicts": verdicts}))
"""


def measure(path: Path, verify: bool) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), "1" if verify else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="corpus files only, no JAX models")
    parser.add_argument("--layers", default="1,2,4,32", help="transformer depths to generate")
    args = parser.parse_args()

    targets: list[tuple[str, Path]] = [
        ("large_resnet12_fwd_bwd.opt", CORPUS / "large_resnet12_fwd_bwd.opt.hlo"),
        ("transformer_block.opt", CORPUS / "transformer_block.opt.hlo"),
    ]
    scaling: list[tuple[int, Path]] = []
    from gen_models import have_jax, transformer_hlo

    if not args.quick:
        if have_jax():
            for n in map(int, args.layers.split(",")):
                path = transformer_hlo(n)
                targets.append((f"transformer {n} layers (JAX)", path))
                scaling.append((n, path))
        else:
            print("jax is not installed: skipping the generated modules", file=sys.stderr)

    rows = []
    results = {}
    for label, path in targets:
        fast = measure(path, verify=False)
        full = measure(path, verify=True)
        results[label] = (fast, full)
        size_kb = path.stat().st_size / 1024
        rows.append(
            f"| {label} | {size_kb:,.0f} KB | {fast['instructions']:,} | {fast['total_s']:.2f} s | "
            f"{fast['instructions'] / fast['total_s']:,.0f}/s | {full['total_s']:.2f} s | "
            f"{full['total_s'] / fast['total_s']:.2f}× | {max(fast['peak_mb'], full['peak_mb']):,.0f} MB | "
            f"{', '.join(f'{k} {v}' for k, v in sorted(full['verdicts'].items()))} |"
        )
    table = [
        "| module | size | instructions | maps --no-verify | instr/s | with verification | cost of verifying | peak RSS | verdicts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
        *rows,
    ]
    if len(scaling) >= 2:
        table += [
            "",
            "| layers | instructions | seconds (--no-verify) | µs per instruction |",
            "|---:|---:|---:|---:|",
        ]
        for n, _ in scaling:
            fast = results[f"transformer {n} layers (JAX)"][0]
            table.append(
                f"| {n} | {fast['instructions']:,} | {fast['total_s']:.2f} | "
                f"{fast['total_s'] / fast['instructions'] * 1e6:.0f} |"
            )
    unknown = sorted({op for fast, _ in results.values() for op in fast["unknown"]})
    table += ["", f"Opcodes met without a rule: {', '.join(unknown) or 'none'}."]
    text = "\n".join(table)
    print(text)


if __name__ == "__main__":
    main()
