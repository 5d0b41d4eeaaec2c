"""``bench/gpu_truth.py``: the corpus programs under the JAX profiler, both models' accuracy.

No GPU runs in CI, so: ``--dry-run`` runs the whole pipeline on the CPU (compile with an XLA
dump, profile, read the xplane, estimate, join: nothing joins, and the output says so); without
``--dry-run`` and without a GPU, one line and exit 2; and the GPU half of the pipeline (read a
GPU xplane, join, accuracy) on the real MI300X profile ``tw003.xplane.pb``, its figures
recomputed here from their definitions."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import paths
import pytest

pytest.importorskip("google.protobuf", reason="reading profiles needs hloidx[profile]")

SCRIPT = paths.ROOT / "bench" / "gpu_truth.py"
TW003 = paths.ROOT / "tests" / "data" / "measured" / "xplane" / "tw003.xplane.pb"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    base["PYTHONPATH"] = str(paths.ROOT)
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **(env or {})},
        cwd=paths.ROOT,
    )


def test_dry_run_runs_the_pipeline_on_the_cpu_and_says_nothing_joined(tmp_path) -> None:
    pytest.importorskip("jax", reason="the bench runs JAX programs: jax is not installed")
    out = tmp_path / "out.json"
    steps = 3
    result = _run(
        "--dry-run",
        "--programs",
        "drift/argmax",
        "--steps",
        str(steps),
        "--warmup-steps",
        "1",
        "--out",
        str(tmp_path / "run"),
        "--json",
        str(out),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["platform"] == "cpu (dry run)"
    argmax = doc["programs"]["drift/argmax"]
    assert argmax["module"] == "jit_argmax"
    # XLA wrote the optimized module to the dump, the profiler an xplane
    assert argmax["hlo"].endswith("jit_argmax.cpu_after_optimizations.txt")
    assert (tmp_path / "run" / "dump" / argmax["hlo"]).is_file()
    assert Path(argmax["xplane"]).name.endswith(".xplane.pb")
    for model in ("hloidx", "xla"):
        assert argmax[model]["joined"] == 0
        assert argmax[model]["kernel_rows"] >= 1
        assert argmax[model]["step_estimate_ns"] > 0
        assert "accuracy" not in argmax[model]
    notes = " ".join(argmax["notes"])
    assert "no GPU kernel" in notes
    # each profiled step ran the same CPU thunks: their count is a multiple of the steps
    host = next(n for n in argmax["notes"] if "host (CPU) thunk events" in n)
    count = int(host.split("the profile has ")[1].split()[0])
    assert count > 0
    assert count % steps == 0
    assert "nothing was joined" in result.stdout
    assert "| drift/argmax | hloidx | 0 / " in result.stdout


def test_without_a_gpu_it_says_so_in_one_line_and_exits_2() -> None:
    pytest.importorskip("jax", reason="the bench runs JAX programs: jax is not installed")
    result = _run("--programs", "drift/argmax", env={"JAX_PLATFORMS": "cpu"})
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "no GPU" in lines[0]
    assert "--dry-run" in lines[0]


def _bench():
    spec = importlib.util.spec_from_file_location("gpu_truth", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_gpu_profile_joins_and_the_figures_follow_their_definitions(tmp_path) -> None:
    """The GPU half of the pipeline on a real GPU profile (8 MI300X, 5 runs of a 3-D conv):
    the module text as a dump file beside it, as XLA would have written it."""
    from hloidx.hlo.proto_text import module_proto_text
    from hloidx.perf.measured_source import carried_proto
    from hloidx.profiles import read_profile

    gpu_truth = _bench()
    profile = read_profile(str(TW003))
    program = profile.program_for("jit_forward_3d_conv", 15)
    hlo = tmp_path / "module_0015.jit_forward_3d_conv.gfx942_gpu_after_optimizations.txt"
    hlo.write_text(module_proto_text(carried_proto(profile, program)))
    rows: dict[str, list] = {"hloidx": [], "xla": []}
    run = {"module": "jit_forward_3d_conv", "hlo": hlo, "xplane": TW003}
    result = gpu_truth.analyse(run, None, None, rows)
    assert result["profile_events"]["/device:GPU:3"] == 25  # 5 runs x 5 kernels
    for model in ("hloidx", "xla"):
        figures = result[model]
        # the module's four kernel instructions (two transposes, a copy, the convolution)
        assert figures["joined"] == 4
        assert figures["kernel_rows"] == 4
        assert len(rows[model]) == 4
        # within_2x by its definition: share of measured time whose estimate is within 2x
        total = sum(r.measured_ns * r.launches for r in rows[model])
        near = sum(
            r.measured_ns * r.launches
            for r in rows[model]
            if 0.5 <= r.estimate_ns / r.measured_ns <= 2.0
        )
        assert figures["accuracy"]["within_2x"] == pytest.approx(near / total, abs=1e-4)
        # one program: the figures over all programs are its own
        overall = gpu_truth.totals({"tw003": result}, rows)[model]
        assert overall["accuracy"]["within_2x"] == pytest.approx(near / total, abs=1e-4)
        assert overall["step_measured_ns"] == figures["step_measured_ns"]
    table = gpu_truth.table({"tw003": result}, gpu_truth.totals({"tw003": result}, rows))
    assert "| tw003 | hloidx | 4 / 4 |" in table
    assert "| all programs | xla | 4 / 4 |" in table


def test_the_dump_file_of_a_module_as_xla_gpu_names_it(tmp_path) -> None:
    """XLA:GPU writes ``module_NNNN.<name>.<target>_gpu_after_optimizations.txt`` (sm_8.0,
    gfx942: a dot inside the target), and other files beside it."""
    gpu_truth = _bench()
    for name in (
        "module_0004.jit_scan.sm_8.0_gpu_after_optimizations.txt",
        "module_0004.jit_scan.sm_8.0_gpu_after_optimizations-buffer-assignment.txt",
        "module_0004.jit_scan.before_optimizations.txt",
        "module_0005.jit_scan2.gfx942_gpu_after_optimizations.txt",
    ):
        (tmp_path / name).write_text("")
    found = gpu_truth._dump_file(tmp_path, set(), "jit_scan")
    assert found.name == "module_0004.jit_scan.sm_8.0_gpu_after_optimizations.txt"
    assert gpu_truth._dump_file(tmp_path, {found}, "jit_scan") is None
