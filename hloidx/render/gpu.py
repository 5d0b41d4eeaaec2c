"""The text of ``hloidx threads`` and ``hloidx coalescing`` (from their JSON documents)."""

from __future__ import annotations

from typing import Any


def threads_lines(doc: dict[str, Any]) -> list[str]:
    """``hloidx threads``: the launch, then each output's and operand's thread-id map."""
    lines = [
        f"{doc['name']} ({doc['computation']}): {doc['emitter']} emitter on {doc['device']['name']}"
    ]
    launch = doc["launch"]
    if launch is None:
        lines.append("  launch: not modelled")
    else:
        t, b = launch["threads_per_block"], launch["blocks"]
        line = (
            f"  launch: threads/block {{{t['x']}, {t['y']}, {t['z']}}}, "
            f"blocks {{{b['x']}, {b['y']}, {b['z']}}}, unroll {launch['unroll_factor']}, "
            f"vector {launch['vector_size']}"
        )
        if launch["overridden"]:
            line += f" (set by hand: {', '.join(launch['overridden'])})"
        lines.append(line)
    for note in doc["notes"]:
        lines.append(f"  note: {note}")
    for out in doc["outputs"]:
        checked = f"  [{out['verification']}]" if out.get("verification") else ""
        lines.append(f"  thread -> output {out['index']}:{checked}")
        lines.append(f"    {out['map'] or 'UNDEFINED (see the notes)'}")
    for o in doc["operands"]:
        status = (
            "UNDEFINED" if o["undefined"] else ("exact" if o["exact"] else "over-approximation")
        )
        lines.append(f"  thread -> operand {o['index']} {o['name']} {o['shape']}: {status}")
        if not o["maps"] and not o["undefined"]:
            lines.append("    KNOWN EMPTY (never read)")
        for m in o["maps"]:
            checked = f"  [{m['verification']}]" if m.get("verification") else ""
            lines.append(f"    via output {m['output']}:{checked} {m['map']}")
            if "physical" in m:
                lines.append(f"      linear address: {m['physical']}")
        for note in o["notes"]:
            lines.append(f"    note: {note}")
    return lines


def coalescing_lines(doc: dict[str, Any]) -> list[str]:
    """``hloidx coalescing``: one row per fusion operand, then the totals."""
    device = doc["device"]["name"]
    lines = [f"coalescing of {doc['module']} on {device} (first warp, XLA's analysis)"]
    lines.extend(f"  note: {note}" for note in doc.get("notes", ()))
    table = [("fusion", "emitter", "operand", "coalesced", "how", "transactions", "bytes/used")]
    for f in doc["fusions"]:
        first = True
        for o in f["operands"]:
            figures = o["figures"]
            table.append(
                (
                    f["name"] if first else "",
                    f["emitter"] if first else "",
                    f"{o['index']} {o['name']} {o['shape']}",
                    "yes" if o["coalesced"] else "NO",
                    o["method"],
                    "-"
                    if figures is None
                    else f"{figures['transactions']} (ideal {figures['ideal_transactions']})",
                    "-" if figures is None else f"{figures['bytes_fetched_per_byte_used']:.2f}",
                )
            )
            first = False
    widths = [max(len(r[k]) for r in table) for k in range(len(table[0]))]
    for r in table:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    total = sum(len(f["operands"]) for f in doc["fusions"])
    bad = sum(1 for f in doc["fusions"] for o in f["operands"] if not o["coalesced"])
    guessed = sum(1 for f in doc["fusions"] for o in f["operands"] if o["method"] == "heuristic")
    lines.append(
        f"{len(doc['fusions'])} fusions, {total} operands: {bad} not coalesced; "
        f"{guessed} judged by XLA's heuristic (emitter not modelled)"
    )
    return lines
