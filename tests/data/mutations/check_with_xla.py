"""What XLA itself says of every mutation in tests/mutations.py (needs jax/jaxlib).

For each mutated module: XLA parses it (``jaxlib._hlo.hlo_module_from_text``) and compiles it for
the CPU (which runs XLA's verifiers). A mutation is ``rejected`` when XLA refuses it (an error,
or an abort: XLA aborts the process on some invalid modules, so modules run in a child process
that is restarted after a crash) while it compiles the original module; ``accepted`` when XLA
compiles it; ``inconclusive`` when XLA cannot compile the original either.

    python tests/data/mutations/check_with_xla.py            # rewrite xla_verdicts.json
    python tests/data/mutations/check_with_xla.py --one KEY  # print one verdict
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
OUT = Path(__file__).with_name("xla_verdicts.json")


def _compiles(text: str) -> bool:
    import jax
    from jax._src.lib import xla_client as xc
    from jaxlib import _hlo

    try:
        module = _hlo.hlo_module_from_text(text)
        mlir = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
        client = jax.devices("cpu")[0].client
        compile_fn = getattr(client, "compile_and_load", None) or client.compile
        compile_fn(mlir, xc.DeviceList(tuple(jax.devices("cpu")[:1])), xc.CompileOptions())
    except Exception:
        return False
    return True


def _child(batch: str) -> None:
    """Compile each (key, text) of the JSON file ``batch``; print 'KEY\tok|fail' after each."""
    for key, text in json.loads(Path(batch).read_text(encoding="utf-8")):
        print(f"{key}\t{'ok' if _compiles(text) else 'fail'}", flush=True)


def _run_all(items: list[tuple[str, str]]) -> dict[str, str]:
    """key -> "ok" | "fail" | "abort", in child processes restarted after each abort."""
    import tempfile

    results: dict[str, str] = {}
    pending = list(items)
    while pending:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as batch:
            json.dump(pending, batch)
        done = subprocess.run(
            [sys.executable, __file__, "--child", batch.name],
            capture_output=True,
            text=True,
        )
        Path(batch.name).unlink()
        for line in done.stdout.splitlines():
            key, verdict = line.split("\t")
            results[key] = verdict
        pending = [(k, t) for k, t in pending if k not in results]
        if pending:  # the child died on pending[0]: XLA aborted on that module
            results[pending[0][0]] = "abort"
            pending = pending[1:]
    return results


def verdicts(selected: list | None = None) -> dict[str, str]:
    from mutations import generate

    mutations = [m for m in generate() if selected is None or m.key in selected]
    originals = sorted({m.source for m in mutations})
    base = _run_all([(s, (ROOT / s).read_text(encoding="utf-8")) for s in originals])
    tried = _run_all([(m.key, m.text) for m in mutations])
    out = {}
    for m in mutations:
        if base[m.source] != "ok":
            out[m.key] = "inconclusive"
        else:
            out[m.key] = "accepted" if tried[m.key] == "ok" else "rejected"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--one", metavar="KEY")
    parser.add_argument("--child", metavar="BATCH", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        _child(options.child)
        return 0
    if options.one:
        print(verdicts([options.one])[options.one])
        return 0
    import jax

    found = verdicts()
    counts = {v: sum(1 for x in found.values() if x == v) for v in sorted(set(found.values()))}
    OUT.write_text(
        json.dumps(
            {"xla": f"jax/jaxlib {jax.__version__}, CPU", "counts": counts, "verdicts": found},
            indent=1,
            sort_keys=True,
        )
        + "\n",
        encoding="utf-8",
    )
    print(counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
