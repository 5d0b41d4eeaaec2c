"""How long the Model Explorer adapter takes to convert a module (what Model Explorer waits for
before it draws): parse, analyse, graphs, Model Explorer's dataclasses and their JSON.

    python bench/bench_explorer.py [MODULE ...]

Without arguments it converts the largest module the repository carries (the A100 PAX step,
when tests/data/measured/pax_a100/module.hlo is there; else the largest sample).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _default() -> list[Path]:
    pax = ROOT / "tests" / "data" / "measured" / "pax_a100" / "module.hlo"
    if pax.is_file():
        return [pax]
    return [max((ROOT / "samples").rglob("*.hlo"), key=lambda p: p.stat().st_size)]


def main() -> None:
    paths = [Path(a) for a in sys.argv[1:]] or _default()
    from hloidx.model_explorer.convert import convert_file

    for path in paths:
        start = time.perf_counter()
        try:
            from model_explorer.utils import convert_adapter_response

            from hloidx.model_explorer.main import HloidxAdapter
        except ImportError:  # hloidx's part only
            document = convert_file(str(path))
            nodes = sum(len(g["nodes"]) for g in document["graphs"])
            took = time.perf_counter() - start
            print(f"{path.name}: {nodes} nodes; {took:.2f} s (Model Explorer not installed)")
            continue
        # what Model Explorer's server does with a convert command: the adapter, then the
        # response as JSON
        response = convert_adapter_response(HloidxAdapter().convert(str(path), {}))
        text = json.dumps(response)
        took = time.perf_counter() - start
        nodes = sum(len(g["nodes"]) for g in response["graphs"])
        print(
            f"{path.name}: {nodes} nodes in {len(response['graphs'])} graphs, {len(text) / 1e6:.1f} MB of JSON: {took:.2f} s"
        )


if __name__ == "__main__":
    main()
