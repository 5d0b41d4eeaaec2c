"""Convert XLA's measured GEMM tables (``matmul_interpolator_data.h``) into hloidx package data.

Usage::

    python bench/convert_xla_tables.py PATH/TO/matmul_interpolator_data.h \
        [-o hloidx/perf/data/xla_matmul_tables.json]

The header holds one text-format protobuf (``kDefaultMatmulPTable``): per device key
(``sm_90``, ``sm_100``) a list of entries ``b, m, n, k`` with measured FLOP/s per dtype key
(``bf16xbf16->bf16`` ...). The output keeps, per device, the dtype keys once and one row per
point: ``[b, m, n, k, flops_key0, flops_key1, ...]`` (``null`` where a key is absent).

Provenance written into the file: zml/xla (a mirror of openxla/xla) at
1e203b533f9702298d8b17ef1281e880132614bf, xla/service/gpu/model/matmul_interpolator_data.h,
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
    tables = parse_header(args.header.read_text())
    if not tables:
        print(f"{args.header}: no tables found", file=sys.stderr)
        return 2
    data = compact(tables)
    with args.output.open("w") as f:
        f.write("{\n")
        f.write(f'"source": {json.dumps(data["source"])},\n"tables": {{\n')
        devices = list(data["tables"].items())
        for i, (device, table) in enumerate(devices):
            f.write(f'"{device}": {{"columns": {json.dumps(table["columns"])}, "rows": [\n')
            f.write(",\n".join(json.dumps(r) for r in table["rows"]))
            f.write("\n]}" + ("," if i + 1 < len(devices) else "") + "\n")
        f.write("}}\n")
    json.loads(args.output.read_text())
    for device, table in data["tables"].items():
        print(f"{device}: {len(table['rows'])} points, keys {table['columns'][4:]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
