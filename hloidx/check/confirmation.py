"""How an expectation's maps were confirmed, in words: for ``check --update``'s notes, its JSON
``oracle`` records and the header comment of a new expectation file."""

from __future__ import annotations

from typing import Any

from .evidence import OracleOutcome


def oracle_record(name: str, outcome: OracleOutcome) -> dict[str, Any]:
    return {
        "instruction": name,
        "method": outcome.method,
        "points": outcome.points if outcome.method == "sampled" else None,
        "status": outcome.status,
    }


def sampled_names(outcomes: dict[str, OracleOutcome]) -> list[str]:
    return [n for n, o in outcomes.items() if o.agrees and o.method == "sampled"]


def confirmation(outcomes: dict[str, OracleOutcome]) -> str:
    """How the maps were confirmed, for a note and for a new file's header comment."""
    sampled = sampled_names(outcomes)
    if not sampled:
        return "the provenance oracle agreed with them"
    points = sorted({outcomes[n].points for n in sampled})
    counts = " or ".join(str(p) for p in points)
    if len(sampled) == len(outcomes):
        return (
            f"the point-wise provenance oracle agreed with them on {counts} sampled output "
            "points of each instruction (too large for the whole-tensor oracle)"
        )
    return (
        f"the provenance oracle agreed with them: the point-wise oracle on {counts} sampled "
        f"output points of {', '.join(sampled)} (too large for the whole-tensor oracle), the "
        "whole-tensor oracle on every other instruction"
    )


def wrap_comment(text: str, width: int = 96) -> list[str]:
    lines: list[str] = []
    line = "//"
    for word in text.split():
        if len(line) + 1 + len(word) > width and line != "//":
            lines.append(line)
            line = "//"
        line += " " + word
    lines.append(line)
    return lines
