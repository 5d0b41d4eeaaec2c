"""``hloidx cost``: what each kernel of a module costs on a GPU, and why (thin over
hloidx.perf)."""

from __future__ import annotations

import json
import sys

import click

from .options import global_options, language_option


@click.command()
@click.argument("file", metavar="FILE")
@click.option(
    "--device",
    default="rtx-a6000",
    show_default=True,
    help="GPU profile: rtx-a6000 (XLA's test device), a100 or h100.",
)
@click.option(
    "--model",
    type=click.Choice(["hloidx", "xla"]),
    default="hloidx",
    show_default=True,
    help="xla: XLA's indexing cost model as is; hloidx: bytes from the elements the maps "
    "really read and coalescing from the thread-id maps.",
)
@click.option(
    "--sort",
    type=click.Choice(["time", "bytes", "flops", "name"]),
    default="time",
    show_default=True,
)
@click.option("--limit", type=click.IntRange(min=1), help="Show the first N kernels only.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "html", "trace"]),
    default="text",
    show_default=True,
    help="text, json, html (tables, roofline and the step's timeline) or trace (the step as "
    "Chrome/Perfetto trace-event JSON: open it in ui.perfetto.dev).",
)
@click.option(
    "--compare",
    "compare_file",
    metavar="B.hlo",
    help="Compare with a second module: the same kernels before (FILE) and after (B.hlo).",
)
@language_option
@global_options
def cost(
    file: str,
    device: str,
    model: str,
    sort: str,
    limit: int | None,
    fmt: str,
    compare_file: str | None,
    language: str,
) -> None:
    """Estimated time of every kernel the module launches on a GPU, and why.

    One row per kernel of the entry computation (fusions, unfused ops, library calls),
    sorted by estimated time: emitter, launch (blocks x threads per block), flops, bytes
    read and written, read / write / compute time, the estimate, whether memory or compute
    bounds it, its share of the module, and why (the operand that dominates and its reason:
    not coalesced, read N times per element, broadcast-heavy; registers spill; a
    compute-bound op). The totals add XLA's 1 us launch overhead per kernel. The numbers are
    estimates from XLA:GPU's cost model formulas, not measurements. --model xla reproduces
    XLA's model; --model hloidx (the default) counts each operand's bytes from the elements
    its maps really read and judges coalescing from the thread-id maps, and says in the row
    where that differs from XLA. Triton fusions use the tiled model (the configured tiling,
    or the best of XLA's search); a tiling that spills registers "does not fit".

    Loops and the step: a while loop's kernels count its trip count (known_trip_count, else
    derived from its condition as XLA does, else unknown and counted once); a conditional
    counts its most expensive branch. The text ends with the step: the entry computation in
    its order (XLA's schedule when is_scheduled=true), kernels one after another, async
    collectives beside them from -start to -done; step time, compute, communication and the
    exposed communication (what the compute stream waits for). --format trace writes the
    step as Chrome/Perfetto trace events.

    \b
    Examples:
      hloidx cost tests/data/gpu/view/coalescing.hlo
      hloidx cost tests/data/gpu/view/coalescing.hlo --model xla --format json
      hloidx cost tests/data/xla/cost/triton_softmax.hlo --device h100
      hloidx cost tests/data/gpu/view/coalescing.hlo --compare tests/data/gpu/view/seed001.hlo
      hloidx cost samples/step/allgather_overlap.hlo --device h100 --format trace
    """
    from ..errors import HloidxError
    from .options import EXIT_BAD_INPUT, load_module, report_error

    try:
        from ..perf import compare_reports, estimate_module

        module, _, errors = load_module(file, language)
        if errors:
            sys.exit(EXIT_BAD_INPUT)
        report = estimate_module(module, device, model)
        if compare_file is not None:
            other, _, errors = load_module(compare_file, language)
            if errors:
                sys.exit(EXIT_BAD_INPUT)
            comparison = compare_reports(report, estimate_module(other, device, model))
            if fmt == "json":
                click.echo(json.dumps(comparison.as_dict(), indent=2))
            elif fmt in ("html", "trace"):
                raise click.UsageError("--compare prints text or json")
            else:
                click.echo(comparison.text(limit))
            return
        if fmt == "json":
            click.echo(json.dumps(report.as_dict(sort, limit), indent=2))
        elif fmt == "html":
            from ..render.cost_html import report_html

            click.echo(report_html(report, sort))
        elif fmt == "trace":
            from ..render.trace import trace_events

            click.echo(json.dumps(trace_events(report)))
        else:
            click.echo(report.text(sort, limit))
    except HloidxError as error:
        report_error(error)
        sys.exit(EXIT_BAD_INPUT)
