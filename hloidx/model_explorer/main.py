"""The Model Explorer extension: ``model-explorer FILE --extensions=hloidx.model_explorer``.

Model Explorer imports ``<extension>.main`` and registers the classes defined here: an adapter
that draws HLO text, XLA's dump files and StableHLO as graphs with each operand's indexing
maps, and a node data provider that colours the nodes by hloidx's cost estimate or by operand
utilization. Needs ``pip install -e '.[explorer]'`` (from a clone).
"""

from __future__ import annotations

from typing import Any, ClassVar

from model_explorer import (  # type: ignore[import-not-found]
    Adapter,
    AdapterMetadata,
    ModelExplorerGraphs,
    graph_builder,
    node_data_builder,
)
from model_explorer.node_data_provider import (  # type: ignore[import-not-found]
    GetConfigEditorsResult,
    NodeDataProvider,
    NodeDataProviderMetadata,
    NodeDataProviderResult,
)

from .convert import FILE_EXTENSIONS, convert_file, read_module


class HloidxAdapter(Adapter):
    """XLA HLO (text, dump files, gzip) and StableHLO as graphs with indexing maps."""

    metadata = AdapterMetadata(
        id="hloidx_hlo",
        name="XLA HLO (hloidx)",
        description="XLA HLO text and dump files as graphs, with each operand's indexing maps",
        source_repo="https://pypi.org/project/hloidx/",
        fileExts=FILE_EXTENSIONS,
    )

    def __init__(self) -> None:
        super().__init__()

    def convert(self, model_path: str, settings: dict[str, Any]) -> ModelExplorerGraphs:
        document = convert_file(model_path)
        return {"graphs": [_graph(g) for g in document["graphs"]]}


class _Prebuilt:
    """A graph's nodes already in the JSON form Model Explorer sends its page.

    Model Explorer turns an adapter's graphs into JSON with ``dataclasses.asdict``, which
    recurses into dataclasses, lists and dicts and copies anything else with
    ``copy.deepcopy``: building tens of thousands of ``GraphNode`` objects and taking them
    apart again took most of a 37,000-instruction module's conversion. Handing it the nodes
    as this object, whose deep copy is the finished list, gives the page the same JSON."""

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        self.nodes = nodes

    def __deepcopy__(self, memo: dict[int, Any]) -> list[dict[str, Any]]:
        return self.nodes

    def __iter__(self) -> Any:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)


#: the fields of ``GraphNode`` a node of ours leaves unset, as ``asdict`` would give them
_UNSET = {"style": None, "config": None}


def _graph(data: dict[str, Any]) -> Any:
    nodes = [{**_UNSET, **node} for node in data["nodes"]]
    return graph_builder.Graph(id=data["id"], nodes=_Prebuilt(nodes))


class HloidxNodeData(NodeDataProvider):
    """Node data computed inside Model Explorer: hloidx's estimated kernel time on a GPU, or
    the most re-read operand of each instruction."""

    metadata: ClassVar[list[Any]] = [
        NodeDataProviderMetadata(
            id="hloidx_cost",
            name="hloidx: estimated kernel time",
            description="Each kernel's estimated time per launch (µs) on an H100, from "
            "hloidx's cost model (an estimate, not a measurement)",
        ),
        NodeDataProviderMetadata(
            id="hloidx_reads",
            name="hloidx: operand re-reads",
            description="The most reads per element of any operand (hloidx summary)",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()

    def get_config_editors(self, provider_id: str) -> Any:
        return GetConfigEditorsResult(configEditors=[])

    def run(
        self,
        provider_id: str,
        model_path: str,
        graph_id: str,
        config_values: dict[str, Any],
        graph: Any = None,
    ) -> Any:
        from .provider import provider_values

        try:
            module = read_module(model_path)
            values, label = provider_values(module, provider_id, config_values)
        except Exception as error:  # Model Explorer shows the message in its UI
            return NodeDataProviderResult(error=str(error))
        from .convert import node_data

        graphs, _missing = node_data(module, values, label)
        entry = graphs.get(graph_id, {"name": label, "results": {}, "gradient": []})
        return NodeDataProviderResult(
            result=node_data_builder.GraphNodeData(
                name=entry["name"],
                results={
                    node: node_data_builder.NodeDataResult(value=r["value"])
                    for node, r in entry["results"].items()
                },
                gradient=[node_data_builder.GradientItem(**g) for g in entry["gradient"]],
            )
        )
