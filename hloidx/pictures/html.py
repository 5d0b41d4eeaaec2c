"""One self-contained HTML page for a module (``hloidx maps FILE --format html``): the triage
table (sortable), each instruction's maps, verdicts, status and utilization, and the picture of
each operand. No network, no external script. The page carries its content as compact JSON
(each string once) that its script expands on demand, so it stays a small multiple of its
module (:mod:`.page_data`, :mod:`.page_script`). Pictures are bounded: a fixed number per page,
counts from at most a fixed budget of domain points per map (sampled beyond, and labelled so).
``instruction_section`` writes one instruction as plain HTML (a notebook's view)."""

from __future__ import annotations

from html import escape
from typing import Any

from . import operand_picture
from .page_data import MAX_PICTURES, PICTURE_BUDGET, pack, page_data
from .page_script import LOADER, SCRIPT, STYLE
from .svg import svg


def report(analysis: Any, summary: dict[str, Any], spelling: str = "floordiv") -> str:
    """The page: its header and the summary table's head in HTML; the table's rows and every
    instruction as compact JSON (each string once), which the page's script expands, an
    instruction's maps and pictures when it is opened (see :mod:`.page_data`)."""
    data = page_data(analysis, summary, spelling)
    head = "".join(f"<th>{escape(h)}</th>" for h in data["header"])
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>hloidx: {escape(analysis.module)}</title>",
            f"<style>{STYLE}</style></head><body>",
            f"<h1>module {escape(analysis.module)}</h1>",
            f"<p>{len(analysis.instructions)} instructions analysed. Each picture colours an "
            "operand's elements by how many times they are read when the whole output is "
            "computed (white: never).</p>",
            "<noscript><p>This page writes its table and instructions with its own script "
            "(nothing is fetched): allow JavaScript, or read <code>hloidx maps FILE --format "
            "text</code> or <code>--format json</code>.</p></noscript>",
            "<h2>Summary</h2>",
            f'<table class="sortable" id="summary"><thead><tr>{head}</tr></thead>'
            "<tbody></tbody></table>",
            "<h2>Instructions</h2>",
            '<p class="note">Open an instruction to see its maps, verdicts, status, utilization '
            f"and pictures. The first {MAX_PICTURES} operands have a picture; "
            "<code>hloidx show FILE --instruction NAME --operand N</code> draws any other. "
            '<button id="open-all">open all</button> <button id="close-all">close all'
            "</button></p>",
            '<div id="instructions"></div>',
            '<p id="loading">unpacking the page…</p>',
            f'<script type="application/octet-stream" id="hloidx-data">{pack(SCRIPT, data)}'
            "</script>",
            f"<script>{LOADER}</script></body></html>",
        ]
    )


def instruction_section(
    ins: Any, spelling: str = "floordiv", pictures_left: int = MAX_PICTURES
) -> tuple[list[str], int]:
    """The HTML of one analysed instruction (its maps, verdicts, utilization and, while
    ``pictures_left``, each operand's picture as inline SVG), and the number of pictures drawn.
    A notebook shows one instruction so, every cell written out (the report's page writes the
    same from its data, in the browser: see ``page_script``)."""
    from ..hlo.report import format_map, verdict_label

    parts: list[str] = []
    pictures = 0
    parts.append(
        f'<section class="instruction" id="ins-{escape(ins.name)}"><h3><code>'
        f"{escape(ins.name)} = {escape(ins.shape)} {escape(ins.opcode)}</code>"
        f' <span class="note">({escape(ins.computation)})</span></h3>'
    )
    for note in ins.notes:
        parts.append(f'<p class="note">{escape(note)}</p>')
    for k, op in enumerate(ins.operands):
        status = op.status or ""
        util = ""
        if op.utilization is not None and not op.utilization.is_unknown:
            u = op.utilization
            util = f" utilization: distinct {u.distinct:.4g}, reads {u.reads:.4g} ({u.kind})"
        parts.append(
            f'<div class="operand"><h4><code>operand {k}: {escape(op.name)} '
            f'{escape(op.shape)}</code> <span class="{escape(status)}">{escape(status)}</span>'
            f"{escape(util)}</h4><pre>"
        )
        for label, maps, verdicts in (
            ("output→input", op.output_to_input, op.output_to_input_verdicts),
            ("input→output", op.input_to_output, op.input_to_output_verdicts),
        ):
            for j, m in enumerate(maps):
                verdict = verdicts[j] if j < len(verdicts) else None
                tail = f"   verified: {verdict_label(verdict)}" if verdict is not None else ""
                parts.append(escape(f"{label}: {format_map(m, spelling)}{tail}") + "\n")
        parts.append("</pre>")
        if pictures >= pictures_left:
            parts.append(
                f'<p class="note">picture left out: a page holds {MAX_PICTURES}; '
                f"<code>hloidx show FILE --instruction {escape(ins.name)} --operand {k}"
                "</code> draws it</p>"
            )
        else:
            pic, counts = operand_picture(ins, k, budget=PICTURE_BUDGET, max_cols=48)
            if pic is None:
                parts.append(f'<p class="note">no picture: {escape(counts.note)}</p>')
            else:
                parts.append(svg(pic))
                pictures += 1
        parts.append("</div>")
    parts.append("</section>")
    return parts, pictures


__all__ = ["MAX_PICTURES", "PICTURE_BUDGET", "instruction_section", "report"]
