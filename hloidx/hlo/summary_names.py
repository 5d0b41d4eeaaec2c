"""``hloidx summary --names roles``: each operand row of the triage table with its
output-to-input maps, their variables named by what they index (:mod:`.role_names`).

The summary's figures are unchanged; each operand row only gains ``named_maps`` (the map text,
named) and ``variables`` (each map's variables: name, kind, role), in the order of the row's
``maps`` count (maps known to be empty left out). A grouped row shows its first member's maps.
"""

from __future__ import annotations

from typing import Any

from ..maps.var_names import variables_json
from .analysis import ModuleAnalysis
from .report import format_map
from .role_names import Namer, name_instruction


def add_named_maps(doc: dict[str, Any], analysis: ModuleAnalysis, spelling: str = "floordiv"):
    """Adds ``named_maps`` and ``variables`` to every operand of every row of ``doc`` (the
    document :func:`hloidx.hlo.summary.summarize` made from ``analysis``)."""
    by_place = {(ins.computation, ins.name): ins for ins in analysis.instructions}
    namer = Namer()
    for row in doc["rows"]:
        ins = by_place.get((row.get("computation", ""), row["name"]))
        if ins is None or ins.instruction is None:
            continue
        named = ins  # an analysis named already (``analyze(..., names="roles")``)
        if all(op.map_names is None for op in ins.operands):
            named = name_instruction(ins, namer)
        for entry, op in zip(row["operands"], named.operands, strict=False):
            names = op.map_names[0] if op.map_names else [None] * len(op.output_to_input)
            shown = [
                (m, n)
                for m, n in zip(op.output_to_input, names, strict=False)
                if not m.is_known_empty
            ]
            entry["named_maps"] = [format_map(m, spelling) for m, _ in shown]
            entry["variables"] = [variables_json(m, n) for m, n in shown]


__all__ = ["add_named_maps"]
