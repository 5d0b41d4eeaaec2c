"""The triage table of a module as text (``hloidx summary``, and the end of ``hloidx maps``),
and the device columns (estimated time, coalescing) added to the summary document."""

from __future__ import annotations

from typing import Any

from .words import plural


def _number(value: float | None, kind: str | None = None) -> str:
    if value is None:
        return "?"
    text = f"{value:.3g}" if value < 1000 else f"{value:,.0f}"
    return f"~{text}" if kind in ("estimate", "upper_bound") else text


def _compact(value: float | None, estimate: bool = False) -> str:
    """A large count in few characters: 352,973,699,940,352 as 353T."""
    if value is None:
        return "?"
    for size, unit in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if value >= size:
            return f"{'~' if estimate else ''}{value / size:.3g}{unit}"
    return f"{'~' if estimate else ''}{value:.3g}"


def summary_lines(doc: dict[str, Any], limit: int = 0) -> list[str]:
    """The summary as plain lines (the text form: one pass, written once)."""
    rows = doc["rows"] if limit <= 0 else doc["rows"][:limit]
    lines = [f"summary of {doc['module']} (sorted by {doc['sort']})"]
    lines.append(_scope_line(doc))
    placed = any(row.get("where", "entry") != "entry" for row in doc["rows"])
    counted = any(row.get("count", 1) > 1 for row in rows)
    header: tuple[str, ...] = (
        "instruction",
        *(("count",) if counted else ()),
        *(("runs", "in") if placed else ()),
        "total reads",
        "op / kind",
        "shape",
        "operand",
        "distinct",
        "reads",
        "status",
        "maps",
    )
    with_gpu = "device" in doc
    if with_gpu:
        header += ("coalesced", "est. time")
    table: list[tuple[str, ...]] = [header]
    for row in rows:
        op_kind = " ".join(x for x in (row["opcode"], row["kind"]) if x)
        if row["blocks"]:
            op_kind += f" [{row['blocks']}]"
        first = True
        for o in row["operands"]:
            count = row.get("count", 1)
            table.append(
                (
                    row["name"] if first else "",
                    *(((f"x{count}" if count > 1 and first else ""),) if counted else ()),
                    *((_runs_cell(row), row.get("where", "")) if placed and first else ()),
                    *(("", "") if placed and not first else ()),
                    _compact(row.get("total_reads"), row.get("total_reads_estimate", False))
                    if first
                    else "",
                    op_kind if first else "",
                    row["shape"] if first else "",
                    f"{o['name']} {o['shape']}",
                    _number(o["distinct"], o["utilization_kind"]),
                    _number(o["reads"], o["utilization_kind"]),
                    o["status"],
                    f"{o['maps']}{' rt' if o['runtime_variables'] else ''}",
                )
                + ((_coalesced_cell(o), _time_cell(row) if first else "") if with_gpu else ())
            )
            first = False
            table.extend(_named_map_rows(o))
    widths = [max(len(r[k]) for r in table if len(r) == len(header)) for k in range(len(header))]
    at = header.index("operand")
    indent = " " * (sum(widths[:at]) + 2 * at + 2)
    for r in table:
        if len(r) != len(header):  # --names roles: a named map under its operand
            lines.append(indent + r[0])
            continue
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    if limit > 0 and len(doc["rows"]) > limit:
        lines.append(f"... {len(doc['rows']) - limit} more rows (--limit 0 shows every row)")
    totals = doc["totals"]
    n = totals["instructions"]
    lines.append(
        f"totals over all {plural(n, 'instruction')} of the module, each counted once (fused "
        "computations, loop bodies and the rest included):"
    )
    by_opcode = ", ".join(f"{k} {v}" for k, v in totals["by_opcode"].items())
    lines.append(f"  by opcode: {by_opcode}")
    statuses = ", ".join(f"{k} {v}" for k, v in totals["operands_by_status"].items())
    lines.append(f"  operands: {statuses or 'none'}")
    verdicts = ", ".join(f"{k} {v}" for k, v in totals["verdicts"].items())
    lines.append(f"  simplifications: {verdicts}")
    if totals["without_rule"]:
        missing = ", ".join(
            f"{k} ({v} operand{'s' if v != 1 else ''} UNDEFINED)"
            for k, v in totals["without_rule"].items()
        )
        lines.append(f"  without a rule: {missing}")
    else:
        lines.append("  without a rule: none")
    return lines


#: named maps shown under one operand (the JSON has them all)
_NAMED_MAPS_SHOWN = 4


def _named_map_rows(operand: dict[str, Any]) -> list[tuple[str]]:
    """``--names roles``: the operand's maps without their domains, one line each (at most
    ``_NAMED_MAPS_SHOWN``); none without names."""
    maps = operand.get("named_maps")
    if not maps:
        return []
    rows = [(text.partition(", domain:")[0],) for text in maps[:_NAMED_MAPS_SHOWN]]
    if len(maps) > _NAMED_MAPS_SHOWN:
        rows.append((f"... {len(maps) - _NAMED_MAPS_SHOWN} more maps (--format json has all)",))
    return rows


def loop_trip_count(loop: Any) -> int | None:
    """A while loop's trip count as ``hloidx cost`` counts it (None: unknown), for
    ``summarize(trip_counts=...)``; the cost layer is imported only for a module with a loop."""
    from ..perf.trip_count import trip_count

    return trip_count(loop).value


def _scope_line(doc: dict[str, Any]) -> str:
    """What the rows are, in words: which instructions, from which computations, grouped how."""
    rows, instructions = len(doc["rows"]), doc.get("row_instructions", len(doc["rows"]))
    kinds = _computation_kinds(doc.get("computations", []))
    verb = "reads" if instructions == 1 else "read"
    text = f"rows: the {plural(instructions, 'instruction')} that {verb} memory in {kinds}"
    if doc.get("grouped") and rows != instructions:
        text += (
            f", in {plural(rows, 'row')}: structurally equal instructions share a row (count xN)"
        )
    if any(row.get("where", "entry") != "entry" for row in doc["rows"]):
        text += "; `runs` is how often each runs per call of the entry, `total reads` over all"
        text += " of those runs"
    return text


def _computation_kinds(computations: list[dict[str, Any]]) -> str:
    """``the entry computation, 1 loop body and 1 loop condition``."""
    counts = {"loop body": 0, "loop condition": 0, "conditional branch": 0, "called computation": 0}
    for comp in computations:
        where = comp["where"]
        if where.startswith("body of"):
            counts["loop body"] += 1
        elif where.startswith("condition of"):
            counts["loop condition"] += 1
        elif "branch" in where:
            counts["conditional branch"] += 1
        elif where.startswith("called by"):
            counts["called computation"] += 1
    parts = ["the entry computation"] + [
        plural(
            n,
            kind,
            {"loop body": "loop bodies", "conditional branch": "conditional branches"}.get(kind),
        )
        for kind, n in counts.items()
        if n
    ]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _runs_cell(row: dict[str, Any]) -> str:
    runs = row.get("runs", 1)
    if runs is None:
        return "x?"
    return f"{'<=' if row.get('runs_at_most') else ''}x{runs:,}"


def _time_cell(row: dict[str, Any]) -> str:
    from ..perf.text import human_time

    if "estimated_time_ns" not in row:
        return ""
    return "-" if row["estimated_time_ns"] is None else human_time(row["estimated_time_ns"])


def add_estimates(doc: dict[str, Any], module: Any, device: str, sort: str) -> None:
    """Each kernel's estimated time on ``device`` (hloidx's cost model) into the summary
    document; with ``sort`` ``time`` the rows go slowest first (rows that launch no kernel
    last)."""
    from ..errors import HloidxError
    from ..perf import estimate_module

    try:
        report = estimate_module(module, device)
    except HloidxError:
        return  # no estimate (say, a module without an entry computation): no column
    doc["device"] = report.device.name
    times = {k.name: k.exec_time_ns for k in report.kernels}
    for row in doc["rows"]:
        row["estimated_time_ns"] = times.get(row["name"])
    if sort == "time":
        # a group's members are equal kernels: the row weighs its count of launches
        doc["rows"].sort(key=lambda r: -(r["estimated_time_ns"] or -1.0) * r.get("count", 1))
        doc["sort"] = "time"


def _coalesced_cell(operand: dict[str, Any]) -> str:
    verdict = operand.get("coalesced")
    if verdict is None:
        return ""
    text = "yes" if verdict else "NO"
    return text + (" (heuristic)" if operand.get("coalescing_method") == "heuristic" else "")


def add_coalescing(doc: dict[str, Any], module: Any, device: str) -> None:
    """Each fusion operand's coalescing verdict on ``device`` into the summary document."""
    from ..gpu.analysis import analyze_module
    from ..gpu.devices import device_profile

    profile = device_profile(device)
    views = {v.name: v for v in analyze_module(module, profile)}
    doc["device"] = profile.name
    for row in doc["rows"]:
        view = views.get(row["name"])
        for k, o in enumerate(row["operands"]):
            if view is not None and k < len(view.operands):
                o["coalesced"] = view.operands[k].coalesced
                o["coalescing_method"] = view.operands[k].method
