"""Run every benchmark and append their tables, with the date and machine, to bench/RESULTS.md.

    python bench/run_all.py            # everything (JAX-generated modules when jax is installed)
    python bench/run_all.py --quick    # corpus only, no JAX models

The benchmarks are scripts, not timed tests: figures depend on the machine and its load.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    ("parse throughput (and XLA's C++ parser when jax is installed)", "bench_parse.py", []),
    ("simplify and verify over the map benchmark", "bench_simplify.py", []),
    ("fusion composition over the corpus", "bench_fusion.py", []),
    ("hloidx maps end to end, and how the cost grows", "bench_maps.py", []),
    ("hloidx from the shell, as a user sees it", "bench_cli.py", []),
    ("symbolic tiling over the corpus", "bench_tile.py", []),
]


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}, load {load:.1f} at start"
    )


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    sections = [f"\n## {time.strftime('%Y-%m-%d %H:%M')} — {machine()}\n"]
    for title, script, args in SCRIPTS:
        extra = ["--quick"] if quick and script == "bench_maps.py" else []
        if quick and script == "bench_cli.py":
            extra = ["--layers", "0"]
        print(f"running {script} ...", file=sys.stderr, flush=True)
        done = subprocess.run(
            [sys.executable, str(HERE / script), *args, *extra],
            capture_output=True,
            text=True,
            check=False,
        )
        body = done.stdout.strip() or f"(no output; exit {done.returncode})\n{done.stderr[-2000:]}"
        sections.append(f"### {title} (`bench/{script}`)\n\n{body}\n")
        print(body)
    with open(HERE / "RESULTS.md", "a", encoding="utf-8") as handle:
        handle.write("\n".join(sections))
    print(f"appended to {HERE / 'RESULTS.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
