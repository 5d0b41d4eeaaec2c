"""How often a map that XLA printed already simplified comes back character for character.

    python bench/canonical_forms.py            # counts per source
    python bench/canonical_forms.py --show     # and every map that changes

Sources: the expected maps of XLA's tests (`tests/data/xla/`, printed by XLA with `/` for
floor division) and the maps of the seed documents (`tests/data/seeds/`, older XLA, printed with
`floordiv`). A map counts when hloidx parses it; "printed back" is parse then print, "simplified
back" is parse, simplify, print.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hloidx.errors import HloidxError  # noqa: E402
from hloidx.maps.map_simplify import simplify  # noqa: E402
from hloidx.maps.printer import format_map  # noqa: E402
from hloidx.maps.syntax import parse_map  # noqa: E402


def xla_maps() -> list[tuple[str, str]]:
    out = []
    for name in ("map_cases.json", "analysis_cases.json"):
        for case in json.loads((ROOT / "tests" / "data" / "xla" / name).read_text()):
            for entry in case.get("expected", []):
                texts = [entry.get("map_normalized")] + [
                    o.get("map_normalized") for o in entry.get("operands", [])
                ]
                for text in texts:
                    if text and "domain" in text:
                        out.append((f"xla:{case['test']}", text))
    return out


_SEED_MAP = re.compile(r"^\s*(\([^\n]*?\)(?:\[[^\n]*?\])? -> \([^\n]*?\)),?\s*$", re.M)


def seed_maps() -> list[tuple[str, str]]:
    """Maps printed over several lines in the seeds: `(d0) -> (...)`, `domain:`, one bound a
    line; joined into XLA's one-line form."""
    out = []
    for path in sorted((ROOT / "tests" / "data" / "seeds").glob("*.txt")):
        lines = path.read_text().splitlines()
        for k, line in enumerate(lines):
            if not re.match(r"^\s*\(.*\)(\[.*\])? -> \(.*\),?\s*$", line):
                continue
            if k + 1 >= len(lines) or lines[k + 1].strip() != "domain:":
                continue
            bounds = []
            for follow in lines[k + 2 :]:
                if not re.match(r"^\s*\S.* in \[-?\d+, -?\d+\],?\s*$", follow):
                    break
                bounds.append(follow.strip().rstrip(","))
            head = line.strip().rstrip(",")
            out.append((f"seed:{path.name[:3]}", f"{head}, domain: {', '.join(bounds)}"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    for label, maps, spelling in (
        ("XLA tests", xla_maps(), "/"),
        ("seeds", seed_maps(), "floordiv"),
    ):
        seen: set[str] = set()
        parsed = printed = simplified = kept = 0
        changed = []
        for where, text in maps:
            if text in seen:
                continue
            seen.add(text)
            try:
                m = parse_map(text, where)
            except HloidxError:
                continue
            parsed += 1
            if format_map(m, spelling) == text:
                printed += 1
            again = format_map(simplify(m), spelling)
            if again == text:
                simplified += 1
            as_cli = format_map(simplify(m, keep_order=True), spelling)
            if as_cli == text:
                kept += 1
            else:
                changed.append((where, text, as_cli))
        print(
            f"{label}: {parsed} distinct maps parsed; printed back unchanged {printed}; "
            f"simplified back unchanged {simplified} in canonical order, {kept} as "
            "`hloidx simplify` prints them (sums the simplifier left alone keep their order)"
        )
        if args.show:
            for where, text, again in changed:
                print(f"  {where}\n    XLA:    {text}\n    hloidx: {again}")


if __name__ == "__main__":
    main()
