"""``hloidx summary``: the triage table of a module (a thin client of
:mod:`hloidx.hlo.summary`), and the drawing of that table that ``maps`` also prints."""

from __future__ import annotations

import json
import sys

import click

from ..render.summary import add_coalescing, add_estimates, loop_trip_count, summary_lines
from .options import global_options, language_option, names_option

#: ``hloidx.hlo.summary.SORT_KEYS``, spelled out so that ``--help`` loads no analysis layer
#: (tests/test_startup.py checks that they agree)
SORT_KEYS = ("total", "reads", "distinct", "name", "size")


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
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "model-explorer"]),
    default="text",
    show_default=True,
    help="text, json, or model-explorer (each instruction's --metric as Model Explorer node "
    "data, for model-explorer FILE --extensions=hloidx.model_explorer "
    "--node_data_paths=OUT.json).",
)
@click.option(
    "--metric",
    type=click.Choice(["reads", "distinct", "total"]),
    default="reads",
    show_default=True,
    help="With --format model-explorer: what colours each instruction's node: the most reads "
    "per element of any operand, the least share of an operand's elements read (utilization), "
    "or its element reads in all.",
)
@names_option
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
    metric: str,
    names: str,
    language: str,
) -> None:
    """A triage table of an HLO module: which ops read how much of what, and how sure that is.

    One row per instruction that reads memory (fusions, custom-calls, collectives, ...) in the
    computations that run: the entry, loop bodies and conditions, conditional branches, called
    computations; `in` says where a row lives and `runs` how often it runs per call of the entry
    (a loop body: its trip count, `x?` unknown; `<=` behind a branch). Structurally equal
    instructions (the repeats of one layer: the same op, shapes and attributes, called
    computations equal up to names, the same figures) share one row with their count (`x32`;
    --no-group: a row each; JSON: `count`, `members`). `total reads` is the element reads of all
    operands over all runs (reads per element times elements times runs), the default order. Per
    operand: its shape, `distinct` (fraction of its elements read at least once), `reads` (reads
    per element; `~` marks an estimate), its status (exact, over-approximation, unknown, never
    read), the number of distinct maps (`rt`: a runtime variable is involved). A Triton fusion
    shows its block sizes. Then totals over every instruction of the module, each counted once
    (fused ones included): instructions by opcode, operands by status, simplification verdicts,
    and the ops without a rule with the number of operands they leave UNDEFINED. With --device,
    a column says whether each fusion operand's reads are coalesced on that GPU (see `hloidx
    coalescing`) and another its estimated time (see `hloidx cost`); --sort time puts the
    slowest kernel first. With --names roles, each operand row also shows its maps (text: without
    their domains; JSON: `named_maps` in full and each map's `variables`, name, kind and role),
    their variables named by what they index (see `hloidx maps --names`).

    \b
    Examples:
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo --sort distinct --limit 10
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo --format json
      hloidx summary tests/data/gpu/view/coalescing.hlo --device a100
      hloidx summary samples/corpus/cnn_pool_batchnorm.opt.hlo --no-group --sort reads
      hloidx summary tests/data/gpu/view/coalescing.hlo --device a100 --sort time
      hloidx summary samples/seed000/dot.hlo --names roles
    """
    from ..hlo.analysis import analyze
    from ..hlo.summary import summarize
    from .collector import keep_parsed, relaxed_collector
    from .options import EXIT_BAD_INPUT, load_module, progress

    with relaxed_collector():
        module, _, errors = load_module(file, language)
        keep_parsed()
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
        doc = summarize(
            analysis,
            "total" if sort == "time" else sort,
            group=not no_group,
            trip_counts=loop_trip_count,
        )
        if names == "roles":
            from ..hlo.summary_names import add_named_maps

            add_named_maps(doc, analysis)
    if device is not None:
        add_coalescing(doc, module, device)
        add_estimates(doc, module, device, sort)
    if fmt == "json":
        click.echo(json.dumps(doc))
    elif fmt == "model-explorer":
        from ..model_explorer.convert import SUMMARY_METRICS, node_data_document, summary_values

        values = summary_values(doc, metric)
        click.echo(json.dumps(node_data_document(module, values, SUMMARY_METRICS[metric][1])[0]))
    else:
        click.echo("\n".join(summary_lines(doc, limit)))
    if errors:
        sys.exit(EXIT_BAD_INPUT)
