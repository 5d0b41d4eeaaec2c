"""How fast ``parse_hlo`` reads the corpus, and how much memory it takes.

Run from the repository root: ``python bench/bench_parse.py [FILES...]`` (default: every
``tests/data/corpus/*.hlo``). Prints one markdown table: per file its size, instructions, best
wall time and CPU time over ``--repeat`` runs, MB/s (by wall and by CPU time: on a shared,
loaded machine the CPU figure is the stable one), instructions/s (by wall time), and the
peak memory traced by tracemalloc during one parse (as a multiple of the file size). When jaxlib
is importable it also times XLA's own C++ parser on the same text and prints the ratio.

Targets (issues 3 and 7): >= 2 MB/s on every corpus file, within 10x of XLA's parser, peak
memory <= 30x file size. ``--lark-only`` switches the line parser and the fast path off (lark's
contextual lexer and parser do all the work, as before either existed), for a before/after
comparison.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hloidx.hlo.syntax import parse_hlo  # noqa: E402

DEFAULT_CORPUS = ROOT / "tests" / "data" / "corpus"


def xla_parser() -> tuple[str, Callable[[str], object]] | None:
    """XLA's text parser as shipped in jaxlib, wherever this jaxlib version keeps it."""
    candidates = [
        ("jaxlib._hlo", "hlo_module_from_text"),
        ("jax._src.lib", "hlo.hlo_module_from_text"),
        ("jaxlib.xla_client", "_xla.hlo_module_from_text"),
        ("jaxlib.xla_extension", "hlo_module_from_text"),
    ]
    for module_name, attribute in candidates:
        try:
            target: object = __import__(module_name, fromlist=["_"])
            for part in attribute.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError):
            continue
        return f"{module_name}.{attribute}", target  # type: ignore[return-value]
    return None


def best_of(repeat: int, run: Callable[[], object]) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds) over ``repeat`` runs."""
    wall, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        run()
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def peak_memory(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        result = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--lark-only", action="store_true", help="time lark alone")
    options = parser.parse_args()
    if options.lark_only:
        from hloidx.hlo import syntax

        syntax._fast_parser = lambda: None
        syntax._whole_lines = lambda text, source: None
    files = options.files or sorted(DEFAULT_CORPUS.glob("*.hlo"))
    if not files:
        print(f"no HLO files given and none in {DEFAULT_CORPUS}", file=sys.stderr)
        return 2

    xla = xla_parser()
    parse_hlo("p = f32[] parameter(0)")  # build the parser outside the timings

    header = [
        "file",
        "KB",
        "instructions",
        "wall ms",
        "cpu ms",
        "MB/s",
        "MB/s (cpu)",
        "instr/s",
        "peak MB",
        "peak/size",
    ]
    if xla:
        header += ["XLA ms", "ours/XLA"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        size = len(text.encode("utf-8"))
        count = len(parse_hlo(text, str(path)).instructions())
        name = str(path)
        wall, cpu = best_of(options.repeat, lambda text=text, name=name: parse_hlo(text, name))
        peak = peak_memory(lambda text=text, name=name: parse_hlo(text, name))
        row = [
            path.name,
            f"{size / 1024:.0f}",
            str(count),
            f"{wall * 1e3:.1f}",
            f"{cpu * 1e3:.1f}",
            f"{size / wall / 1e6:.2f}",
            f"{size / cpu / 1e6:.2f}",
            f"{count / wall:,.0f}",
            f"{peak / 1e6:.1f}",
            f"{peak / size:.1f}x",
        ]
        if xla:
            xla_wall, _ = best_of(options.repeat, lambda text=text: xla[1](text))
            row += [f"{xla_wall * 1e3:.1f}", f"{wall / xla_wall:.1f}x"]
        print("| " + " | ".join(row) + " |")
    if xla:
        print(f"\nXLA's parser: {xla[0]}")
    else:
        print("\n(jaxlib not importable: no comparison with XLA's parser)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
