"""The text of ``hloidx tile --tile auto`` (from its JSON document)."""

from __future__ import annotations

from typing import Any


def auto_tile_lines(doc: dict[str, Any]) -> list[str]:
    """``hloidx tile --tile auto`` (without ``--device``): the ranked power-of-two tiles."""
    lines = [
        f"{doc['instruction']}: {len(doc['candidates'])} power-of-two tile sizes of output "
        f"{doc['output_shape']}, best first (exact = one strided rectangle per operand)"
    ]
    lines.extend(f"  note: {note}" for note in doc.get("notes", ()))
    lines.append(f"  {'tile':<20} {'exact':<6} {'bytes/elem':>10} {'bytes/tile':>12}  per operand")
    for c in doc["candidates"]:
        per = c["bytes_per_output_element"]
        per_text = "-" if per is None else f"{per:.2f}"
        tile_bytes = "-" if c["bytes_per_tile"] is None else f"{c['bytes_per_tile']:,}"
        ops = ", ".join("?" if b is None else f"{b:,}" for b in c["operand_bytes"])
        lines.append(
            f"  {c['tile']!s:<20} {'yes' if c['exact'] else 'no':<6} {per_text:>10} "
            f"{tile_bytes:>12}  {ops}"
        )
    return lines
