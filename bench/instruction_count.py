"""Machine instructions per map of a cold parse, simplify or parse + simplify + print, counted
by valgrind's callgrind: unlike any clock on a shared host, the count is the same from run to
run (with a fixed hash seed), so a change of a few percent shows.

The maps are those of ``bench/bench_simplify.py`` (the corpus, or ``--chains``). Each count is
a run doing the work less a run doing everything but the work (imports, reading the maps,
clearing the caches), divided by the number of maps: what the work alone costs.

    python bench/instruction_count.py [--what parse|simplify|e2e] [--chains] [--maps N]

Needs ``valgrind`` on the PATH; a run takes a minute or two.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _work(what: str, chains: bool, maps: int, dry: bool) -> None:
    """Run inside valgrind: the work on each map, cold (or, when ``dry``, all but the work)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_simplify import chain_entries
    from map_corpus import corpus

    from hloidx.maps.printer import format_map
    from hloidx.maps.simplify import clear_caches, simplify
    from hloidx.maps.syntax import parse_map

    entries = (chain_entries() if chains else corpus())[:maps]
    texts = [format_map(e.original) + " " for e in entries]
    originals = [e.original for e in entries]
    print(len(entries))
    clear_caches()
    for text, original in zip(texts, originals, strict=True):
        clear_caches()
        if dry:
            continue
        if what == "parse":
            parse_map(text)
        elif what == "simplify":
            simplify(original)
        else:
            format_map(simplify(parse_map(text)))


def _count(args: argparse.Namespace, dry: bool) -> tuple[int, int]:
    """The instructions of one run, and the number of maps it ran on."""
    command = [sys.executable, __file__, "--inside", "--what", args.what, "--maps", str(args.maps)]
    if args.chains:
        command.append("--chains")
    if dry:
        command.append("--dry")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=True,
        )
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1)), int(done.stdout.split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--what", choices=("parse", "simplify", "e2e"), default="e2e")
    parser.add_argument("--chains", action="store_true")
    parser.add_argument("--maps", type=int, default=10_000, help="the first N maps only")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dry", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        _work(args.what, args.chains, args.maps, args.dry)
        return
    (work, count), (dry, _) = _count(args, dry=False), _count(args, dry=True)
    print(
        f"{args.what} ({'chains' if args.chains else 'corpus'}, {count} maps): "
        f"{(work - dry) / count:,.0f} instructions per map"
    )


if __name__ == "__main__":
    main()
