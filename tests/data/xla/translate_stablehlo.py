"""Translate the HLO modules of XLA's indexing-analysis cases to StableHLO (needs jax).

    python tests/data/xla/translate_stablehlo.py

Writes `stablehlo_cases.json`: for each test of `analysis_cases.json` whose module XLA's own
converter (`hlo_to_stablehlo`, the one jax ships) translates, the StableHLO text. XLA runs its
indexing-analysis tests on such translations too; tests/test_stablehlo_conformance.py checks
that hloidx reads the same maps from them. Running the tests does not need jax.
"""

from __future__ import annotations

import json
from pathlib import Path

from jax._src.interpreters import mlir
from jax._src.lib import xla_client
from jax._src.lib.mlir import ir
from jaxlib import _hlo

HERE = Path(__file__).resolve().parent


def translate(hlo_text: str) -> str:
    module = _hlo.hlo_module_from_text(hlo_text)
    bytecode = xla_client._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    with mlir.make_ir_context():
        return ir.Module.parse(bytecode).operation.get_asm(enable_debug_info=False)


def main() -> None:
    cases = json.loads((HERE / "analysis_cases.json").read_text())
    out: dict[str, str] = {}
    failed: dict[str, str] = {}
    for case in cases:
        if not case.get("hlo"):
            continue
        try:
            out[case["test"]] = translate(case["hlo"])
        except Exception as error:  # the converter rejects some modules: say which
            failed[case["test"]] = f"{type(error).__name__}: {error}"[:200]
    import jax

    (HERE / "stablehlo_cases.json").write_text(
        json.dumps(
            {"jax": jax.__version__, "translations": out, "not_translated": failed},
            indent=1,
            sort_keys=True,
        )
    )
    print(f"{len(out)} translated, {len(failed)} not")


if __name__ == "__main__":
    main()
