"""Maps between two named instructions (``hloidx maps --from A --to B``) and the composition
steps behind every fusion map (``--tree``), as plain data for the renderers."""

from __future__ import annotations

from typing import Any

from ..errors import HloidxError
from .composition import Reached
from .fusion import body_of, computation_outputs, grouped_output_to_input
from .ir import HloModule, Instruction


def _find(module: HloModule, name: str) -> Instruction:
    instr = module.instruction(name)
    if instr is None:
        raise HloidxError(f"no instruction named {name}")
    return instr


def chain_maps(module: HloModule, a: str, b: str) -> tuple[Instruction, Instruction, Reached]:
    """Maps from the later instruction's output to the earlier one's, along every path."""
    first, second = _find(module, a), _find(module, b)
    if first.computation is not second.computation:
        raise HloidxError(f"{a} and {b} are in different computations")
    for consumer, producer in ((first, second), (second, first)):
        reached = grouped_output_to_input(consumer, record=True, stop_at=producer)
        if producer in reached and (reached[producer].maps or reached[producer].unknown):
            return consumer, producer, reached[producer]
    raise HloidxError(
        f"{b} does not read {a} and {a} does not read {b}: there is no path between them"
    )


def chain_report(
    module: HloModule,
    a: str,
    b: str,
    *,
    simplify: bool = True,
    verify: bool = True,
    spelling: str = "floordiv",
    names: str = "plain",
) -> dict[str, Any]:
    from ..maps.printer import format_map
    from ..maps.utilization import utilization

    consumer, producer, reached = chain_maps(module, a, b)
    maps = [t.map for t in reached.maps]
    util = utilization(maps, producer.shape.dims) if producer.shape.is_array and maps else None
    renamed: dict[int, tuple] = {}
    if names == "roles":  # the same maps, their variables named (printed only)
        from .role_names import Namer, named_steps

        renamed = named_steps(consumer, 0, consumer, {producer: reached}, Namer(), producer)
    shown = [renamed.get(id(t), (t.map, t.steps)) for t in reached.maps]
    return {
        "schema_version": 1,
        "from": consumer.name,
        "to": producer.name,
        "maps": [format_map(m, spelling) for m, _ in shown] or ["UNDEFINED"],
        "exact": all(t.exact for t in reached.maps) and not reached.unknown,
        "status": "unknown"
        if reached.unknown or any(m.is_undefined for m in maps)
        else ("exact" if all(t.exact for t in reached.maps) else "over-approximation"),
        "utilization": util.to_json() if util else None,
        "paths": [
            [
                {
                    "instruction": s.instruction,
                    "opcode": s.opcode,
                    "map": format_map(s.map, spelling),
                }
                for s in steps
            ]
            for _, steps in shown
        ],
        # composition deduplicates: several paths that give one map are kept once
        "paths_shown": "one path per distinct map (other paths that give the same map are "
        "not listed)",
        "notes": list(reached.unknown),
        # collectives: output index -> group position of the replica whose data is read
        "replica_id_maps": [
            format_map(t.replica_id, spelling) if t.replica_id is not None else None
            for t in reached.maps
        ],
    }


def composition_trees(
    analysis: Any, spelling: str = "floordiv", names: str = "plain"
) -> list[dict[str, Any]]:
    """For each fusion or call: each operand map with the composition steps that built it
    (``names="roles"``: each step's variables named as ``--names roles`` names them)."""
    from ..maps.printer import format_map

    namer = None
    if names == "roles":
        from .role_names import Namer, named_steps

        namer = Namer()

    trees: list[dict[str, Any]] = []
    for ins in analysis.instructions:
        instr = ins.instruction
        if instr is None or instr.opcode not in ("fusion", "call"):
            continue
        try:
            comp = body_of(instr)
        except HloidxError:
            continue
        params = {p.parameter_number: p for p in comp.parameters}
        maps: list[dict[str, Any]] = []
        for out_id, output in enumerate(computation_outputs(comp)):
            reached = grouped_output_to_input(output, record=True)
            renamed = named_steps(instr, out_id, output, reached, namer) if namer else {}
            for k in range(len(instr.operands)):
                p = params.get(k)
                r = reached.get(p) if p is not None else None
                if r is None:
                    continue
                for t in r.maps:
                    steps = renamed[id(t)][1] if id(t) in renamed else t.steps
                    maps.append(
                        {
                            "output": out_id,
                            "operand": k,
                            "operand_name": instr.operands[k].name,
                            "steps": [
                                {
                                    "instruction": step.instruction,
                                    "opcode": step.opcode,
                                    "map": format_map(step.map, spelling),
                                }
                                for step in steps
                            ],
                        }
                    )
        trees.append({"instruction": instr.name, "computation": comp.name, "maps": maps})
    return trees
