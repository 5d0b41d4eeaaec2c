"""hloidx against XLA's own C++ parser, side by side in one run, and the start-up figures.

Two tables (issue 38):

* **ratio**: for each benchmark step of ``bench/data`` (and any file given), the wall time of
  a whole ``hloidx maps FILE --format json`` in a fresh process, and of XLA's C++ parser
  reading the same text (jaxlib's ``hlo_module_from_text``, timed inside one Python process
  that has jax: ``--jax-python``, default this interpreter). The two alternate, round after
  round, so a load that comes and goes on a shared machine falls on both; the medians are
  compared. Without jax, the table says so and gives hloidx's times alone.
* **start-up**: medians of ``--runs`` fresh processes (alternating) of ``python -c pass``,
  ``python -c "import click"``, ``hloidx --version``, ``hloidx simplify MAP`` and ``hloidx maps``
  on a 22-instruction snippet, with the margin over ``import click`` (the target: 0.04 s).

Each figure is given twice: wall time, and CPU time (user + system: of the child process for
hloidx and the start-up rows, of the parse alone for XLA). On a shared machine the wall time
moves with the other work on it, the CPU time much less; the ratio of CPU times is the one to
compare across runs. The load average is printed with the figures: quote it with them.

    python bench/bench_ratio.py                      # the steps and the start-up
    python bench/bench_ratio.py --rounds 5 --jax-python PYTHON_WITH_JAX
    python bench/bench_ratio.py --skip-ratio         # start-up alone
    python bench/bench_ratio.py --tree /tmp/base     # the hloidx of another checkout
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNIPPET = ROOT / "tests" / "data" / "startup" / "snippet.hlo"
MAP = "(d0, d1) -> (d0 floordiv 4, d0 mod 4 + d1 * 3), domain: d0 in [0, 15], d1 in [0, 7]"

# Runs inside the Python that has jax: reads the file once, then times the parse alone.
_XLA_TIMER = """
import sys, time
text = open(sys.argv[1]).read()
parse = None
for module_name, attribute in [
    ("jaxlib._hlo", "hlo_module_from_text"),
    ("jax._src.lib", "hlo.hlo_module_from_text"),
    ("jaxlib.xla_client", "_xla.hlo_module_from_text"),
    ("jaxlib.xla_extension", "hlo_module_from_text"),
]:
    try:
        target = __import__(module_name, fromlist=["_"])
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError):
        continue
    parse = target
    break
if parse is None:
    print("none")
    raise SystemExit
parse(text)  # warm: the first call loads XLA's libraries
t, c = time.perf_counter(), time.process_time()
parse(text)
print(time.perf_counter() - t, time.process_time() - c)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``command``, in the checkout timed
    (``python -m`` reads the working directory's package first)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=env["PYTHONPATH"],
        check=True,
    )
    return time.perf_counter() - start, _children_cpu() - cpu


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def startup(runs: int, env: dict[str, str]) -> None:
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        'python -c "import click"': [py, "-c", "import click"],
        "hloidx --version": [py, "-m", "hloidx", "--version"],
        "hloidx simplify MAP": [py, "-m", "hloidx", "simplify", MAP],
        "hloidx maps snippet (22 instructions)": [py, "-m", "hloidx", "maps", str(SNIPPET)],
        "hloidx maps snippet --format json": [
            *(py, "-m", "hloidx", "maps", str(SNIPPET)),
            *("--format", "json"),
        ],
    }
    for command in commands.values():  # bytecode compiled before anything is timed
        timed(command, env)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(timed(command, env))
    medians = {
        name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for name, values in times.items()
    }
    click_wall, click_cpu = medians['python -c "import click"']
    print(f"\n### start-up (median of {runs} fresh processes; load average {load()})\n")
    print("| command | wall s | above `import click` | CPU s | above `import click` |")
    print("|---|---:|---:|---:|---:|")
    for name, (median_wall, median_cpu) in medians.items():
        above_wall = above_cpu = ""
        if name.startswith("hloidx"):
            above_wall = f"{median_wall - click_wall:+.3f}"
            above_cpu = f"{median_cpu - click_cpu:+.3f}"
        print(f"| `{name}` | {median_wall:.3f} | {above_wall} | {median_cpu:.3f} | {above_cpu} |")


def ratio(files: list[tuple[str, Path]], rounds: int, jax_python: str, env: dict) -> None:
    print(f"\n### `hloidx maps FILE --format json` ÷ XLA's C++ parse (load average {load()})\n")
    probe = subprocess.run(
        [jax_python, "-c", "import jax; print(jax.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    jax_version = probe.stdout.strip() if probe.returncode == 0 else None
    if jax_version is None:
        print(f"jax is not installed for {jax_python}: hloidx's times alone, no ratio.\n")
    print(
        "| file | instructions | hloidx wall s | XLA wall s | ratio (wall) "
        "| hloidx CPU s | XLA CPU s | ratio (CPU) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, path in files:
        ours: list[tuple[float, float]] = []
        theirs: list[tuple[float, float]] = []
        for _ in range(rounds):
            ours.append(
                timed([sys.executable, "-m", "hloidx", "maps", str(path), "--format", "json"], env)
            )
            if jax_version is not None:
                out = subprocess.run(
                    [jax_python, "-c", _XLA_TIMER, str(path)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
                if out != "none":
                    wall_s, cpu_s = out.split()
                    theirs.append((float(wall_s), float(cpu_s)))
        count = sum(1 for line in path.read_text().splitlines() if " = " in line)
        mine = [statistics.median(t[i] for t in ours) for i in (0, 1)]
        if theirs:
            xla = [statistics.median(t[i] for t in theirs) for i in (0, 1)]
            print(
                f"| {name} | {count:,} | {mine[0]:.2f} | {xla[0]:.3f} | {mine[0] / xla[0]:.1f}× "
                f"| {mine[1]:.2f} | {xla[1]:.3f} | {mine[1] / xla[1]:.1f}× |"
            )
        else:
            print(f"| {name} | {count:,} | {mine[0]:.2f} | n/a | n/a | {mine[1]:.2f} | n/a | n/a |")
    if jax_version is not None:
        print(f"\nXLA's parser: jaxlib {jax_version} (`hlo_module_from_text`, warm, in-process)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="more HLO files for the ratio")
    parser.add_argument("--rounds", type=int, default=3, help="alternations per file")
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per start-up row")
    parser.add_argument("--jax-python", default=sys.executable, help="a Python that has jax")
    parser.add_argument("--skip-ratio", action="store_true")
    parser.add_argument("--skip-startup", action="store_true")
    parser.add_argument("--steps", default="*", help="glob over bench/data/*.hlo.gz names")
    parser.add_argument("--tree", type=Path, default=ROOT, help="time this checkout's hloidx")
    options = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(options.tree.resolve())}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # start-up is measured with bytecode cached
    print(f"python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    if not options.skip_startup:
        startup(options.runs, env)
    if options.skip_ratio:
        return
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for gz in sorted((ROOT / "bench" / "data").glob(f"{options.steps}.hlo.gz")):
            plain = Path(tmp) / gz.name.removesuffix(".gz")
            plain.write_bytes(gzip.decompress(gz.read_bytes()))
            files.append((plain.name, plain))
        files += [(f.name, f) for f in options.files]
        ratio(files, options.rounds, options.jax_python, env)


if __name__ == "__main__":
    main()
