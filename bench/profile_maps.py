"""Profile the analysis phase of ``hloidx maps`` on one module: phase split and top functions.

Parses the module (timed, not profiled: parsing has its own benchmark), then runs the
analysis and the JSON report under cProfile and prints the time of each phase and the
functions with the most cumulative and own time.

    python bench/profile_maps.py FILE [--verify] [--top 30] [--sort tottime|cumulative]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hloidx.cli.collector import RELAXED  # noqa: E402
from hloidx.hlo.analysis import analyze  # noqa: E402
from hloidx.hlo.report import module_to_json  # noqa: E402
from hloidx.hlo.syntax import parse_hlo  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--verify", action="store_true")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="tottime", choices=["tottime", "cumulative"])
    parser.add_argument("--no-profile", action="store_true", help="phase times only")
    args = parser.parse_args()

    text = Path(args.file).read_text(encoding="utf-8")
    # the collector's thresholds `hloidx maps` runs with (hloidx/cli/collector.py)
    gc.set_threshold(*RELAXED)
    t0 = time.perf_counter()
    module = parse_hlo(text, args.file)
    t1 = time.perf_counter()
    profiler = cProfile.Profile()
    if not args.no_profile:
        profiler.enable()
    analysis = analyze(module, verify=args.verify)
    t2 = time.perf_counter()
    doc = module_to_json(analysis)
    t3 = time.perf_counter()
    if not args.no_profile:
        profiler.disable()
    json.dumps(doc)
    t4 = time.perf_counter()
    n = len(analysis.instructions)
    print(
        f"{n} instructions: parse {t1 - t0:.2f} s, analysis {t2 - t1:.2f} s, "
        f"report {t3 - t2:.2f} s, json.dumps {t4 - t3:.2f} s; "
        f"{n / (t4 - t0):,.0f} instructions/s end to end"
        + (" (profiled: slower than real)" if not args.no_profile else "")
    )
    if args.no_profile:
        return
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()
