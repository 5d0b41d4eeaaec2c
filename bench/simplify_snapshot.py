"""Snapshot every simplification result, to prove a performance change changes no result.

Writes one text file with, for each map of the simplifier corpus (``bench/map_corpus.py``),
the printed ``simplify`` result, the ``simplify_with_rules`` rule names and the
``remove_unused`` result; and, for each corpus HLO module, the ``hloidx maps`` JSON document
(maps, utilization, optionally verdicts). Run it before and after a change and diff:

    python bench/simplify_snapshot.py /tmp/before.txt
    ... change ...
    python bench/simplify_snapshot.py /tmp/after.txt --compare /tmp/before.txt

``--modules`` picks which corpus modules to analyse (glob, default ``*.hlo``); ``--verify``
also records verdicts (slower).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from map_corpus import corpus  # noqa: E402

from hloidx.maps.printer import format_map  # noqa: E402
from hloidx.maps.simplify import simplify, simplify_with_rules  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "corpus"


def corpus_lines() -> list[str]:
    lines = []
    for entry in corpus():
        got = simplify(entry.original)
        trimmed = simplify(entry.original, remove_unused=True)
        with_rules, rules = simplify_with_rules(entry.original)
        lines.append(f"MAP {entry.name}\n  {format_map(got)}\n  {format_map(trimmed)}")
        lines.append(f"  rules {[r.name for r in rules]} {format_map(with_rules)}")
        for r in rules:
            lines.append(f"    {r.name}: {r.before} => {r.after}")
    return lines


def module_lines(pattern: str, verify: bool) -> list[str]:
    from hloidx.hlo.analysis import analyze
    from hloidx.hlo.report import module_to_json
    from hloidx.hlo.syntax import parse_hlo

    lines = []
    for path in sorted(CORPUS.glob(pattern)):
        try:
            module = parse_hlo(path.read_text(encoding="utf-8"), str(path))
        except Exception as error:
            lines.append(f"MODULE {path.name} parse error {type(error).__name__}")
            continue
        doc = module_to_json(analyze(module, verify=verify))
        lines.append(f"MODULE {path.name}")
        lines.extend(json.dumps(i, sort_keys=True) for i in doc["instructions"])
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--compare")
    parser.add_argument("--modules", default="*.hlo")
    parser.add_argument("--verify", action="store_true")
    args = parser.parse_args()
    text = "\n".join(corpus_lines() + module_lines(args.modules, args.verify)) + "\n"
    Path(args.output).write_text(text, encoding="utf-8")
    lines = text.splitlines()
    print(f"{len(lines)} lines written to {args.output}")
    if args.compare:
        before = Path(args.compare).read_text(encoding="utf-8").splitlines()
        diff = list(difflib.unified_diff(before, lines, "before", "after", lineterm="", n=1))
        if diff:
            print("\n".join(diff[:200]))
            sys.exit(f"{len(diff)} diff lines: results changed")
        print("identical")


if __name__ == "__main__":
    main()
