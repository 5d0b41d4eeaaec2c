"""Where the tests' data lives: inside the repository, never beside it (see tests/data/README.md)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
XLA_TESTS = DATA / "xla"
CORPUS = DATA / "corpus"
SEEDS = DATA / "seeds"
SAMPLES = ROOT / "samples"
