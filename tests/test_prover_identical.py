"""The prover settles an identity whose two sides have the same canonical terms without SymPy,
and still proves what it proved before (a fresh process, so SymPy's import is observable)."""

from __future__ import annotations

import subprocess
import sys

from hloidx.maps.equivalence import verify
from hloidx.maps.expr import add, dim, floordiv, mod, mul
from hloidx.maps.indexing_map import IndexingMap
from tests.paths import ROOT


def _split_and_joined() -> tuple[IndexingMap, IndexingMap]:
    """``d0 floordiv 4 * 4 + d0 mod 4`` against ``d0``: equal, by the case split's algebra."""
    original = IndexingMap.build([add(mul(floordiv(dim(0), 4), 4), mod(dim(0), 4))], (16,))
    return original, IndexingMap.build([dim(0)], (16,))


def test_identical_terms_are_proved_and_counted() -> None:
    verdict = verify(*_split_and_joined())
    assert verdict.kind == "proved"
    assert "1 identities with the same terms on both sides, 0 confirmed by SymPy" in verdict.detail


def test_a_proof_with_identical_terms_does_not_import_sympy() -> None:
    script = (
        "import sys\n"
        "from tests.test_prover_identical import _split_and_joined\n"
        "from hloidx.maps.equivalence import verify\n"
        "print(verify(*_split_and_joined()).kind, 'sympy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["proved", "False"]


def test_differing_terms_still_go_to_sympy(monkeypatch) -> None:
    """A pair whose terms differ in form (a zero coefficient kept on one side) is judged by
    SymPy, not waved through."""
    from hloidx.maps import prover

    calls = []

    def judge(a, b):
        calls.append((a, b))
        return True

    monkeypatch.setattr(prover, "_sympy_identity", judge)
    real_key = prover._pkey
    seen = []

    def key(p):  # the left side keeps a zero term: same polynomial, different terms
        seen.append(p)
        return real_key({**p, (99,): 0} if len(seen) % 2 else p)

    monkeypatch.setattr(prover, "_pkey", key)
    verdict = verify(*_split_and_joined(), seed=1)  # a fresh memo entry
    assert verdict.kind == "proved"
    assert calls
