"""Invalid HLO is rejected with a location, and nothing else in the file is lost.

Every mutation of ``tests/mutations.py`` breaks one instruction of a valid module in a way XLA
rejects. hloidx must exit 2 with ``file:line:col`` on the mutated line, and still report every
instruction that does not depend on the broken one. What XLA itself says of each mutation is
recorded in ``tests/data/mutations/xla_verdicts.json`` (regenerated with jaxlib by
``tests/data/mutations/check_with_xla.py``); when jaxlib is installed, a sample is checked again
here, each in its own process, since XLA aborts on some invalid modules.
"""

from __future__ import annotations

import json
import subprocess
import sys

import paths
import pytest
from click.testing import CliRunner
from mutations import Mutation, generate

import hloidx
from hloidx.cli import cli
from hloidx.hlo.ir import HloModule, Instruction

MUTATIONS = generate()
VERDICTS = paths.DATA / "mutations" / "xla_verdicts.json"


def test_enough_mutations_of_every_kind() -> None:
    assert len(MUTATIONS) >= 200
    kinds = {m.kind for m in MUTATIONS}
    assert kinds == {"result-shape", "opcode", "slice-range", "dimension", "operand-count", "cut"}
    assert sum(m.kind == "cut" for m in MUTATIONS) >= 30


def _survivors(module: HloModule, broken: Instruction) -> set[str]:
    """Names of the instructions that do not depend on ``broken`` (computed on the original)."""
    lost: set[int] = {id(broken)}
    rootless: set[str] = set()
    changed = True
    while changed:
        changed = False
        for comp in module.computations.values():
            for instr in comp.instructions:
                if id(instr) in lost:
                    continue
                calls = {c.name for cs in instr.called_computations.values() for c in cs}
                if any(id(o) in lost for o in instr.operands) or calls & rootless:
                    lost.add(id(instr))
                    changed = True
            if comp.root is not None and id(comp.root) in lost and comp.name not in rootless:
                rootless.add(comp.name)
                changed = True
    return {f"{i.computation.name}/{i.name}" for i in module.instructions() if id(i) not in lost}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.key)
def test_mutation_is_a_located_error_and_the_rest_survives(tmp_path, mutation: Mutation) -> None:
    path = tmp_path / "mutated.hlo"
    path.write_text(mutation.text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "json", "--no-verify"])
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    lines = {e["line"] for e in doc["errors"] if "line" in e}
    assert mutation.line in lines, (mutation.key, doc["errors"])
    assert all("location" in e for e in doc["errors"])
    original = hloidx.parse_hlo((paths.ROOT / mutation.source).read_text(encoding="utf-8"))
    (broken,) = [i for i in original.instructions() if i.name == mutation.instruction][:1]
    reported = {f"{i['computation']}/{i['name']}" for i in doc["instructions"]}
    if mutation.kind == "cut":  # what was written whole before the cut is analysed
        survivors = {
            f"{i.computation.name}/{i.name}"
            for i in original.instructions()
            if i.span is not None and i.span.end < broken.span.start
        }
    else:
        survivors = _survivors(original, broken)
    missing = survivors - reported
    assert not missing, f"{mutation.key}: lost {sorted(missing)[:5]}"


def test_xla_agrees_that_every_mutation_is_invalid() -> None:
    recorded = json.loads(VERDICTS.read_text(encoding="utf-8"))
    verdicts = recorded["verdicts"]
    # a file cut off inside an operand list is no module at all, for XLA as for hloidx
    keys = {m.key for m in MUTATIONS if m.kind != "cut"}
    assert keys <= set(verdicts), "regenerate tests/data/mutations/xla_verdicts.json"
    # "rejected": XLA refused the mutation; "inconclusive": XLA cannot compile the original
    # either (a layout or a custom-call the CPU backend lacks), so it says nothing here
    accepted = sorted(k for k in keys if verdicts[k] == "accepted")
    assert not accepted, f"XLA accepts mutations hloidx rejects: {accepted[:5]}"
    rejected = sum(verdicts[k] == "rejected" for k in keys)
    assert rejected >= 200


def test_xla_verdicts_reproduce_on_a_sample() -> None:
    pytest.importorskip("jaxlib", reason="XLA's own checks need jaxlib (optional)")
    script = paths.DATA / "mutations" / "check_with_xla.py"
    recorded = json.loads(VERDICTS.read_text(encoding="utf-8"))["verdicts"]
    for mutation in MUTATIONS[:: max(len(MUTATIONS) // 6, 1)][:6]:
        done = subprocess.run(
            [sys.executable, str(script), "--one", mutation.key],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=paths.ROOT,
        )
        assert done.stdout.strip().splitlines()[-1] == recorded[mutation.key], done.stderr[-500:]
