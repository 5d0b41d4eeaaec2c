"""``hloidx simplify``'s result as plain lines, for a pipe or a file.

A module of its own so that a piped ``simplify`` imports no analysis layer and no Rich."""

from __future__ import annotations

from typing import Any

from .words import plural


def simplify_lines(doc: dict[str, Any], explain_rules: list[Any] | None) -> list[str]:
    """What ``render_simplify`` prints, as plain lines: for a pipe or a file, where Rich would
    add nothing (no styles, no wrapping) and importing it would cost more than the command."""
    lines = []
    if explain_rules is not None:
        lines.append(f"{plural(len(explain_rules), 'rule')} applied")
        for i, rule in enumerate(explain_rules, 1):
            lines += [f"{i}. {rule['name']}", "   " + rule["map"]]
    lines.append(doc["simplified"])
    verdict = doc.get("verdict")
    if verdict is not None:
        lines.append("verdict: " + verdict["label"])
        if verdict.get("counterexample"):
            lines.append(f"counterexample: {verdict['counterexample']}")
    return lines
