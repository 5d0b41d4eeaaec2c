"""The Model Explorer adapter's graphs and node data, checked against the modules they draw
(no Model Explorer needed; tests/test_model_explorer_browser.py runs the real one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.hlo.syntax import parse_hlo
from hloidx.model_explorer.convert import (
    cost_values,
    module_document,
    node_data_document,
    read_module,
    summary_values,
)

ROOT = Path(__file__).resolve().parent.parent
CONTROL_FLOW = ROOT / "tests" / "data" / "model_explorer" / "control_flow.hlo"
SAMPLES = sorted(
    p
    for p in (ROOT / "samples").rglob("*.hlo")
    if "xla_dump" not in p.parts  # dump folders hold several stages of one module
)


def _graphs(path: Path) -> dict[str, dict]:
    document = module_document(read_module(str(path)))
    return {g["id"]: g for g in document["graphs"]}


def test_control_flow_graphs_are_the_computations_that_run():
    graphs = _graphs(CONTROL_FLOW)
    # written from the module by hand: the entry, the loop's condition and body, both branches;
    # not the reducer `add` (it runs inside the reduce) nor `fused_step` (a layer in `body`)
    assert set(graphs) == {"main", "cond", "body", "on_true", "on_false"}
    main = {n["id"]: n for n in graphs["main"]["nodes"]}
    assert main["loop"]["subgraphIds"] == ["cond", "body"]
    assert main["picked"]["subgraphIds"] == ["on_true", "on_false"]
    assert main["total"]["subgraphIds"] == []
    body = {n["id"]: n for n in graphs["body"]["nodes"]}
    # the fusion is a layer: its node first in it, its fused instructions inside
    assert body["step"]["namespace"] == "step"
    assert body["step"]["config"] == {"pinToGroupTop": True}
    for fused in ("x", "one", "ones", "y"):
        assert body[f"step/{fused}"]["namespace"] == "step"
    # the fused parameter is fed by its fusion; the fusion's user reads the fused root
    assert [e["sourceNodeId"] for e in body["step/x"]["incomingEdges"]] == ["step"]
    assert body["out"]["incomingEdges"][1]["sourceNodeId"] == "step/y"
    # a get-tuple-element reads its element's output of the tuple-shaped node
    result = main["result"]["incomingEdges"][0]
    assert (result["sourceNodeId"], result["sourceNodeOutputId"]) == ("loop", "1")
    assert [m["id"] for m in main["loop"]["outputsMetadata"]] == ["0", "1"]
    tags = [
        {a["key"]: a["value"] for a in m["attrs"]}["__tensor_tag"]
        for m in main["loop"]["outputsMetadata"]
    ]
    assert tags == ["loop#0", "loop#1"]  # the elements named as XLA's text names them


@pytest.mark.parametrize("path", [CONTROL_FLOW, *SAMPLES], ids=lambda p: p.name)
def test_every_instruction_is_a_node_and_every_operand_an_edge(path):
    module = parse_hlo(path.read_text(), str(path))
    graphs = _graphs(path)
    for graph_id, graph in graphs.items():
        ids = [n["id"] for n in graph["nodes"]]
        assert len(ids) == len(set(ids)), f"{graph_id}: node ids repeat"
        for node in graph["nodes"]:
            for edge in node["incomingEdges"]:
                assert edge["sourceNodeId"] in ids
            for sub in node["subgraphIds"]:
                assert sub in graphs
    # walked from the IR here, independently of the adapter's walk: every computation a
    # graph draws, and each fusion's called computation inside it
    for graph_id, graph in graphs.items():
        nodes = {n["id"]: n for n in graph["nodes"]}
        expected = _expected_nodes(module.computations[graph_id], "")
        assert set(nodes) == set(expected)
        for node_name, (instr, _layer) in expected.items():
            edges = nodes[node_name]["incomingEdges"]
            sources = [e["sourceNodeId"] for e in edges[: len(instr.operands)]]
            for operand, source in zip(instr.operands, sources, strict=True):
                name = source.rsplit("/", 1)[-1]
                producer = operand
                if operand.opcode == "fusion":  # a fusion's users read its fused root
                    callee = operand.called_computations["calls"][0]
                    producer = callee.root
                assert name == producer.name


def _expected_nodes(computation, layer):
    out = {}
    for instr in computation.instructions:
        out[f"{layer}/{instr.name}" if layer else instr.name] = (instr, layer)
        if instr.opcode in ("fusion", "async-start") and instr.called_computations.get("calls"):
            inner = f"{layer}/{instr.name}" if layer else instr.name
            out.update(_expected_nodes(instr.called_computations["calls"][0], inner))
    return out


def test_binary_hlo_draws_as_its_text_does():
    """XLA's binary HLO (an nsys-jax dump module) gives the graphs of jaxlib's text of it."""
    pytest.importorskip("google.protobuf")
    dump = ROOT / "tests" / "data" / "binary_hlo" / "pax_dump"
    proto = min(dump.glob("*.hlo.pb.xz"), key=lambda p: p.stat().st_size)
    text = ROOT / "tests" / "data" / "binary_hlo" / "jaxlib_text" / proto.name[: -len(".pb.xz")]
    from_proto = module_document(read_module(str(proto)), with_maps=False)
    from_text = module_document(parse_hlo(text.read_text(), str(text)), with_maps=False)
    assert from_proto == from_text


def test_a_node_carries_its_operands_maps_status_and_utilization():
    text = """HloModule t
ENTRY main {
  p0 = f32[4,128,256] parameter(0)
  p1 = f32[4,256,64] parameter(1)
  ROOT dot = f32[4,128,64] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}"""
    graphs = {g["id"]: g for g in module_document(parse_hlo(text))["graphs"]}
    dot = next(n for n in graphs["main"]["nodes"] if n["id"] == "dot")
    lhs = {a["key"]: a["value"] for a in dot["inputsMetadata"][0]["attrs"]}
    # the dot's definition: out[b, m, n] = sum_k p0[b, m, k] * p1[b, k, n]
    assert lhs["output-to-input"] == (
        "(d0, d1, d2)[s0] -> (d0, d1, s0), "
        "domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]"
    )
    assert lhs["status"] == "exact"
    # every element of p0 is read once per output column: 64 times
    assert lhs["utilization"].startswith("100% of elements read, 64 reads per operand element")
    attrs = {a["key"]: a["value"] for a in dot["attrs"]}
    assert attrs["opcode"] == "dot"
    assert attrs["lhs_contracting_dims"] == "{2}"


def test_an_undefined_operand_is_shown_as_such():
    text = """HloModule t
ENTRY main {
  p0 = f32[16] parameter(0)
  ROOT c = f32[16] custom-call(p0), custom_call_target="SomethingUnknown"
}"""
    graphs = module_document(parse_hlo(text))["graphs"]
    node = next(n for n in graphs[0]["nodes"] if n["id"] == "c")
    status = {a["key"]: a["value"] for a in node["inputsMetadata"][0]["attrs"]}["status"]
    assert status != "exact"


@pytest.mark.parametrize(
    "path",
    [CONTROL_FLOW, ROOT / "samples" / "corpus" / "einsum_heavy.opt.hlo"],
    ids=lambda p: p.name,
)
def test_node_data_ids_all_exist_in_the_graphs(path):
    graphs = _graphs(path)
    runner = CliRunner()
    for args in (
        ["cost", str(path), "--device", "h100", "--format", "model-explorer"],
        ["summary", str(path), "--format", "model-explorer"],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        document = json.loads(result.output)
        assert document, args
        for graph_id, data in document.items():
            ids = {n["id"] for n in graphs[graph_id]["nodes"]}
            assert set(data["results"]) <= ids
            assert all(isinstance(r["value"], float) for r in data["results"].values())
            assert data["gradient"][0]["stop"] == 0.0


def test_node_data_values_are_the_reports_values():
    module = read_module(str(CONTROL_FLOW))
    cost = {"kernels": [{"name": "step", "exec_time_ns": 1500.0}, {"name": "gone", "flops": 3}]}
    values = cost_values(cost, "time")
    assert values == {"step": 1.5}  # µs; a row without the field is left out
    document, missing = node_data_document(module, values, "t")
    assert document == {
        "body": {
            "name": "t",
            "results": {"step": {"value": 1.5}},
            "gradient": document["body"]["gradient"],
        }
    }
    assert missing == []
    summary = {"rows": [{"name": "next", "max_reads": 2.0, "members": ["next", "ghost"]}]}
    document, missing = node_data_document(module, summary_values(summary, "reads"), "r")
    assert document["body"]["results"] == {"next": {"value": 2.0}}
    assert missing == ["ghost"]


def test_the_adapters_graphs_are_the_json_model_explorers_own_classes_give():
    """The adapter hands Model Explorer finished node dicts (main._Prebuilt); the page must
    get what GraphNode dataclasses of the same nodes would give it."""
    graph_builder = pytest.importorskip("model_explorer.graph_builder")
    utils = pytest.importorskip("model_explorer.utils")
    from hloidx.model_explorer.main import HloidxAdapter

    fast = utils.convert_adapter_response(HloidxAdapter().convert(str(CONTROL_FLOW), {}))

    def key_values(items):
        return [graph_builder.KeyValue(key=i["key"], value=i["value"]) for i in items]

    def metadata(items):
        return [graph_builder.MetadataItem(id=m["id"], attrs=key_values(m["attrs"])) for m in items]

    graphs = []
    for graph in module_document(read_module(str(CONTROL_FLOW)))["graphs"]:
        nodes = [
            graph_builder.GraphNode(
                id=n["id"],
                label=n["label"],
                namespace=n["namespace"],
                subgraphIds=n["subgraphIds"],
                attrs=key_values(n["attrs"]),
                incomingEdges=[graph_builder.IncomingEdge(**e) for e in n["incomingEdges"]],
                inputsMetadata=metadata(n["inputsMetadata"]),
                outputsMetadata=metadata(n["outputsMetadata"]),
                config=graph_builder.GraphNodeConfig(**n["config"]) if n.get("config") else None,
            )
            for n in graph["nodes"]
        ]
        graphs.append(graph_builder.Graph(id=graph["id"], nodes=nodes))
    slow = utils.convert_adapter_response({"graphs": graphs})
    assert json.loads(json.dumps(fast)) == json.loads(json.dumps(slow))


def test_each_cost_metric_is_the_rows_own_figure():
    """`cost --format model-explorer --metric M`: each kernel's node value read from the same
    run's `--format json` rows, by the metric's definition written here."""
    path = ROOT / "tests" / "data" / "gpu" / "view" / "coalescing.hlo"
    runner = CliRunner()
    rows = json.loads(runner.invoke(cli, ["cost", str(path), "--format", "json"]).output)["kernels"]
    expected = {
        "time": {r["name"]: r["exec_time_ns"] / 1000 for r in rows},
        "bytes": {r["name"]: float(r["bytes_read"] + r["bytes_written"]) for r in rows},
        "bound": {r["name"]: {"memory": 0.0, "compute": 1.0}[r["bound"]] for r in rows},
        "coalescing": {
            r["name"]: sum(o["coalesced"] for o in r["operands"]) / len(r["operands"]) for r in rows
        },
    }
    assert 0 < expected["coalescing"]["gathered"] < 1  # a kernel with one operand not coalesced
    for metric, values in expected.items():
        args = ["cost", str(path), "--format", "model-explorer", "--metric", metric]
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        got = {k: v["value"] for k, v in json.loads(result.output)["main"]["results"].items()}
        assert got == pytest.approx(values, rel=1e-6), metric
    result = runner.invoke(cli, [*args[:-1], "measured"])
    assert result.exit_code == 2
    assert "--profile" in result.output
