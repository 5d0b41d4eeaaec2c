"""How close ``hloidx cost`` is to a measured GPU step: the accuracy table of both models.

    python bench/accuracy.py [--worst 15] [--kernels]

Runs ``estimate_module`` on ``tests/data/measured/pax_a100/module.hlo`` (a PAX training step
measured on an A100-SXM4-40GB, see the folder's PROVENANCE.md) with the device ``a100``, joins
each kernel row to ``measured.json`` by HLO instruction name (ops inside async computations
through ``async_wrapped.json`` to their ``*-start``), and prints, for ``--model hloidx`` and
``--model xla``: the share of measured kernel time within 2x, Spearman's rank correlation of
per-launch times, the median |log2(estimate / measured)|, the same per kind of kernel, the
collectives apart, and the step against the measured step. ``--worst N`` lists the N kernels
with the largest time error.

The join is the bench's own (by name; measured.json is keyed by the instruction the NVTX
thunk range names); the figures come from :func:`hloidx.perf.accuracy.accuracy`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hloidx.hlo.syntax import parse_hlo  # noqa: E402
from hloidx.perf.accuracy import AccuracyRow, accuracy  # noqa: E402
from hloidx.perf.report import CostReport, estimate_module  # noqa: E402

DATA = ROOT / "tests" / "data" / "measured" / "pax_a100"


def load_measured(folder: Path = DATA) -> tuple[dict, dict]:
    measured = json.loads((folder / "measured.json").read_text())
    wrapped = json.loads((folder / "async_wrapped.json").read_text())
    return measured, wrapped


def joined_rows(
    report: CostReport, measured: dict, wrapped: dict
) -> list[tuple[str, str, AccuracyRow]]:
    """(name, kind, row) for every measured op: its estimate per launch (None: no row or no
    estimate), its measured mean per launch, launches per step."""
    kernels = {k.name: k for k in report.kernels}
    collectives = {c.name: c for c in report.collective_rows()}
    ops = measured["ops"]
    # a kernel XLA names after an instruction inside a fusion (the second pass of a reduction
    # to a scalar) is one more kernel of its fusion: all kernels of an instruction count together
    extra: dict[str, float] = defaultdict(float)
    for op in ops.values():
        caller = op.get("fusion_caller")
        if caller in ops:
            extra[caller] += op["mean_us"] * op["count_per_step"] / ops[caller]["count_per_step"]
    out = []
    for name, op in ops.items():
        if op.get("fusion_caller") in ops:
            continue
        target = wrapped.get(name, {}).get("async_start", name)
        launches = op["count_per_step"]
        mean_ns = (op["mean_us"] + extra.get(name, 0.0)) * 1000.0
        if target in collectives:
            row = collectives[target]
            out.append((name, "collective", AccuracyRow(row.exec_time_ns, mean_ns, True, launches)))
            continue
        kernel = kernels.get(target)
        estimate = None if kernel is None else kernel.exec_time_ns
        rng = None if kernel is None else kernel.exec_time_range_ns
        kind = "missing" if kernel is None else kernel.emitter.split(":")[0].split(" (")[0]
        out.append((name, kind, AccuracyRow(estimate, mean_ns, False, launches, rng)))
    return out


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def table(results: dict[str, dict], step_ms: float) -> str:
    lines = [
        "| device, model | within 2x | Spearman | median abs log2 | unestimated | collectives within 2x"
        " | step (ms) | step / measured |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for model, r in results.items():
        a = r["accuracy"]
        step = r["step_ms"]
        lines.append(
            f"| {model} | {_fmt(a['within_2x'], '.1%')} | {_fmt(a['spearman'], '.3f')} | "
            f"{_fmt(a['median_abs_log2'], '.2f')} | {a['unestimated']} | "
            f"{_fmt(a['collectives']['within_2x'], '.1%')} | {step:.2f} | {step / step_ms:.2f} |"
        )
    return "\n".join(lines)


def by_kind(rows: list[tuple[str, str, AccuracyRow]]) -> str:
    groups: dict[str, list[AccuracyRow]] = defaultdict(list)
    for _, kind, row in rows:
        groups[kind].append(row)
    lines = [
        "| kind | n | measured ms/step | estimated ms/step | within 2x | median abs log2 |",
        "|---|---|---|---|---|---|",
    ]
    for kind, rs in sorted(groups.items(), key=lambda kv: -sum(r.measured_ns for r in kv[1])):
        a = accuracy([AccuracyRow(r.estimate_ns, r.measured_ns, False, r.launches) for r in rs])
        meas = sum(r.measured_ns * r.launches for r in rs) / 1e6
        est = sum((r.estimate_ns or 0) * r.launches for r in rs) / 1e6
        lines.append(
            f"| {kind} | {len(rs)} | {meas:.2f} | {est:.2f} | {_fmt(a['within_2x'], '.1%')} | "
            f"{_fmt(a['median_abs_log2'], '.2f')} |"
        )
    return "\n".join(lines)


def worst(rows: list[tuple[str, str, AccuracyRow]], n: int) -> str:
    def err(r: AccuracyRow) -> float:
        return abs((r.estimate_ns or 0.0) - r.measured_ns) * r.launches

    lines = [
        "| kernel | kind | launches | measured us | estimated us | log2 |",
        "|---|---|---|---|---|---|",
    ]
    for name, kind, r in sorted(rows, key=lambda t: -err(t[2]))[:n]:
        est = r.estimate_ns
        log2 = math.log2(est / r.measured_ns) if est else None
        lines.append(
            f"| {name} | {kind} | {r.launches:g} | {r.measured_ns / 1e3:.1f} | "
            f"{_fmt(None if est is None else est / 1e3, '.1f')} | {_fmt(log2, '+.2f')} |"
        )
    return "\n".join(lines)


def run(
    devices: tuple[str, ...] = ("a100",), models: tuple[str, ...] = ("hloidx", "xla")
) -> tuple[dict, float]:
    measured, wrapped = load_measured()
    module = parse_hlo((DATA / "module.hlo").read_text())
    results = {}
    for device, model in ((d, m) for d in devices for m in models):
        start = time.perf_counter()
        report = estimate_module(module, device, model)
        seconds = time.perf_counter() - start
        rows = joined_rows(report, measured, wrapped)
        assert report.step is not None
        results[f"{device}, {model}"] = {
            "report": report,
            "rows": rows,
            "accuracy": accuracy(r for _, _, r in rows),
            "step_ms": report.step.time_ns / 1e6,
            "seconds": seconds,
        }
    return results, measured["step_ms_mean"]


XPLANE = ROOT / "tests" / "data" / "measured" / "xplane"
#: the AMD profiles (JAX profiler files that carry their HLO): name, file, what ran
PROFILES = (
    ("mi300x tw003", XPLANE / "tw003.xplane.pb", "MI300X, 3-D convolution, 4 kernels"),
    ("mi355x 934987a2fc2f", XPLANE / "934987a2fc2f.xplane.pb", "MI355X, TE fused attention"),
)


def profile_rows(report: CostReport) -> list[tuple[str, str, AccuracyRow]]:
    """(name, kind, row) of every kernel row a profile's times were joined onto."""
    join = report.measured
    out = []
    for k in report.kernels:
        op = join.rows.get(k.name)
        if op is None:
            continue
        kind = k.emitter.split(":")[0].split(" (")[0]
        rng = getattr(k, "exec_time_range_ns", None)
        row = AccuracyRow(k.exec_time_ns, op.mean_ns, False, op.per_step, rng)
        out.append((k.name, kind, row))
    return out


def run_profile(path: Path, models: tuple[str, ...] = ("hloidx", "xla")) -> dict:
    """Both models on an xplane profile's own HLO and GPU. The step is compared like with
    like: the measured GPU span of an execution holds the host's idle time between kernels
    (most of tw003's), so beside it stands the measured busy time, the sum of its kernels'
    times per step plus the model's own gap per launch, against the estimated step."""
    from hloidx.perf.calibration import launch_gap
    from hloidx.perf.measured_source import attach, module_of, profile_device
    from hloidx.profiles import read_profile

    profile = read_profile(str(path))
    module, program = module_of(profile)
    device = profile_device(profile)
    results = {}
    for model in models:
        report = estimate_module(module, device, model)
        attach(report, module, profile, program)
        rows = profile_rows(report)
        assert report.step is not None
        launches = sum(r.launches for _, _, r in rows)
        busy = sum(r.measured_ns * r.launches for _, _, r in rows)
        gap = launch_gap(device).value if model == "hloidx" else 1000.0
        results[model] = {
            "report": report,
            "rows": rows,
            "accuracy": accuracy(r for _, _, r in rows),
            "step_ms": report.step.time_ns / 1e6,
            "span_ms": program.step_ns / 1e6,
            "busy_ms": (busy + gap * launches) / 1e6,
        }
    return results


def matrix_core_efficiency(results: dict) -> str:
    """The 'matrix-core' GEMM efficiency: the median achieved share of the dense peak over the
    profile's GEMMs (library rows timed as a matrix-unit roofline; not the attention calls)
    whose roofline is compute-bound, as the A100 figure is derived."""
    from statistics import median

    from hloidx.perf.step_costs import tensor_core_peak

    report = results["hloidx"]["report"]
    device = report.device
    shares = []
    for k in report.kernels:
        op = report.measured.rows.get(k.name)
        if op is None or "share of the datasheet peak" not in k.emitter:
            continue
        if k.compute_time_ns < k.read_time_ns + k.write_time_ns:
            continue
        peak = tensor_core_peak(device.name, "bf16")
        assert peak is not None
        shares.append(k.flops / (op.mean_ns * 1e-9) / peak[0])
    listed = ", ".join(f"{x:.3f}" for x in sorted(shares))
    return f"matrix-core GEMM efficiency: median {median(shares):.3f} of {len(shares)} ({listed})"


def kernel_floor(results: dict) -> str:
    """A profile's kernel floor, derived as the A100's: the median measured time per launch of
    the kernels (not library calls) that read and write under 1 KiB."""
    from statistics import median

    report = results["hloidx"]["report"]
    times = [
        report.measured.rows[k.name].mean_ns
        for k in report.kernels
        if k.name in report.measured.rows
        and k.kind != "library"
        and k.bytes_read + k.bytes_written < 1024
    ]
    listed = ", ".join(f"{x:.0f}" for x in sorted(times))
    return f"kernel floor: median {median(times):.0f} ns of {len(times)} ({listed})"


def profile_table(name: str, results: dict) -> str:
    lines = []
    for model, r in results.items():
        a = r["accuracy"]
        lines.append(
            f"| {name} | {model} | {_fmt(a['within_2x'], '.1%')} | {_fmt(a['spearman'], '.3f')} | "
            f"{_fmt(a['median_abs_log2'], '.2f')} | {r['step_ms']:.3f} | {r['busy_ms']:.3f} | "
            f"{r['step_ms'] / r['busy_ms']:.2f} | {r['span_ms']:.3f} | "
            f"{r['step_ms'] / r['span_ms']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worst", type=int, default=15)
    parser.add_argument(
        "--device",
        action="append",
        help="devices to estimate on (default: a100, and a100_sxm_40, XLA's spec of the "
        "A100-SXM4-40GB the step ran on: 1,555 GB/s)",
    )
    parser.add_argument(
        "--derive", action="store_true", help="recompute the measured calibration figures"
    )
    parser.add_argument(
        "--amd-only", action="store_true", help="only the AMD profiles (skips the A100 step)"
    )
    args = parser.parse_args()
    print_profiles(args.worst)
    if args.amd_only:
        return
    devices = tuple(args.device or ("a100", "a100_sxm_40"))
    results, step_ms = run(devices)
    if args.derive:
        from calibration_derivation import derive

        print(derive(results[f"{devices[-1]}, hloidx"]["report"], load_measured()[0]))
    print(f"A100 PAX step, measured step {step_ms:.2f} ms\n")
    print(table(results, step_ms))
    for model, r in results.items():
        print(f"\n## {model} ({r['seconds']:.1f} s)\n")
        print(by_kind(r["rows"]))
        if args.worst:
            print()
            print(worst(r["rows"], args.worst))


def print_profiles(n_worst: int) -> None:
    print(
        "AMD profiles (device, HLO and times from the profile; step: estimated against the "
        "measured busy time = kernels + the model's gap per launch, and against the GPU span)\n"
    )
    print(
        "| profile | model | within 2x | Spearman | median abs log2 | step (ms) | busy (ms) | "
        "step / busy | span (ms) | step / span |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    found = {}
    for name, path, _ in PROFILES:
        if path.exists():
            found[name] = run_profile(path)
            print(profile_table(name, found[name]))
    if "mi355x 934987a2fc2f" in found:
        print("\n" + matrix_core_efficiency(found["mi355x 934987a2fc2f"]))
        print(kernel_floor(found["mi355x 934987a2fc2f"]))
    for name, results in found.items():
        print(f"\n## {name}, hloidx\n")
        print(worst(results["hloidx"]["rows"], n_worst))
    print()


if __name__ == "__main__":
    main()
