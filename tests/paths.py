"""Where the tests' data lives: inside the repository, never beside it (see tests/data/README.md)."""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
XLA_TESTS = DATA / "xla"
CORPUS = DATA / "corpus"
SEEDS = DATA / "seeds"
SAMPLES = ROOT / "samples"


def xla_map_texts() -> list[str]:
    """Every map text of XLA's expectations (``map_cases.json``, ``analysis_cases.json``):
    each instruction's map and its operands' maps, in file order."""
    texts = []
    for name in ("map_cases.json", "analysis_cases.json"):
        for case in json.loads((XLA_TESTS / name).read_text()):
            for entry in case.get("expected", []):
                for text in [entry.get("map_normalized")] + [
                    o.get("map_normalized") for o in entry.get("operands", [])
                ]:
                    if text and "->" in text and not text.startswith("operand"):
                        texts.append(text)
    return texts
