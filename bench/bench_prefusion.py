"""Issue 47's targets on a measured step: the module before optimization, as hloidx's
simulation of XLA:GPU compiles it, against XLA's optimized module and the measured step.

    python bench/bench_prefusion.py BEFORE.hlo OPTIMIZED.hlo MEASURED.json [--device a100]

Prints the kernels launched (simulated vs hloidx's count on XLA's optimized module, target
within 25%), the step estimate against the measured step mean (target within 30%), and the
time of ``cost`` on the module before optimization against ``maps --format json`` on it
(target: no slower than 2x). Nothing is fitted: the same run applies to any measured step.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from hloidx.fusion_sim import estimate_simulated
from hloidx.hlo.syntax import parse_hlo
from hloidx.perf import estimate_module


def _timed_cli(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hloidx", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("optimized")
    parser.add_argument("measured")
    parser.add_argument("--device", default="a100")
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args()
    with open(args.before) as f:
        before = parse_hlo(f.read(), args.before, verify=False)
    with open(args.optimized) as f:
        optimized = parse_hlo(f.read(), args.optimized, verify=False)
    with open(args.measured) as f:
        measured_ms = json.load(f)["step_ms_mean"]

    simulated = estimate_simulated(before, args.device)
    reference = estimate_module(optimized, args.device)
    sim_ms = simulated.step.time_ns / 1e6
    ref_ms = reference.step.time_ns / 1e6
    kernels, ref_kernels = simulated.launches, reference.launches
    print(f"stage: {simulated.stage.name}")
    print(f"  {simulated.stage.simulated}")
    print(f"  mesh: {simulated.stage.mesh}")
    off = kernels / ref_kernels - 1
    print(
        f"kernels launched: simulated {kernels}, XLA's optimized module {ref_kernels} "
        f"({off:+.1%}; target within 25%: {'holds' if abs(off) <= 0.25 else 'does not hold'})"
    )
    off = sim_ms / measured_ms - 1
    print(
        f"step: simulated {sim_ms:.2f} ms, XLA's optimized module {ref_ms:.2f} ms, "
        f"measured {measured_ms:.2f} ms ({off:+.1%} from measured; target within 30%: "
        f"{'holds' if abs(off) <= 0.30 else 'does not hold'})"
    )
    rows = simulated.step.collectives
    unestimated = sum(1 for c in rows if c.estimate is None)
    ref_rows = reference.step.collectives
    for label, step, found in (
        ("simulated", simulated.step, rows),
        ("XLA's optimized module", reference.step, ref_rows),
    ):
        print(
            f"collectives, {label}: {len(found)} ({sum(c.asynchronous for c in found)} "
            f"asynchronous), {step.communication_ns / 1e6:.2f} ms of communication, "
            f"{step.exposed_ns / 1e6:.2f} ms exposed; compute stream {step.compute_ns / 1e6:.2f} ms"
        )
    print(f"simulated collectives without an estimate on this device: {unestimated}")
    if not args.no_timing:
        cost_s = _timed_cli("cost", args.before, "--device", args.device, "--format", "json")
        maps_s = _timed_cli("maps", args.before, "--format", "json")
        print(
            f"time: cost {cost_s:.1f} s, maps --format json {maps_s:.1f} s "
            f"(ratio {cost_s / maps_s:.2f}; target <= 2: "
            f"{'holds' if cost_s <= 2 * maps_s else 'does not hold'})"
        )


if __name__ == "__main__":
    main()
