"""A module file as Model Explorer's graphs document, and node data for it, as plain data.

:func:`convert_file` is what the adapter serves; :func:`node_data` turns a cost or summary
report into Model Explorer's node-data document (``--format model-explorer``), keyed by the
adapter's node ids. Both work without the Model Explorer package installed.
"""

from __future__ import annotations

from typing import Any

from ..errors import HloidxError
from ..hlo.ir import HloModule
from .graphs import module_graphs, node_id, running_computations

#: file endings the adapter takes: HLO text, XLA's dump files, gzip- or xz-compressed HLO,
#: XLA's binary HLO (``*.hlo.pb``, ``*.hlo.pb.xz``), StableHLO
FILE_EXTENSIONS = ["hlo", "txt", "gz", "xz", "pb", "mlir"]


def read_module(path: str) -> HloModule:
    """The module in ``path`` (HLO text, XLA's binary HLO or StableHLO; gzip and xz read
    through); the first located error of an unreadable module is raised as an
    :class:`HloidxError`."""
    from ..hlo.binary_hlo import decompressed, hlo_text_from_bytes
    from ..stablehlo import parse_module_lenient

    with open(path, "rb") as handle:
        data = decompressed(handle.read(), path)
    text = hlo_text_from_bytes(data, path)
    if text is None:
        text = data.decode("utf-8", errors="replace")
    module, errors = parse_module_lenient(text, path)
    if module is None:
        raise errors[0] if errors else HloidxError(f"{path}: no module could be read")
    return module


def module_document(module: HloModule, *, with_maps: bool = True) -> dict[str, Any]:
    """Model Explorer's ``{"graphs": [...]}`` for ``module``: with ``with_maps``, each node's
    inputs carry their indexing maps, statuses and utilization."""
    maps_json: dict[str, Any] = {}
    if with_maps:
        from ..hlo.analysis import analyze
        from ..hlo.report import module_to_json

        # the output-to-input maps as `hloidx maps --no-verify --direction o2i` gives them:
        # checking every simplification and the inverse maps would double the time Model
        # Explorer waits (a graph shows neither)
        maps_json = module_to_json(analyze(module, verify=False, direction="o2i"))
    return {"graphs": module_graphs(module, maps_json)}


def convert_file(path: str, *, with_maps: bool = True) -> dict[str, Any]:
    return module_document(read_module(path), with_maps=with_maps)


def node_locations(module: HloModule) -> dict[str, tuple[str, str]]:
    """Each instruction name of a running computation (and of the layers in it) -> (graph
    id, node id)."""
    from .graphs import _walk

    out: dict[str, tuple[str, str]] = {}
    for computation in running_computations(module):
        for instr, layer in _walk(computation, ""):
            out.setdefault(instr.name, (computation.name, node_id(instr.name, layer)))
    return out


#: the colour scale of node data: cool (small) to hot (large)
GRADIENT = [
    {"stop": 0.0, "bgColor": "#e8f1fb"},
    {"stop": 0.5, "bgColor": "#fdd49e"},
    {"stop": 1.0, "bgColor": "#d7301f"},
]


def node_data(
    module: HloModule, values: dict[str, float], name: str
) -> tuple[dict[str, Any], list[str]]:
    """Model Explorer's node-data document (one entry per graph) of ``values`` (instruction
    name -> value) and the names that have no node in the adapter's graphs."""
    where = node_locations(module)
    graphs: dict[str, dict[str, Any]] = {}
    missing = []
    for instruction, value in values.items():
        location = where.get(instruction)
        if location is None:
            missing.append(instruction)
            continue
        graph, node = location
        entry = graphs.setdefault(graph, {"name": name, "results": {}, "gradient": GRADIENT})
        entry["results"][node] = {"value": value}
    return graphs, missing


#: node-data metrics of ``hloidx cost --format model-explorer`` (``--metric``): the kernel
#: row's field, its label, and the scale it is shown in
COST_METRICS = {
    "time": ("exec_time_ns", "estimated time per launch (µs, hloidx cost)", 1e-3),
    "bytes": ("bytes", "estimated bytes read + written per launch (hloidx cost)", 1.0),
    "flops": ("flops", "flops per launch (hloidx cost)", 1.0),
    "bound": ("bound", "bound by: 0 memory, 1 compute (hloidx cost)", 1.0),
    "coalescing": (
        "coalescing",
        "share of the kernel's operands read coalesced (hloidx cost)",
        1.0,
    ),
    "measured": ("measured", "measured time per launch (µs, profile)", 1e-3),
}
#: a row's ``bound`` as the number node data needs
_BOUND = {"memory": 0.0, "compute": 1.0}
#: node-data metrics of ``hloidx summary --format model-explorer``
SUMMARY_METRICS = {
    "reads": ("max_reads", "most reads per operand element (hloidx summary)"),
    "distinct": ("min_distinct", "least share of an operand's elements read (hloidx summary)"),
    "total": ("total_reads", "element reads in all (hloidx summary)"),
}


def cost_values(cost_doc: dict[str, Any], metric: str = "time") -> dict[str, float]:
    """Instruction name -> the metric's value, from ``hloidx cost --format json``'s document
    (rows without the value, such as a kernel that does not fit, are left out)."""
    field_name, _label, scale = COST_METRICS[metric]
    out: dict[str, float] = {}
    for row in cost_doc.get("kernels", []):
        if field_name == "bytes":
            value = _number(row.get("bytes_read"))
            written = _number(row.get("bytes_written"))
            value = None if value is None or written is None else value + written
        elif field_name == "bound":
            value = _BOUND.get(row.get("bound"))
        elif field_name == "coalescing":
            flags = [o.get("coalesced") for o in row.get("operands") or []]
            flags = [f for f in flags if isinstance(f, bool)]
            value = sum(flags) / len(flags) if flags else None
        elif field_name == "measured":
            measured = row.get("measured")
            value = _number(measured.get("mean_ns")) if isinstance(measured, dict) else None
        else:
            value = _number(row.get(field_name))
        if value is not None and "name" in row:
            out[row["name"]] = round(value * scale, 6)
    return out


def summary_values(summary_doc: dict[str, Any], metric: str = "reads") -> dict[str, float]:
    """Instruction name -> the metric, from ``hloidx summary --format json``'s document; a
    row for a group of repeats gives its value to every member."""
    field_name, _label = SUMMARY_METRICS[metric]
    out: dict[str, float] = {}
    for row in summary_doc.get("rows", []):
        value = _number(row.get(field_name))
        if value is None:
            continue
        for member in row.get("members") or [row["name"]]:
            out[member] = value
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def node_data_document(
    module: HloModule, values: dict[str, float], label: str
) -> tuple[dict[str, Any], list[str]]:
    """The node-data JSON Model Explorer loads (``--node_data_paths``), and the instructions
    that had a value but no node (none for a module the adapter drew)."""
    return node_data(module, values, label)
