"""``hloidx summary``: the triage table of a module (a thin client of
:mod:`hloidx.hlo.summary`), and the drawing of that table that ``maps`` also prints."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .options import global_options, language_option, plural

#: ``hloidx.hlo.summary.SORT_KEYS``, spelled out so that ``--help`` loads no analysis layer
#: (tests/test_startup.py checks that they agree)
SORT_KEYS = ("total", "reads", "distinct", "name", "size")


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
    grouped = ""
    if doc.get("grouped"):
        instructions = doc.get("row_instructions", len(doc["rows"]))
        grouped = f", {plural(len(doc['rows']), 'row')} for {plural(instructions, 'instruction')}"
    lines = [f"summary of {doc['module']} (entry computation, sorted by {doc['sort']}{grouped})"]
    counted = any(row.get("count", 1) > 1 for row in rows)
    header: tuple[str, ...] = (
        "instruction",
        *(("count",) if counted else ()),
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
    widths = [max(len(r[k]) for r in table) for k in range(len(header))]
    for r in table:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    if limit > 0 and len(doc["rows"]) > limit:
        lines.append(f"... {len(doc['rows']) - limit} more rows (--limit 0 shows every row)")
    totals = doc["totals"]
    n = totals["instructions"]
    lines.append(f"totals over {plural(n, 'instruction')}:")
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


@click.command()
@click.argument("file", metavar="FILE")
@click.option(
    "--device",
    default=None,
    help="Add each fusion operand's coalescing verdict and each kernel's estimated time on "
    "this GPU (a100, h100, rtx-a6000).",
)
@click.option(
    "--sort",
    type=click.Choice([*SORT_KEYS, "time"]),
    default="total",
    show_default=True,
    help="total: most element reads first (a group's members together); reads: most re-read "
    "operand first; distinct: least-used operand first; size: largest output first; name; "
    "time: most estimated kernel time first, a group's members together (needs --device).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=40,
    show_default=True,
    help="Rows to show in text (0: all); JSON always has every row.",
)
@click.option(
    "--no-group",
    is_flag=True,
    help="One row per instruction, even for the repeats of one layer.",
)
@click.option("--no-verify", is_flag=True, help="Do not check simplifications (faster).")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@language_option
@global_options
def summary(
    file: str,
    device: str | None,
    sort: str,
    limit: int,
    no_group: bool,
    no_verify: bool,
    fmt: str,
    language: str,
) -> None:
    """A triage table of an HLO module: which ops read how much of what, and how sure that is.

    One row per instruction of the entry computation that reads memory (fusions, custom-calls,
    collectives, ...); structurally equal instructions (the repeats of one layer: the same op,
    shapes and attributes, called computations equal up to names, the same figures) share one
    row with their count (`x32`; --no-group: a row each; JSON: `count`, `members`). `total
    reads` is the element reads of all operands (reads per element times elements), the
    default order. Per operand: its shape, `distinct` (fraction of its elements read at
    least once), `reads` (reads per element; `~` marks an estimate), its status (exact,
    over-approximation, unknown, never read), the number of distinct maps (`rt`: a runtime
    variable is involved). A Triton fusion shows its block sizes. Then totals: instructions by
    opcode, operands by status, simplification verdicts, and the ops without a rule with the
    number of operands they leave UNDEFINED. With --device, a column says whether each fusion
    operand's reads are coalesced on that GPU (see `hloidx coalescing`) and another its
    estimated time (see `hloidx cost`); --sort time puts the slowest kernel first.

    \b
    Examples:
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo --sort distinct --limit 10
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo --format json
      hloidx summary tests/data/gpu/view/coalescing.hlo --device a100
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo --no-group --sort reads
      hloidx summary tests/data/gpu/view/coalescing.hlo --device a100 --sort time
    """
    from ..hlo.analysis import analyze
    from ..hlo.summary import summarize
    from .collector import relaxed_collector
    from .options import EXIT_BAD_INPUT, load_module, progress

    with relaxed_collector():
        module, _, errors = load_module(file, language)
        update, stop = progress(fmt == "text" and sys.stderr.isatty(), "analysing")
        try:
            analysis = analyze(module, verify=not no_verify, progress=update)
        finally:
            stop()
        if sort == "time" and device is None:
            raise click.UsageError("--sort time needs --device (the GPU to estimate on)")
        # the memo tables have served: their memory holds the summary's rows instead
        from ..caches import clear_caches

        clear_caches()
        doc = summarize(analysis, "total" if sort == "time" else sort, group=not no_group)
    if device is not None:
        add_coalescing(doc, module, device)
        add_estimates(doc, module, device, sort)
    if fmt == "json":
        click.echo(json.dumps(doc))
    else:
        click.echo("\n".join(summary_lines(doc, limit)))
    if errors:
        sys.exit(EXIT_BAD_INPUT)
