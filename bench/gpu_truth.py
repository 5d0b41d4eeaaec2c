"""The corpus programs run on this machine's GPU under the JAX profiler, and the accuracy table
of both cost models (``hloidx`` and ``xla``) against what the GPU did.

    python bench/gpu_truth.py [--steps 10] [--warmup-steps 3] [--programs NAME,...]
                              [--out DIR] [--device NAME] [--json FILE] [--dry-run]

Needs jax with a GPU backend and ``hloidx[profile]`` (protobuf). For each program (the drift
programs of ``tests/jax_drift_programs.py`` and the corpus programs of
``tests/data/stablehlo_jax012/generate.py``, the same definitions the tests compile):

1. compile it once with ``XLA_FLAGS=--xla_dump_to=OUT/dump --xla_gpu_enable_command_buffer=``
   (no CUDA graphs, so that every thunk is attributed to its instruction);
2. run it ``--warmup-steps`` times outside the profiler (compilation, autotuning, first
   touches), then ``--steps`` times inside ``jax.profiler.trace(OUT/trace/NAME)``, each step
   waited for and followed by a short pause so that the executions stand apart;
3. read the ``<host>.xplane.pb`` with hloidx's reader (warm-up rule as in ``hloidx cost
   --profile``; ``--warmup N`` overrides it), estimate the module XLA wrote to the dump
   (``*after_optimizations.txt``) with each model on the GPU the profile describes
   (``--device`` overrides), join the two on (module, program id, instruction);
4. print per program and model: within_2x (share of measured kernel time estimated within a
   factor 2), Spearman of per-launch times, median |log2(estimate/measured)|, the estimated
   and measured step; and the same over all programs' kernels together. ``--json FILE``
   writes the same as JSON (``-`` for stdout).

Without a GPU it says so in one line and exits 2. ``--dry-run`` runs the same pipeline on the
CPU (for CI: the script works end to end): XLA:CPU's profile has thunk events on the host, no
GPU kernel, so the join finds nothing; the output says what was read, what was estimated and
what could not be joined. Not run in CI on a GPU: run it by hand on a GPU machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DRIFT = ROOT / "tests" / "jax_drift_programs.py"
CORPUS = ROOT / "tests" / "data" / "stablehlo_jax012" / "generate.py"
MODELS = ("hloidx", "xla")
#: pause after each profiled step (s): executions stand apart in the GPU timeline
PAUSE_S = 0.002


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def programs(wanted: str | None = None) -> dict[str, tuple[Any, tuple[Any, ...]]]:
    """``set/name -> (function, arguments)``: the drift programs and the corpus programs
    (imported from the files the tests use; importing them imports jax), or those of them
    ``wanted`` names (comma-separated; ``scan`` names both sets' scan, ``drift/scan`` one).
    The corpus set is only built when wanted (its arguments take a while to make)."""
    names = [w.strip() for w in (wanted or "").split(",") if w.strip()]

    def wants(qualified: str) -> bool:
        return not names or any(w in (qualified, qualified.split("/", 1)[1]) for w in names)

    out = {}
    for name, (fn, args) in _load(DRIFT, "jax_drift_programs").programs().items():
        if wants(f"drift/{name}"):
            out[f"drift/{name}"] = (fn, args)
    if not names or any(not w.startswith("drift/") for w in names):
        for name, fn, args in _load(CORPUS, "stablehlo_jax012_generate").programs():
            if wants(f"corpus/{name}"):
                out[f"corpus/{name}"] = (fn, args)
    missing = [w for w in names if not any(w in (k, k.split("/", 1)[1]) for k in out)]
    if missing:
        raise SystemExit(f"gpu_truth: no program {', '.join(missing)} (drift/NAME or corpus/NAME)")
    return out


# -- running ------------------------------------------------------------------------------


def _dump_file(dump: Path, before: set[Path], module: str) -> Path | None:
    """The optimized module text XLA wrote for ``module`` since ``before``."""
    new = [
        p
        for p in dump.glob(f"module_*.{module}.*after_optimizations.txt")
        if p not in before
        and re.fullmatch(rf"module_\d+\.{re.escape(module)}\.[\w.]*after_optimizations", p.stem)
    ]
    return max(new, key=lambda p: p.name) if new else None


def run_program(
    name: str, fn: Any, args: tuple[Any, ...], out: Path, steps: int, warmup_steps: int
) -> dict[str, Any]:
    """Compiles and profiles one program: its module name, dump file and xplane file."""
    import jax

    dump = out / "dump"
    before = set(dump.glob("*")) if dump.exists() else set()
    compiled = jax.jit(fn).lower(*args).compile()
    module = compiled.as_text().split(None, 2)[1].rstrip(",")
    for _ in range(warmup_steps):
        jax.block_until_ready(compiled(*args))
    trace = out / "trace" / name.replace("/", "_")
    with jax.profiler.trace(str(trace)):
        for _ in range(steps):
            jax.block_until_ready(compiled(*args))
            time.sleep(PAUSE_S)
    xplanes = sorted(trace.glob("plugins/profile/*/*.xplane.pb"))
    return {
        "module": module,
        "hlo": _dump_file(dump, before, module),
        "xplane": xplanes[-1] if xplanes else None,
    }


# -- reading ------------------------------------------------------------------------------


def xplane_census(path: Path, module: str) -> dict[str, Any]:
    """What the profile holds, for saying what could not be joined: events per plane, and
    events (of any plane) carrying ``hlo_op`` of ``module``, by plane kind."""
    from hloidx.protos import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    planes: dict[str, int] = {}
    ops: dict[str, list[str]] = {"gpu": [], "host": []}
    for plane in space.planes:
        names = {k: m.name for k, m in plane.stat_metadata.items()}
        planes[plane.name] = sum(len(line.events) for line in plane.lines)
        kind = "gpu" if plane.name.startswith("/device:GPU:") else "host"
        for line in plane.lines:
            for event in line.events:
                stats = {}
                for s in event.stats:
                    which = s.WhichOneof("value")
                    value = getattr(s, which) if which else None
                    if which == "ref_value":
                        value = names.get(value)
                    stats[names.get(s.metadata_id)] = value
                if stats.get("hlo_module") == module and stats.get("hlo_op"):
                    ops[kind].append(str(stats["hlo_op"]))
    return {"planes": planes, "gpu_ops": ops["gpu"], "host_ops": ops["host"]}


def analyse(
    run: dict[str, Any], device: str | None, warmup: int | None, rows: dict[str, list]
) -> dict[str, Any]:
    """Both models' estimates of the dumped module joined to the profile. ``rows`` collects
    every joined kernel's accuracy row per model, for the figures over all programs."""
    from hloidx.errors import HloidxError
    from hloidx.hlo.syntax import parse_hlo
    from hloidx.perf.accuracy import AccuracyRow
    from hloidx.perf.measured_source import attach, profile_device, program_of
    from hloidx.perf.report import estimate_module
    from hloidx.profiles import read_profile

    result: dict[str, Any] = {"module": run["module"], "notes": []}
    notes = result["notes"]
    if run["hlo"] is None:
        notes.append("XLA wrote no optimized module text to the dump: nothing to estimate")
        return result
    result["hlo"] = run["hlo"].name
    module = parse_hlo(run["hlo"].read_text(), str(run["hlo"]))
    profile = program = None
    if run["xplane"] is None:
        notes.append("the profiler wrote no xplane.pb")
    else:
        result["xplane"] = str(run["xplane"])
        census = xplane_census(run["xplane"], run["module"])
        result["profile_events"] = census["planes"]
        instructions = {i.name for i in module.instructions()}
        host = census["host_ops"]
        if host and not census["gpu_ops"]:
            named = sum(1 for op in host if op in instructions)
            notes.append(
                f"the profile has {len(host)} host (CPU) thunk events of {run['module']}, "
                f"{named} naming an instruction of the module, and no GPU kernel: hloidx's "
                "reader joins GPU kernels only, and CPU thunk times are no GPU times, so "
                "nothing is compared"
            )
        try:
            profile = read_profile(str(run["xplane"]), warmup)
            program = program_of(profile, module, str(run["hlo"]))
        except HloidxError as e:
            notes.append(f"not joined: {e}")
            profile = None
    target: Any = device
    if target is None and profile is not None:
        target = profile_device(profile)
    if target is None:
        target = "rtx-a6000"
        notes.append("the profile gives no GPU: estimates are for rtx-a6000 (--device to choose)")
    result["device"] = getattr(target, "name", target)
    for model in MODELS:
        report = estimate_module(module, target, model)
        figures: dict[str, Any] = {
            "kernel_rows": len(report.kernels),
            "step_estimate_ns": None if report.step is None else report.step.time_ns,
        }
        if profile is not None and program is not None:
            attach(report, module, profile, program)
            joined = report.measured
            figures.update(
                joined=len(joined.rows),
                accuracy=joined.accuracy,
                step_measured_ns=program.step_ns,
                executions=program.executions,
                warmup_dropped=program.warmup,
            )
            if model == MODELS[0]:
                notes.extend(joined.notes)
            for k in report.kernels:
                op = joined.rows.get(k.name)
                if op is not None:
                    spread = getattr(k, "exec_time_range_ns", None)
                    rows[model].append(
                        AccuracyRow(
                            k.exec_time_ns,
                            op.mean_ns,
                            False,
                            op.per_step,
                            None if spread is None else tuple(spread),
                        )
                    )
        else:
            figures["joined"] = 0
        result[model] = figures
    return result


# -- output -------------------------------------------------------------------------------


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def table(results: dict[str, dict[str, Any]], overall: dict[str, Any]) -> str:
    head = (
        "| program | model | joined / kernels | within 2x | spearman | median abs log2 "
        "| step est (us) | step measured (us) | est / measured |"
    )
    lines = [head, "|" + "---|" * 9]
    for name, r in results.items():
        for model in MODELS:
            f = r.get(model)
            if f is None:
                lines.append(f"| {name} | {model} | - | - | - | - | - | - | - |")
                continue
            a = f.get("accuracy", {})
            est, meas = f.get("step_estimate_ns"), f.get("step_measured_ns")
            ratio = est / meas if est and meas else None
            lines.append(
                f"| {name} | {model} | {f['joined']} / {f['kernel_rows']} "
                f"| {_fmt(a.get('within_2x'), '.1%')} | {_fmt(a.get('spearman'), '.3f')} "
                f"| {_fmt(a.get('median_abs_log2'), '.2f')} "
                f"| {_fmt(None if est is None else est / 1e3, '.1f')} "
                f"| {_fmt(None if meas is None else meas / 1e3, '.1f')} | {_fmt(ratio, '.2f')} |"
            )
    for model in MODELS:
        a, o = overall[model]["accuracy"], overall[model]
        est, meas = o["step_estimate_ns"], o["step_measured_ns"]
        lines.append(
            f"| all programs | {model} | {o['joined']} / {o['kernel_rows']} "
            f"| {_fmt(a.get('within_2x'), '.1%')} | {_fmt(a.get('spearman'), '.3f')} "
            f"| {_fmt(a.get('median_abs_log2'), '.2f')} "
            f"| {_fmt(None if est is None else est / 1e3, '.1f')} "
            f"| {_fmt(None if meas is None else meas / 1e3, '.1f')} "
            f"| {_fmt(est / meas if est and meas else None, '.2f')} |"
        )
    return "\n".join(lines)


def totals(results: dict[str, dict[str, Any]], rows: dict[str, list]) -> dict[str, Any]:
    """Per model: the accuracy of all joined kernels together, and the summed steps of the
    programs that have both an estimated and a measured step."""
    from hloidx.perf.accuracy import accuracy

    out = {}
    for model in MODELS:
        figures = [r[model] for r in results.values() if model in r]
        both = [f for f in figures if f.get("step_estimate_ns") and f.get("step_measured_ns")]
        out[model] = {
            "accuracy": accuracy(rows[model]) if rows[model] else {},
            "joined": sum(f.get("joined", 0) for f in figures),
            "kernel_rows": sum(f["kernel_rows"] for f in figures),
            "step_estimate_ns": sum(f["step_estimate_ns"] for f in both) if both else None,
            "step_measured_ns": sum(f["step_measured_ns"] for f in both) if both else None,
        }
    return out


# -- main ---------------------------------------------------------------------------------


def _gpu_backend() -> str | None:
    """The GPU platform jax runs on here, or None."""
    import jax

    try:
        devices = jax.devices()
    except RuntimeError:
        return None
    for d in devices:
        if d.platform in ("gpu", "cuda", "rocm"):
            return d.platform
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="profiled steps per program")
    parser.add_argument("--warmup-steps", type=int, default=3, help="steps before profiling")
    parser.add_argument("--warmup", type=int, default=None, help="profiled executions to drop")
    parser.add_argument("--programs", help="comma-separated names (scan or drift/scan)")
    parser.add_argument("--out", help="keep the dump and the profiles here")
    parser.add_argument("--device", help="estimate for this device, not the profile's GPU")
    parser.add_argument("--json", help="write the results as JSON to this file (- for stdout)")
    parser.add_argument("--dry-run", action="store_true", help="run on the CPU (for CI)")
    args = parser.parse_args(argv)
    if args.out:
        return run_all(args, Path(args.out), kept=True)
    with tempfile.TemporaryDirectory(prefix="gpu_truth_") as tmp:
        return run_all(args, Path(tmp), kept=False)


def run_all(args: argparse.Namespace, out: Path, kept: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    os.environ["XLA_FLAGS"] = (
        f"{os.environ.get('XLA_FLAGS', '')} --xla_dump_to={out / 'dump'} "
        "--xla_gpu_enable_command_buffer="
    ).strip()
    if args.dry_run:
        os.environ["JAX_PLATFORMS"] = "cpu"
    try:
        import jax
    except ImportError:
        print("gpu_truth: jax is not installed (pip install -e '.[jax]')", file=sys.stderr)
        return 2
    platform = "cpu (dry run)" if args.dry_run else _gpu_backend()
    if platform is None:
        print(
            "gpu_truth: no GPU here (jax.devices() has no gpu device); "
            "--dry-run runs the pipeline on the CPU",
            file=sys.stderr,
        )
        return 2
    chosen = programs(args.programs)
    results: dict[str, dict[str, Any]] = {}
    rows: dict[str, list] = {m: [] for m in MODELS}
    for name, (fn, fn_args) in chosen.items():
        try:
            run = run_program(name, fn, fn_args, out, args.steps, args.warmup_steps)
        except Exception as e:  # one program failing must not lose the rest
            results[name] = {"notes": [f"did not run: {type(e).__name__}: {e}"]}
            continue
        results[name] = analyse(run, args.device, args.warmup, rows)
    overall = totals(results, rows)
    doc = {
        "platform": platform,
        "jax": jax.__version__,
        "steps": args.steps,
        "warmup_steps": args.warmup_steps,
        "out": str(out) if kept else None,
        "programs": results,
        "all_programs": overall,
    }
    if args.json:
        text = json.dumps(doc, indent=1, default=str)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")
    if args.json != "-":
        where = f"dump and profiles in {out}" if kept else "--out DIR keeps dump and profiles"
        print(
            f"gpu_truth: {len(results)} programs on {platform}, jax {jax.__version__}, "
            f"{args.steps} profiled steps each after {args.warmup_steps} warm-up steps; "
            f"{where}\n"
        )
        if args.dry_run:
            print(
                "dry run: the modules are XLA:CPU's (its fusions, not a GPU's), estimated as if "
                "they ran on a GPU; nothing here was measured on a GPU\n"
            )
        print(table(results, overall))
        joined = sum(overall[m]["joined"] for m in MODELS)
        print(
            f"\njoined {overall[MODELS[0]]['joined']} of {overall[MODELS[0]]['kernel_rows']} "
            "kernel rows to measured GPU kernels (estimates are estimates; measured times "
            "are steady means per launch)"
        )
        if not joined:
            print("nothing was joined: no estimate is compared with a measurement")
        for name, r in results.items():
            for note in r.get("notes", []):
                print(f"  {name}: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
