"""A module as Model Explorer graphs: one graph per computation that runs, as plain data.

Model Explorer (``ai-edge-model-explorer``) draws a graph from nodes that name their incoming
edges; a node's ``namespace`` puts it in a collapsible layer. Here:

* every computation that runs (the entry, while bodies and conditions, conditional branches,
  called computations) is a graph, whose id is the computation's name; a node that starts one
  (``while``, ``conditional``, ``call``) links to it through ``subgraphIds``;
* a fusion (and an async start) is a layer named after the instruction, holding the
  instructions of its called computation; the fusion itself is the layer's first node (pinned
  to the top), fed by the fusion's operands, and it feeds the fused parameters; the users of
  the fusion read the fused root;
* every operand is an edge; an operand that is one element of a tuple (``get-tuple-element``,
  ``%t#i``) comes from that output of the tuple-shaped node;
* per node: opcode, name, shape and layout, the attributes as written; per operand (the
  node's inputs): its output-to-input and input-to-output maps, status and utilization, as
  ``hloidx maps --format json`` gives them.

Node ids are instruction names, and ``<layer>/<name>`` inside a layer (HLO names cannot hold
``/``), so node data written by ``hloidx cost --format model-explorer`` finds its nodes.
Everything here is JSON-able dicts: the Model Explorer package is needed only to serve them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..hlo.ir import Computation, HloModule, Instruction, Shape

#: attributes whose computations run as graphs of their own (the rest are layers or appliers)
_CONTROL_FLOW = {
    "while": ("condition", "body"),
    "conditional": ("branch_computations", "true_computation", "false_computation"),
    "call": ("to_apply", "calls"),
}
#: ops whose called computation is drawn as a layer inside the caller's graph
_LAYERED = {"fusion", "async-start"}


def running_computations(module: HloModule) -> list[Computation]:
    """The computations that run as code of their own: the entry, and every computation a
    ``while``, ``conditional`` or ``call`` of a running computation starts (in first-reached
    order). Fused computations, async wrapped computations and reducers are not among them."""
    if module.entry is None:
        return []
    order: list[Computation] = [module.entry]
    seen = {id(module.entry)}
    index = 0
    while index < len(order):
        for instr, _layer in _walk(order[index], ""):
            for callee in _control_flow_callees(instr):
                if id(callee) not in seen:
                    seen.add(id(callee))
                    order.append(callee)
        index += 1
    return order


def _control_flow_callees(instr: Instruction) -> list[Computation]:
    keys = _CONTROL_FLOW.get(instr.opcode, ())
    called = instr.called_computations if keys else {}
    return [c for key in keys for c in called.get(key, [])]


def _layer_callee(instr: Instruction) -> Computation | None:
    if instr.opcode not in _LAYERED:
        return None
    called = instr.called_computations.get("calls", [])
    return called[0] if called else None


def _walk(computation: Computation, layer: str) -> Iterator[tuple[Instruction, str]]:
    """Every instruction of ``computation`` with its layer, fused instructions after their
    fusion (in their own layer)."""
    for instr in computation.instructions:
        yield instr, layer
        callee = _layer_callee(instr)
        if callee is not None:
            inner = f"{layer}/{instr.name}" if layer else instr.name
            yield from _walk(callee, inner)


def node_id(name: str, layer: str = "") -> str:
    """The node id of instruction ``name`` in ``layer`` ('' at the top of its graph)."""
    return f"{layer}/{name}" if layer else name


class _ShapeTexts:
    """Each distinct shape's text and output metadata, made once per document: real modules
    repeat a few hundred shapes over tens of thousands of instructions (the entries are only
    ever serialised, so sharing them is safe)."""

    def __init__(self) -> None:
        self._text: dict[Shape, str] = {}
        self._outputs: dict[Shape, list[dict[str, Any]]] = {}

    def text(self, shape: Shape) -> str:
        found = self._text.get(shape)
        if found is None:
            found = self._text[shape] = str(shape)
        return found

    def outputs(self, shape: Shape) -> list[dict[str, Any]]:
        found = self._outputs.get(shape)
        if found is None:
            leaves = list(shape.tuple_shapes) if shape.tuple_shapes is not None else [shape]
            found = self._outputs[shape] = [
                {"id": str(i), "attrs": [{"key": "tensor_shape", "value": self.text(leaf)}]}
                for i, leaf in enumerate(leaves)
            ]
        return found


def _operand_attrs(
    operand: dict[str, Any], shared: dict[tuple[Any, ...], list[dict[str, str]]]
) -> list[dict[str, str]]:
    """A node input's side-panel entries from its ``maps --format json`` operand.

    Operands whose analysis is shared (the repeats of one layer) hold the very same map lists
    in that document, so their entries are built once (``shared``, kept for one document; the
    document keeps the lists alive, so their ids are not reused meanwhile)."""
    key = (
        operand.get("name"),
        operand.get("shape"),
        operand.get("status"),
        id(operand.get("output_to_input")),
        id(operand.get("input_to_output")),
        id(operand.get("utilization")),
        id(operand.get("notes")),
    )
    found = shared.get(key)
    if found is None:
        found = shared[key] = _new_operand_attrs(operand)
    return found


def _new_operand_attrs(operand: dict[str, Any]) -> list[dict[str, str]]:
    attrs = [
        {"key": "__tensor_tag", "value": str(operand.get("name", ""))},
        {"key": "shape", "value": str(operand.get("shape", ""))},
        {"key": "status", "value": str(operand.get("status") or "unknown")},
    ]
    for key in ("output_to_input", "input_to_output"):
        maps = operand.get(key) or []
        if maps:
            attrs.append({"key": key.replace("_", "-"), "value": "\n".join(maps)})
    utilization = operand.get("utilization")
    if utilization:
        attrs.append({"key": "utilization", "value": _utilization_text(utilization)})
    for note in operand.get("notes") or []:
        attrs.append({"key": "note", "value": str(note)})
    return attrs


def _utilization_text(utilization: dict[str, Any]) -> str:
    distinct = utilization.get("distinct")
    reads = utilization.get("reads")
    kind = utilization.get("kind", "")
    parts = []
    if distinct is not None:
        parts.append(f"{100.0 * float(distinct):.4g}% of elements read")
    if reads is not None:
        parts.append(f"{float(reads):.4g} reads per operand element")
    return ", ".join(parts) + (f" ({kind})" if kind else "")


def _source(
    operand: Instruction, placed: dict[int, tuple[str, str]], fused_root: dict[int, str]
) -> tuple[str, str]:
    """The (node id, output id) an operand's edge starts at."""
    if id(operand) in fused_root:  # a fusion's users read its fused root
        return fused_root[id(operand)], "0"
    node, _layer = placed.get(id(operand), (operand.name, ""))
    return node, "0"


def computation_graph(
    computation: Computation, operands_json: dict[tuple[str, str], list[dict[str, Any]]]
) -> dict[str, Any]:
    """The graph of one running computation (``operands_json``: the ``operands`` of each
    instruction's ``maps --format json`` entry, keyed by (computation, name))."""
    walked = list(_walk(computation, ""))
    placed = {id(i): (node_id(i.name, layer), layer) for i, layer in walked}
    fused_root: dict[int, str] = {}
    for instr, layer in walked:
        callee = _layer_callee(instr)
        if callee is not None and callee.root is not None:
            inner = f"{layer}/{instr.name}" if layer else instr.name
            fused_root[id(instr)] = node_id(callee.root.name, inner)
    # a fused parameter is fed by its fusion (the layer's first node)
    parameter_feed: dict[int, str] = {}
    for instr, _layer in walked:
        callee = _layer_callee(instr)
        if callee is not None:
            for param in callee.parameters:
                parameter_feed[id(param)] = placed[id(instr)][0]
    shared: dict[tuple[Any, ...], list[dict[str, str]]] = {}
    shapes = _ShapeTexts()
    nodes = [
        _node(instr, layer, placed, fused_root, parameter_feed, operands_json, shared, shapes)
        for instr, layer in walked
    ]
    return {"id": computation.name, "nodes": nodes}


def _node(
    instr: Instruction,
    layer: str,
    placed: dict[int, tuple[str, str]],
    fused_root: dict[int, str],
    parameter_feed: dict[int, str],
    operands_json: dict[tuple[str, str], list[dict[str, Any]]],
    shared: dict[tuple[Any, ...], list[dict[str, str]]],
    shapes: _ShapeTexts,
) -> dict[str, Any]:
    computation = instr.computation.name if instr.computation is not None else ""
    edges = []
    for index, operand in enumerate(instr.operands):
        source, output = _source(operand, placed, fused_root)
        if (
            instr.opcode == "get-tuple-element"
            and operand.shape.tuple_shapes is not None
            and id(operand) not in fused_root
        ):
            output = str(instr.tuple_index if instr.tuple_index is not None else 0)
        edges.append(
            {"sourceNodeId": source, "sourceNodeOutputId": output, "targetNodeInputId": str(index)}
        )
    if id(instr) in parameter_feed:
        edges.append(
            {
                "sourceNodeId": parameter_feed[id(instr)],
                "sourceNodeOutputId": "0",
                "targetNodeInputId": str(len(edges)),
            }
        )
    attrs = [
        {"key": "name", "value": instr.name},
        {"key": "opcode", "value": instr.opcode},
        {"key": "shape", "value": shapes.text(instr.shape)},
        {"key": "computation", "value": computation},
    ]
    if instr.shape.layout is not None:
        attrs.append({"key": "layout", "value": str(instr.shape.layout)})
    attrs += [{"key": k, "value": str(v)} for k, v in instr.attributes.items()]
    if instr.literal is not None and instr.opcode != "parameter":
        attrs.append({"key": "literal", "value": instr.literal[:200]})
    inputs = [
        {"id": str(operand.get("index", i)), "attrs": _operand_attrs(operand, shared)}
        for i, operand in enumerate(operands_json.get((computation, instr.name), []))
    ]
    layered = _layer_callee(instr) is not None
    node: dict[str, Any] = {
        "id": placed[id(instr)][0],
        "label": instr.name,
        "namespace": _own_layer(instr, layer) if layered else layer,
        "subgraphIds": [c.name for c in _control_flow_callees(instr)],
        "attrs": attrs,
        "incomingEdges": edges,
        "inputsMetadata": inputs,
        "outputsMetadata": _outputs(instr, shapes),
    }
    if layered:
        node["config"] = {"pinToGroupTop": True}
    return node


def _outputs(instr: Instruction, shapes: _ShapeTexts) -> list[dict[str, Any]]:
    """A node's outputs: one per element of a tuple, named as XLA's text names an element
    (``loop#1``), so an edge from a tuple says which element it carries."""
    if instr.shape.tuple_shapes is None:
        return shapes.outputs(instr.shape)
    return [
        {
            "id": out["id"],
            "attrs": [{"key": "__tensor_tag", "value": f"{instr.name}#{out['id']}"}, *out["attrs"]],
        }
        for out in shapes.outputs(instr.shape)
    ]


def _own_layer(instr: Instruction, layer: str) -> str:
    return f"{layer}/{instr.name}" if layer else instr.name


def module_graphs(module: HloModule, maps_json: dict[str, Any]) -> list[dict[str, Any]]:
    """Every running computation's graph (``maps_json``: ``hloidx maps --format json``'s
    document of the module, or ``{}`` for the graph without maps)."""
    operands: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in maps_json.get("instructions", []):
        operands[(entry["computation"], entry["name"])] = entry.get("operands", [])
    return [computation_graph(c, operands) for c in running_computations(module)]
