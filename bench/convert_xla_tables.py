"""Convert XLA's measured GEMM and collective tables into hloidx package data.

Usage::

    python bench/convert_xla_tables.py PATH/TO/matmul_interpolator_data.h \
        [-o hloidx/perf/data/xla_matmul_tables.json]
    python bench/convert_xla_tables.py PATH/TO/collective_interpolator_data.h \
        [-o hloidx/perf/data/xla_collective_tables.json]

    python bench/convert_xla_tables.py PATH/TO/xla/tools/hlo_opt/gpu_specs \
        [-o hloidx/perf/data/xla_gpu_specs.json]

(the kind of table is read from the header's constant name; a directory is XLA's GPU spec
files, ``*.txtpb``).

The header holds one text-format protobuf (``kDefaultMatmulPTable``): per device key
(``sm_90``, ``sm_100``) a list of entries ``b, m, n, k`` with measured FLOP/s per dtype key
(``bf16xbf16->bf16`` ...). The output keeps, per device, the dtype keys once and one row per
point: ``[b, m, n, k, flops_key0, flops_key1, ...]`` (``null`` where a key is absent).

The collective header (``kDefaultCollectivePTable``) holds per device key a list of profiled
collectives (opcode, shape, iota replica groups, measured network throughput in bytes/s); the
output keeps one row per profile with the columns named in the file.

Provenance written into the file: zml/xla (a mirror of openxla/xla) at
1e203b533f9702298d8b17ef1281e880132614bf, xla/service/gpu/model/*_interpolator_data.h,
Apache License 2.0, The OpenXLA Authors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

SOURCE = {
    "repository": "zml/xla (mirror of openxla/xla)",
    "commit": "1e203b533f9702298d8b17ef1281e880132614bf",
    "path": "xla/service/gpu/model/matmul_interpolator_data.h",
    "licence": "Apache-2.0, Copyright The OpenXLA Authors",
    "units": "FLOP/s measured per (b, m, n, k) and dtype key lhs x rhs -> out",
}

_DEVICE = re.compile(r'^\s*key:\s*"(sm_\d+)"')
_DIM = re.compile(r"^\s*([bmnk]):\s*(\d+)\s*$")
_FLOPS = re.compile(r'^\s*flops\s*\{\s*key:\s*"([^"]+)"\s*value:\s*(\d+)\s*\}')


def parse_header(text: str) -> dict[str, list[dict]]:
    """Device key → list of ``{"b", "m", "n", "k", "flops": {dtype_key: value}}``."""
    tables: dict[str, list[dict]] = {}
    device: str | None = None
    entry: dict | None = None
    for line in text.splitlines():
        if m := _DEVICE.match(line):
            device = m.group(1)
            tables[device] = []
            entry = None
        elif m := _DIM.match(line):
            if device is None:
                raise ValueError(f"dimension before a device key: {line.strip()}")
            if m.group(1) == "b":
                entry = {"flops": {}}
                tables[device].append(entry)
            assert entry is not None
            entry[m.group(1)] = int(m.group(2))
        elif m := _FLOPS.match(line):
            if entry is None:
                raise ValueError(f"flops before an entry: {line.strip()}")
            entry["flops"][m.group(1)] = int(m.group(2))
    return tables


def compact(tables: dict[str, list[dict]]) -> dict:
    out: dict = {"source": SOURCE, "tables": {}}
    for device, entries in sorted(tables.items()):
        keys = sorted({k for e in entries for k in e["flops"]})
        rows = [
            [e["b"], e["m"], e["n"], e["k"], *(e["flops"].get(k) for k in keys)] for e in entries
        ]
        out["tables"][device] = {"columns": ["b", "m", "n", "k", *keys], "rows": rows}
    return out


COLLECTIVE_COLUMNS = [
    "opcode",
    "element_type",
    "dimensions",
    "num_replica_groups",
    "num_devices_per_group",
    "iota_reshape_dims",
    "iota_transpose_perm",
    "channel_id",
    "use_global_device_ids",
    "network_throughput_bytes_per_sec",
]
_TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(:)?\s*(\{)?|(\})|("[^"]*"|[^\s{}]+))')


def parse_text_proto(text: str) -> dict:
    """A protobuf text message as nested dicts; every field is a list (repeated or not)."""
    stack: list[dict] = [{}]
    pos = 0
    pending: str | None = None
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip():
                raise ValueError(f"cannot read text proto at {text[pos : pos + 40]!r}")
            break
        pos = m.end()
        name, _colon, brace, close, value = m.groups()
        if close:
            stack.pop()
        elif name is not None and brace:
            child: dict = {}
            stack[-1].setdefault(name, []).append(child)
            stack.append(child)
        elif name is not None and pending is None and not _colon and value is None:
            pending = name  # a name whose value follows after whitespace
        elif name is not None and _colon:
            pending = name
        elif name is not None and pending is not None:
            stack[-1].setdefault(pending, []).append(name)  # an enum value (F32, true)
            pending = None
        elif value is not None and pending is not None:
            v = value.strip('"') if value.startswith('"') else value
            stack[-1].setdefault(pending, []).append(v)
            pending = None
        else:
            raise ValueError(f"unexpected token {m.group(0)!r}")
    return stack[0]


def _one(message: dict, name: str, default=None):
    values = message.get(name)
    return values[0] if values else default


def collective_rows(table: dict) -> dict:
    source = SOURCE | {
        "path": COLLECTIVE_PATH,
        "units": "network throughput (bytes/s) measured per profiled collective on 8-GPU hosts",
    }
    out: dict = {"source": source, "tables": {}}
    for device in table["entries"]:
        rows = []
        for entry in _one(device, "value")["entries"]:
            instr = _one(entry, "instruction")
            shape = _one(instr, "shape")
            iota = _one(_one(instr, "collective_device_list"), "iota_replica_group_list")
            rows.append(
                [
                    _one(instr, "opcode"),
                    _one(shape, "element_type"),
                    [int(d) for d in shape.get("dimensions", [])],
                    int(_one(iota, "num_replica_groups")),
                    int(_one(iota, "num_devices_per_group")),
                    [int(d) for d in iota.get("iota_reshape_dims", [])],
                    [int(d) for d in iota.get("iota_transpose_perm", [])],
                    int(_one(instr, "channel_id", 0)),
                    _one(instr, "use_global_device_ids", "false") == "true",
                    int(_one(entry, "network_throughput_bytes_per_sec")),
                ]
            )
        out["tables"][_one(device, "key")] = {"columns": COLLECTIVE_COLUMNS, "rows": rows}
    return out


COLLECTIVE_PATH = "xla/service/gpu/model/collective_interpolator_data.h"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("header", type=Path, help="path to matmul_interpolator_data.h")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent
        / "hloidx"
        / "perf"
        / "data"
        / "xla_matmul_tables.json",
    )
    args = parser.parse_args(argv)
    if args.header.is_dir():
        return _convert_specs(args.header, args.output)
    text = args.header.read_text()
    if "kDefaultCollectivePTable" in text:
        body = text[text.index('R"pb(') + 5 : text.index(')pb"')]
        data = collective_rows(parse_text_proto(body))
        if args.output.name == "xla_matmul_tables.json":
            args.output = args.output.with_name("xla_collective_tables.json")
        _write(args.output, data)
        for device, table in data["tables"].items():
            print(f"{device}: {len(table['rows'])} profiles")
        return 0
    tables = parse_header(text)
    if not tables:
        print(f"{args.header}: no tables found", file=sys.stderr)
        return 2
    data = compact(tables)
    _write(args.output, data)
    for device, table in data["tables"].items():
        print(f"{device}: {len(table['rows'])} points, keys {table['columns'][4:]}")
    return 0


def _convert_specs(folder: Path, output: Path) -> int:
    from dataclasses import asdict

    from hloidx.perf.gpu_specs import read_spec

    if output.name == "xla_matmul_tables.json":
        output = output.with_name("xla_gpu_specs.json")
    specs = {}
    for path in sorted(folder.glob("*.txtpb")):
        fields = asdict(read_spec(path.read_text(), path.name))
        del fields["source"]
        specs[path.stem] = fields
    source = SOURCE | {"path": "xla/tools/hlo_opt/gpu_specs", "units": "GpuTargetConfigProto"}
    with output.open("w") as f:
        f.write('{\n"source": ' + json.dumps(source) + ',\n"specs": {\n')
        f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in specs.items()))
        f.write("\n}}\n")
    json.loads(output.read_text())
    print(f"{len(specs)} spec files: {', '.join(specs)}")
    return 0


def _write(path: Path, data: dict) -> None:
    with path.open("w") as f:
        f.write("{\n")
        f.write(f'"source": {json.dumps(data["source"])},\n"tables": {{\n')
        devices = list(data["tables"].items())
        for i, (device, table) in enumerate(devices):
            f.write(f'"{device}": {{"columns": {json.dumps(table["columns"])}, "rows": [\n')
            f.write(",\n".join(json.dumps(r) for r in table["rows"]))
            f.write("\n]}" + ("," if i + 1 < len(devices) else "") + "\n")
        f.write("}}\n")
    json.loads(path.read_text())


if __name__ == "__main__":
    raise SystemExit(main())
