"""Rich rendering of reports for people. Map and HLO text is always ``Text``, never markup."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..hlo.report import format_map, verdict_label
from ..maps.expr import dim
from .words import plural

if TYPE_CHECKING:  # Rich is imported where a terminal is written to, not for a pipe
    from rich.console import Console
    from rich.text import Text

    from ..hlo.analysis import InstructionAnalysis, ModuleAnalysis


class Line:
    """One output line as (text, style) pieces: building Rich ``Text`` objects for every line
    of a large module cost more than writing them; a plain write never needs them."""

    __slots__ = ("pieces",)

    def __init__(self, text: str = "", style: str | None = None) -> None:
        self.pieces: list[tuple[str, str | None]] = [(text, style)] if text else []

    def append(self, text: str, style: str | None = None) -> None:
        self.pieces.append((text, style))

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.pieces)

    def styled(self) -> Text:
        from rich.text import Text

        return Text.assemble(*((t, s or "") for t, s in self.pieces))


class LineBuffer:
    """Lines gathered for one write. Printing each line through Rich cost most of the time on
    large modules; the whole text is now written once (styled only on a terminal)."""

    def __init__(self) -> None:
        self.lines: list[Line] = []

    def print(self, line: Line, **_: Any) -> None:
        self.lines.append(line)

    def write_to(self, console: Console) -> None:
        if not self.lines:
            return
        if not console.is_terminal:
            # a pipe or a file: the lines whole (each map stays on one line, for grep and
            # for pasting), no escape codes
            console.file.write("\n".join(t.plain for t in self.lines) + "\n")
        else:
            wrapped = [piece for line in self.lines for piece in wrap_line(line, console.width)]
            if console.no_color:
                # NO_COLOR: Rich would still send bold and dim; plain text has no codes at all
                console.file.write("\n".join(t.plain for t in wrapped) + "\n")
            else:
                from rich.text import Text

                console.print(Text("\n").join(line.styled() for line in wrapped))
        self.lines = []


class PlainLineBuffer(LineBuffer):
    """Lines kept as their plain text, for output that is not a terminal (a pipe, a file):
    styles and wrapping are never needed there, and the text is a fraction of the memory."""

    def print(self, line: Line, **_: Any) -> None:
        self.lines.append(line.plain)  # type: ignore[arg-type]

    def write_to(self, console: Console) -> None:
        if self.lines:
            console.file.write("\n".join(self.lines) + "\n")  # type: ignore[arg-type]
        self.lines = []


# Where a long line may break, best first: after a comma (between map results, domain
# entries), before an arrow, before a binary operator, at any space.
_BREAKS = (", ", " -> ", " + ", " - ", " * ", " ")


def wrap_line(line: Line, width: int) -> list[Line]:
    """``line`` cut at token boundaries into lines of at most ``width`` columns (where a
    token allows it), the continuation lines indented four columns past the first."""
    plain = line.plain
    if width <= 20 or len(plain) <= width:
        return [line]
    indent = len(plain) - len(plain.lstrip(" ")) + 4
    cuts: list[int] = []
    start, limit = 0, width
    while len(plain) - start > limit:
        window = plain[start : start + limit + 1]
        cut = -1
        for token in _BREAKS:
            at = window.rfind(token, 1)
            if at > limit // 3:
                cut = at + (len(token) if token == ", " else 1 if token == " " else 0)
                break
        if cut <= 0:
            break  # one token longer than the line: leave it whole
        cuts.append(start + cut)
        start += cut
        while start < len(plain) and plain[start] == " ":
            start += 1
        cuts[-1] = start
        limit = width - indent
    if not cuts:
        return [line]
    out: list[Line] = []
    bounds = [0, *cuts, len(plain)]
    for k in range(len(bounds) - 1):
        piece = _slice(line, bounds[k], bounds[k + 1])
        if k:
            piece.pieces.insert(0, (" " * indent, None))
        text = piece.plain.rstrip(" ")
        if text != piece.plain:
            piece = _slice(piece, 0, len(text))
        out.append(piece)
    return out


def _slice(line: Line, begin: int, end: int) -> Line:
    out = Line()
    at = 0
    for text, style in line.pieces:
        lo, hi = max(begin - at, 0), min(end - at, len(text))
        if lo < hi:
            out.append(text[lo:hi], style)
        at += len(text)
    return out


def _verdict_style(label: str) -> str:
    if label.startswith("refuted"):
        return "bold red"
    if label.startswith("sampled"):
        return "yellow"
    return "green"


def render_instruction(console: Any, ins: InstructionAnalysis, spelling: str = "floordiv") -> None:
    header = Line()
    header.append(ins.name, style="bold cyan")
    header.append(" = ")
    header.append(ins.shape)
    header.append(" ")
    header.append(ins.opcode, style="bold")
    if ins.computation:
        header.append(f"   ({ins.computation})", style="dim")
    console.print(header)
    for note in ins.notes:
        console.print(Line("  " + note, style="yellow"))
    if not ins.operands:
        console.print(Line("  no operands", style="dim"))
    for op in ins.operands:
        title = Line(f"  operand {op.index}: ", style="bold")
        title.append(op.name)
        title.append(f"  {op.shape}", style="dim")
        status = op.status
        if status:
            title.append(f"  {status}", style=_STATUS_STYLE.get(status, "yellow"))
        if op.utilization is not None:
            u = op.utilization
            if u.is_unknown:
                title.append("  utilization: unknown", style="magenta")
            else:
                title.append(
                    f"  utilization: distinct {u.distinct:.4g}, reads {u.reads:.4g} ({u.kind})",
                    style="magenta",
                )
        console.print(title)
        if op.is_undefined:
            for note in op.notes:
                if note not in ins.notes:
                    console.print(Line("    " + note, style="yellow"))
        for label, maps, verdicts in (
            ("output→input", op.output_to_input, op.output_to_input_verdicts),
            ("input→output", op.input_to_output, op.input_to_output_verdicts),
        ):
            for k, m in enumerate(maps):
                line = Line(f"    {label}: ", style="dim")
                line.append(format_map(m, spelling))
                verdict = verdicts[k] if k < len(verdicts) else None
                if verdict is not None:
                    text = verdict_label(verdict)
                    line.append("   verified: ", style="dim")
                    line.append(text, style=_verdict_style(text))
                console.print(line)
        for name, _, m, producer in op.runtime_vars:
            line = Line(f"    {name}: {producer}; ", style="dim")
            line.append(format_map(m, spelling))
            console.print(line)


_STATUS_STYLE = {
    "exact": "green",
    "never read": "green",
    "over-approximation": "yellow",
    "unknown": "bold yellow",
}


def _is_trivial(op: Any) -> bool:
    """An operand read element for element: one identity map each way, exact."""
    maps = (*op.output_to_input, *op.input_to_output)
    return (
        op.status == "exact"
        and bool(maps)
        and all(_identity(m) for m in maps if not m.is_known_empty)
    )


def _identity(m: Any) -> bool:
    return (
        not m.range_vars
        and not m.rt_vars
        and not m.constraints
        and m.results == tuple(dim(k) for k in range(m.num_dims))
    )


def render_module(
    target: Console,
    analysis: ModuleAnalysis,
    spelling: str = "floordiv",
    hide_trivial: bool = False,
) -> None:
    console = LineBuffer()
    module_lines(console, analysis, spelling, hide_trivial)
    console.write_to(target)


def module_lines(
    console: Any,
    analysis: ModuleAnalysis,
    spelling: str,
    hide_trivial: bool,
) -> None:
    console.print(Line(f"module {analysis.module}", style="bold underline"))
    computation = None
    leaves: list[InstructionAnalysis] = []

    def flush() -> None:
        # parameters, constants and other operand-less instructions: one line per computation
        if leaves:
            names = ", ".join(f"{i.name} ({i.opcode})" for i in leaves)
            console.print(Line(f"  no operands: {names}", style="dim"))
            leaves.clear()

    for ins in analysis.instructions:
        if ins.computation != computation:
            flush()
            computation = ins.computation
            console.print(Line(f"computation {computation}", style="bold underline"))
        if not ins.operands and not ins.notes:
            leaves.append(ins)
            continue
        if hide_trivial:
            kept = [op for op in ins.operands if not _is_trivial(op)]
            if not kept and ins.operands:
                continue
            ins = replace(ins, operands=kept)
        render_instruction(console, ins, spelling)
    flush()
    unknown = sorted(
        {
            i.opcode
            for i in analysis.instructions
            if any(n.startswith("unknown indexing") for n in i.notes)
        }
    )
    summary = Line(f"{plural(len(analysis.instructions), 'instruction')} analysed", style="bold")
    if unknown:
        summary.append(f"; without a rule: {', '.join(unknown)}", style="yellow")
    console.print(summary)


def render_simplify(console: Console, doc: dict[str, Any], explain_rules: list[Any] | None) -> None:
    from rich.text import Text

    if explain_rules is not None:
        # One rule per line and the map unwrapped below it, so each map can be copied whole.
        console.print(Text(f"{plural(len(explain_rules), 'rule')} applied", style="bold"))
        for i, rule in enumerate(explain_rules, 1):
            console.print(Text(f"{i}. {rule['name']}", style="cyan"))
            console.print(Text("   " + rule["map"]), overflow="ignore", crop=False)
    console.print(Text(doc["simplified"]))
    verdict = doc.get("verdict")
    if verdict is not None:
        label = verdict["label"]
        line = Text("verdict: ", style="dim")
        line.append(label, style=_verdict_style(label))
        console.print(line)
        if verdict.get("counterexample"):
            console.print(Text(f"counterexample: {verdict['counterexample']}", style="red"))


PATHS_SHOWN = "one path per distinct map (other paths that give the same map are not listed)"


def render_chain(console: Console, doc: dict[str, Any]) -> None:
    """``hloidx maps --from A --to B``: the composed maps and the path that built each."""
    from rich.text import Text

    console.print(Text(f"{doc['from']} reads {doc['to']} through:", style="bold"))
    for m in doc["maps"]:
        console.print(Text("  " + m))
    u = doc.get("utilization")
    if u:
        console.print(
            Text(
                f"  utilization: distinct {u['distinct']:.4g}, "
                f"reads {u['reads']:.4g} ({u['kind']})",
                style="magenta",
            )
        )
    for replica in doc.get("replica_id_maps") or []:
        if replica is not None:
            console.print(Text("  read on the replica at group position " + replica, style="dim"))
    status = doc.get("status") or ("exact" if doc["exact"] else "over-approximation")
    console.print(Text("  " + status, style=_STATUS_STYLE.get(status, "yellow")))
    for note in doc.get("notes", []):
        console.print(Text("  " + note, style="yellow"))
    if doc.get("paths"):
        console.print(Text("  " + doc.get("paths_shown", PATHS_SHOWN), style="dim"))
    for k, path in enumerate(doc.get("paths", [])):
        console.print(Text(f"  path {k}:", style="dim"))
        for step in path:
            line = Text(f"    {step['instruction']} [{step['opcode']}]: ", style="dim")
            line.append(step["map"])
            console.print(line)


def tree_lines(console: Any, trees: list[dict[str, Any]]) -> None:
    """``--tree``: each fusion operand map with the composition steps that built it."""
    for tree in trees:
        console.print(
            Line(
                f"composition of {tree['instruction']} ({tree['computation']})",
                style="bold underline",
            )
        )
        for entry in tree["maps"]:
            console.print(
                Line(
                    f"  output {entry['output']} → operand {entry['operand']} "
                    f"({entry['operand_name']}):",
                    style="bold",
                )
            )
            for step in entry["steps"]:
                line = Line(f"    {step['instruction']} [{step['opcode']}]: ", style="dim")
                line.append(step["map"])
                console.print(line)


def maps_text_lines(
    analysis: Any,
    spelling: str = "floordiv",
    hide_trivial: bool = False,
    filtered: bool = False,
    trees: Any = None,
    plain: bool = False,
) -> list[Any]:
    """The text of ``hloidx maps``: every instruction of ``analysis``; unless ``filtered`` (a
    selection was asked for), the triage table after them; ``trees`` (``--tree``) last. Rich
    ``Text`` lines, or plain strings when ``plain``."""
    buffer = PlainLineBuffer() if plain else LineBuffer()
    module_lines(buffer, analysis, spelling, hide_trivial=hide_trivial)
    if not filtered:
        from ..hlo.summary import summarize
        from .summary import loop_trip_count, summary_lines

        # the triage table last, where a long scroll ends (`hloidx summary` alone)
        buffer.print(Line())
        doc = summarize(analysis, trip_counts=loop_trip_count)
        for text in summary_lines(doc, 20):
            buffer.print(Line(text))
    if trees is not None:
        tree_lines(buffer, trees)
    return buffer.lines
