"""``hloidx tile`` documents: JSON (schema 1) and the lines of the text report."""

from __future__ import annotations

from math import prod
from typing import Any

from ..maps.printer import format_expr, format_map
from .operand_tiles import InstructionTiles, MapTile, OperandTile

SCHEMA_VERSION = 1


def _count(value: Any) -> int | str:
    return value if isinstance(value, int) else format_expr(value)


def _description(t: MapTile, operand: OperandTile | None) -> dict[str, Any]:
    assert t.maps is not None
    assert t.formula is not None
    maps = t.maps
    doc: dict[str, Any] = {
        "offset_map": format_map(maps.offset_map),
        "size_map": format_map(maps.size_map),
        "stride_map": format_map(maps.stride_map),
        "constraints": t.formula.conditions.text(),
    }
    clips = [None if d.clip is None else [d.clip.lower, d.clip.upper] for d in t.formula.dims]
    if any(c is not None for c in clips):
        doc["clip"] = clips
    if t.formula.when:
        doc["when"] = " && ".join(
            f"{format_expr(e)} in [{i.lower}, {i.upper}]" for e, i in t.formula.when
        )
    if t.held:
        doc["held_dims"] = list(t.held)
        doc["count"] = _count(maps.count)
    if maps.sizes is not None and operand is not None:
        doc["bytes_per_rectangle"] = prod(maps.sizes) * operand.element_bytes
    return doc


def _rt_vars(t: MapTile, producers: list[str]) -> list[dict[str, Any]]:
    out = []
    for k, v in enumerate(t.map.rt_vars):
        entry: dict[str, Any] = {"name": f"rt{k}", "range": [v.bounds.lower, v.bounds.upper]}
        if k < len(producers):
            entry["producer"] = producers[k]
        out.append(entry)
    return out


def operand_document(o: OperandTile, producers: list[str] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "index": o.index,
        "name": o.name,
        "shape": o.shape,
        "rectangle": o.rectangle,
        "exact": o.exact and not o.undefined,
        "undefined": o.undefined,
        "offset_map": None,
        "size_map": None,
        "stride_map": None,
        "constraints": None,
        "rt_vars": [],
        "rectangles": None,
    }
    producers = producers or []
    if not o.map_tiles:
        doc["why"] = "KNOWN EMPTY: the output never reads this operand"
        return doc
    if o.rectangle:
        t = o.map_tiles[0]
        doc.update(_description(t, o))
        doc["rt_vars"] = _rt_vars(t, producers)
    else:
        reasons = []
        rectangles: list[dict[str, Any]] | None = []
        for t in o.map_tiles:
            reasons.append(t.reason + (f" ({t.witness})" if t.witness else ""))
            if t.maps is None or rectangles is None:
                rectangles = None
                continue
            rectangles.append(_description(t, o))
            doc["rt_vars"].extend(_rt_vars(t, producers))
        doc["rectangles"] = rectangles
        if len(o.map_tiles) > 1:
            reasons.insert(0, f"read through {len(o.map_tiles)} maps: their tiles are listed")
        doc["why"] = "; ".join(r for r in reasons if r)
        doc["witnessed"] = any(t.witness for t in o.map_tiles)
    if o.bytes_per_tile() is not None:
        doc["bytes_per_tile"] = o.bytes_per_tile()
    if not o.exact:
        doc["notes"] = [
            "the op rule over-approximates what is read: the tile may be larger than needed"
        ]
    if o.notes:
        doc.setdefault("notes", []).extend(o.notes)
    return doc


def tiles_document(result: InstructionTiles) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "instruction": result.instruction,
        "opcode": result.opcode,
        "output_shape": list(result.output_shape),
        "tile": list(result.sizes) if result.sizes is not None else "symbolic",
        "operands": [operand_document(o, o.producers) for o in result.operands],
        "notes": result.notes,
    }


def auto_document(instruction: Any, limit: int) -> dict[str, Any]:
    """``hloidx tile --tile auto``'s JSON document: the first ``limit`` candidate tilings of
    ``instruction``'s output, best first, with what each costs in bytes."""
    from .auto import candidates
    from .operand_tiles import output_dims

    extents = output_dims(instruction)
    return {
        "schema_version": 1,
        "instruction": instruction.name,
        "output_shape": list(extents),
        "tile": "auto",
        "candidates": [
            {
                "tile": list(c.sizes),
                "exact": c.exact,
                "bytes_per_tile": c.bytes_per_tile,
                "bytes_per_output_element": c.bytes_per_output_element,
                "operand_bytes": list(c.operand_bytes),
            }
            for c in candidates(instruction, extents)[:limit]
        ],
    }


def _describe_lines(d: dict[str, Any], indent: str, symbolic: bool) -> list[str]:
    names = d.get("tile_variables", "d")  # --names roles: the output dims' names
    what = f"{names} = tile sizes" if symbolic else f"{names} = tile index"
    lines = [f"{indent}offsets: {d['offset_map']}   [{what}]"]
    lines.append(f"{indent}sizes:   {d['size_map']}")
    lines.append(f"{indent}strides: {d['stride_map']}")
    if d.get("constraints"):
        if symbolic:
            lines.append(f"{indent}exact when: {d['constraints']}")
        else:
            lines.append(
                f"{indent}exact: the sizes satisfy {d['constraints']} ({names} = tile sizes)"
            )
    if d.get("clip"):
        lines.append(f"{indent}clipped to: {d['clip']} (elements outside are never read)")
    if d.get("when"):
        lines.append(f"{indent}read only when: {d['when']}")
    if "bytes_per_rectangle" in d and d.get("held_dims"):
        lines.append(f"{indent}{d['bytes_per_rectangle']:,} bytes per rectangle")
    return lines


def text_lines(doc: dict[str, Any]) -> list[str]:
    symbolic = doc["tile"] == "symbolic"
    tile = "symbolic sizes" if symbolic else f"tile {doc['tile']}"
    lines = [f"{doc['instruction']} ({doc['opcode']}): {tile} of output {doc['output_shape']}"]
    for note in doc["notes"]:
        lines.append(f"  note: {note}")
    for o in doc["operands"]:
        head = f"  operand {o['index']} {o['name']} {o['shape']}: "
        if o["undefined"]:
            lines.append(head + "UNDEFINED (no indexing rule reaches it): no tile")
            continue
        if o.get("why", "").startswith("KNOWN EMPTY"):
            lines.append(head + o["why"])
            continue
        if o["rectangle"]:
            per = f", {o['bytes_per_tile']:,} bytes per tile" if "bytes_per_tile" in o else ""
            lines.append(head + "one strided rectangle per tile" + per)
            lines.extend(_describe_lines(o, "    ", symbolic))
        else:
            # "not one rectangle" only when a tile was seen not to be one
            verdict = (
                "not one rectangle" if o.get("witnessed") else "no single-rectangle description"
            )
            lines.append(head + verdict + ": " + o["why"])
            if o["rectangles"] is None:
                lines.append("    no exact description (see why)")
            several = len(o["rectangles"] or []) > 1
            for k, r in enumerate(o["rectangles"] or []):
                through = f"through map {k}: " if several else ""
                if r.get("held_dims"):
                    dims = ", ".join(str(d) for d in r["held_dims"])
                    lines.append(
                        f"    {through}a loop of {r['count']} rectangles over output dim(s) "
                        f"{dims} (s = position in the tile; delinearize_index):"
                    )
                else:
                    lines.append(f"    {through}one strided rectangle per tile:")
                lines.extend(_describe_lines(r, "      ", symbolic))
            if "bytes_per_tile" in o:
                lines.append(f"    {o['bytes_per_tile']:,} bytes per tile")
        for rv in o["rt_vars"]:
            src = f" = {rv['producer']}" if "producer" in rv else ""
            lines.append(f"    {rv['name']} in {rv['range']}{src}")
        for note in o.get("notes", []):
            lines.append(f"    note: {note}")
    return lines
