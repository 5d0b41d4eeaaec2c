"""``hloidx cost``: what each kernel of a module costs on a GPU, and why (thin over
hloidx.perf)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .options import global_options, language_option


@click.command()
@click.argument("file", metavar="FILE", required=False)
@click.option(
    "--device",
    default=None,
    help="GPU: rtx-a6000 (XLA's test device, the default), a100, h100, or one of XLA's spec "
    "files (h100_sxm, b200, a100_pcie_80, ...; --list-devices shows them all). With "
    "--profile, the profiled GPU unless given.",
)
@click.option(
    "--device-spec",
    metavar="FILE.txtpb",
    help="A GPU spec file, as XLA reads it for --xla_gpu_target_config_filename (instead of "
    "--device).",
)
@click.option("--list-devices", is_flag=True, help="List the devices --device takes and stop.")
@click.option(
    "--gpus-per-node",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="GPUs per host: a collective whose groups fit in one host is single-host (XLA's "
    "measured NCCL tables), else multi-host (XLA's network model).",
)
@click.option(
    "--collective-config",
    metavar="KEY=VALUE,...",
    help="XLA's analytical latency estimator options: nccl_op_launch_us, nic_speed_gbps, "
    "chunk_prep_us, rtt_us, gpus_per_node, chunk_size_bytes.",
)
@click.option(
    "--model",
    type=click.Choice(["hloidx", "xla"]),
    default="hloidx",
    show_default=True,
    help="xla: what XLA uses where it uses it: its classic GpuPerformanceModel over "
    "GpuHloCostAnalysis for non-Triton kernels, its indexing model for Triton fusions, quirks "
    "kept and named in the row; hloidx: bytes from the elements the maps really read and "
    "coalescing from the thread-id maps.",
)
@click.option(
    "--fusion",
    type=click.Choice(["simulated", "none"]),
    default="simulated",
    show_default=True,
    help="A module before optimization: simulated (group and partition it as XLA:GPU "
    "would, then cost that) or none (every op a kernel of its own, at global shapes).",
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
    type=click.Choice(["text", "json", "html", "trace", "model-explorer"]),
    default="text",
    show_default=True,
    help="text, json, html (tables, roofline and the step's timeline), trace (the step as "
    "Chrome/Perfetto trace-event JSON: open it in ui.perfetto.dev) or model-explorer (each "
    "kernel's --metric as Model Explorer node data: model-explorer FILE "
    "--extensions=hloidx.model_explorer --node_data_paths=OUT.json).",
)
@click.option(
    "--metric",
    type=click.Choice(["time", "bytes", "flops", "bound", "coalescing", "measured"]),
    default="time",
    show_default=True,
    help="With --format model-explorer: what colours each kernel's node: estimated time per "
    "launch (us), bytes read + written, flops, bound (0 memory, 1 compute), the share of its "
    "operands read coalesced, or the measured time per launch (us; needs --profile).",
)
@click.option(
    "--compare",
    "compare_file",
    metavar="B.hlo",
    help="Compare with a second module: the same kernels before (FILE) and after (B.hlo).",
)
@click.option(
    "--profile",
    "profile_path",
    metavar="PROFILE",
    help="A measured profile of the module (nsys-jax archive or folder, Nsight Systems SQLite "
    "export, *.xplane.pb, trace.json.gz): each kernel's measured time beside its estimate "
    "(needs hloidx[profile]). FILE may be the profile itself when it carries its HLO.",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    help="With --profile: drop this many first executions per GPU (default: the leading "
    "executions slower than 1.1x the median, at least the first of three or more).",
)
@language_option
@global_options
def cost(
    file: str | None,
    device: str,
    device_spec: str | None,
    list_devices: bool,
    gpus_per_node: int,
    collective_config: str | None,
    model: str,
    fusion: str,
    sort: str,
    limit: int | None,
    fmt: str,
    metric: str,
    compare_file: str | None,
    profile_path: str | None,
    warmup: int | None,
    language: str,
) -> None:
    """Estimated time of every kernel the module launches on a GPU, and why.

    One row per kernel of the entry computation (fusions, unfused ops, library calls),
    sorted by estimated time: emitter, launch (blocks x threads per block), flops, bytes
    read and written, read / write / compute time, the estimate, whether memory or compute
    bounds it, its share of the module, and why (the operand that dominates and its reason:
    not coalesced, read N times per element, broadcast-heavy; registers spill; a
    compute-bound op). The totals add XLA's 1 us launch overhead per kernel (--model xla) or
    the gap between kernels measured on a GPU (the default). The numbers are estimates from
    XLA:GPU's cost model formulas, not measurements. --model xla reproduces XLA's model;
    --model hloidx (the default) counts each operand's bytes from the elements its maps
    really read and judges coalescing from the thread-id maps, and says in the row where that
    differs from XLA; it adds figures measured on a GPU: a kernel floor, GEMMs at a measured
    share of the peak, single-host collectives on every device, and a range for a scatter
    whose rows may collide. Triton fusions use the tiled model (the configured tiling,
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
        from ..perf.step_costs import device_rows

        if list_devices:
            rows = device_rows()
            if fmt == "json":
                click.echo(json.dumps({"schema_version": 1, "devices": rows}, indent=2))
            else:
                width = max(len(r["name"]) for r in rows)
                for r in rows:
                    click.echo(f"{r['name']:<{width}}  {r['compute_capability']:<7}  {r['source']}")
                    click.echo(f"{'':<{width}}  GEMMs: {r['gemm']}")
            return
        if file is None:
            raise click.UsageError("FILE is required (or --list-devices)")
        from . import measured_profile

        config = _collective_config(collective_config)
        profile = program = profile_error = None
        if profile_path is None and measured_profile.is_profile_path(file):
            profile_path = file
            profile = measured_profile.read(file, warmup)
            module, program = measured_profile.module_of(profile)
        else:
            module, _, errors = load_module(file, language)
            if errors:
                sys.exit(EXIT_BAD_INPUT)
            if profile_path is not None:
                try:
                    profile = measured_profile.read(profile_path, warmup)
                    program = measured_profile.program_of(profile, module, file)
                except HloidxError as error:
                    profile_error = error
        from_profile = None
        if profile is not None and device is None and device_spec is None:
            from_profile = measured_profile.profile_device(profile)
        target = from_profile or _device(device or "rtx-a6000", device_spec)

        def run(m: Any) -> Any:
            from ..fusion_sim import estimate_simulated, needs_simulation

            estimate = estimate_module
            if fusion == "simulated" and needs_simulation(m):
                estimate = estimate_simulated
            return estimate(m, target, model, gpus_per_node=gpus_per_node, collective_config=config)

        report = run(module)
        if program is not None:
            measured_profile.attach(report, module, profile, program)
        if compare_file is not None:
            other, _, errors = load_module(compare_file, language)
            if errors:
                sys.exit(EXIT_BAD_INPUT)
            comparison = compare_reports(report, run(other))
            if fmt == "json":
                click.echo(json.dumps(comparison.as_dict(), indent=2))
            elif fmt in ("html", "trace", "model-explorer"):
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
        elif fmt == "model-explorer":
            from ..model_explorer.convert import COST_METRICS, cost_values, node_data_document

            values = cost_values(report.as_dict(sort, None), metric)
            if not values and metric == "measured":
                raise click.UsageError("--metric measured needs --profile (a measured run)")
            label = f"{COST_METRICS[metric][1]} on {report.device.name}"
            click.echo(json.dumps(node_data_document(module, values, label)[0]))
        else:
            click.echo(report.text(sort, limit))
        if profile_error is not None:
            # the estimates are printed; the profile that could not be joined is the error
            report_error(profile_error)
            sys.exit(EXIT_BAD_INPUT)
    except HloidxError as error:
        report_error(error)
        sys.exit(EXIT_BAD_INPUT)


def _device(device: str, spec_file: str | None) -> Any:
    """The cost device: XLA's spec file when given, else the named device."""
    from ..perf.gpu_specs import cost_device_from_spec, read_spec, resolve_device
    from .options import read_text

    if spec_file is None:
        return resolve_device(device)
    text, name = read_text(spec_file, "device spec")
    return cost_device_from_spec(read_spec(text, name))


def _collective_config(text: str | None) -> dict[str, str] | None:
    """``key=value,...`` with XLA's option names: a positive number for ``nic_speed_gbps``, a
    positive whole number for the others (XLA would ignore anything else without a word)."""
    if not text:
        return None
    from ..perf.ring_latency import OPTION_NAMES

    config: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or key not in OPTION_NAMES:
            raise click.BadParameter(
                f"{item!r}: expected KEY=VALUE with KEY one of {', '.join(OPTION_NAMES)}",
                param_hint="--collective-config",
            )
        try:
            number = float(value) if key == "nic_speed_gbps" else int(value)
        except ValueError:
            number = 0
        if number <= 0:
            kind = "a positive number" if key == "nic_speed_gbps" else "a positive whole number"
            raise click.BadParameter(
                f"{key}={value!r} is not {kind}", param_hint="--collective-config"
            )
        config[key] = value
    return config
