"""``hloidx threads`` and ``hloidx coalescing``: the GPU view (thin clients of hloidx.gpu)."""

from __future__ import annotations

import json
import sys

import click

from ..render.gpu import coalescing_lines, threads_lines
from .options import global_options, language_option, names_option

_DEVICE_HELP = "GPU profile: a100, h100 or rtx-a6000 (the device of XLA's GPU tests)."


def _device_options(fn):
    fn = click.option("--vector", type=click.IntRange(min=1), help="Vector size (sets unroll).")(fn)
    fn = click.option(
        "--unroll", type=click.IntRange(min=1), help="Unroll factor instead of XLA's choice."
    )(fn)
    fn = click.option(
        "--threads-per-block",
        type=click.IntRange(min=1),
        help="Threads per block instead of XLA's choice.",
    )(fn)
    fn = click.option("--device", default="rtx-a6000", show_default=True, help=_DEVICE_HELP)(fn)
    return fn


def _load(file: str, language: str):
    """The module, or exit 2: the GPU view is not shown for a module with broken lines. A
    fused computation on its own becomes a fusion in a synthetic entry (``wrap_lone_fusion``)."""
    from ..hlo.lone_fusion import wrap_lone_fusion
    from .options import EXIT_BAD_INPUT, load_module

    module, where, errors = load_module(file, language)
    if errors:
        sys.exit(EXIT_BAD_INPUT)
    return wrap_lone_fusion(module), where


def _find_fusion(module, instruction: str | None, where: str):
    """The fusion ``--instruction`` names (a fusion before any other instruction of that
    name); without ``--instruction``, the module's only fusion."""
    fusions = [i for i in module.instructions() if i.opcode == "fusion"]
    listed = ", ".join(f.name for f in fusions[:12]) or "none"
    if instruction is None:
        if len(fusions) == 1:
            return fusions[0]
        raise click.UsageError(
            f"{where} has {len(fusions)} fusions: name one with --instruction; fusions: {listed}"
        )
    name = instruction.lstrip("%")
    fusion = next((f for f in fusions if f.name == name), None) or module.instruction(name)
    if fusion is None or fusion.opcode != "fusion":
        what = "no instruction" if fusion is None else "not a fusion:"
        raise click.UsageError(f"{what} {name!r} in {where}; fusions: {listed}")
    return fusion


def _setup(device: str, threads_per_block, unroll, vector):
    from ..gpu.devices import device_profile
    from ..gpu.launch import Overrides

    return device_profile(device), Overrides(threads_per_block, unroll, vector)


@click.command()
@click.argument("file", metavar="FILE")
@click.option(
    "--instruction",
    metavar="NAME",
    help="The fusion (% optional); may be left out when the module has one fusion.",
)
@_device_options
@click.option("--physical", is_flag=True, help="Also map to linear addresses via the layouts.")
@click.option("--no-verify", is_flag=True, help="Do not check the simplified maps.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@language_option
@names_option
@global_options
def threads(
    file: str,
    instruction: str | None,
    device: str,
    threads_per_block: int | None,
    unroll: int | None,
    vector: int | None,
    physical: bool,
    no_verify: bool,
    fmt: str,
    language: str,
    names: str,
) -> None:
    """Thread-id maps of a fusion: which element each GPU thread writes and reads.

    The launch configuration is XLA:GPU's for the fusion's emitter on --device: loop,
    concatenate, input slices, in-place dynamic-update-slice, the reduction emitters (row,
    multi-row, column, small column), the shared-memory and packed transposes, and the
    scatters (override it with --threads-per-block, --unroll, --vector for the emitters that
    walk a shape). Maps go from (th_x, th_y, th_z, bl_x, bl_y, bl_z)[symbols] to each output
    element and, composed with the fusion's maps, to each operand element; --physical
    continues them through the operands' layouts to linear addresses. Each simplified map
    is verified against the map as built ([proved], [exhaustive], [sampled]). What depends on
    runtime values (where a scatter writes) is UNDEFINED, and the notes say why.

    A file holding just a fused computation (as XLA's emitter tests and dumps have them) is
    analysed as a fusion of that body in a synthetic entry, its parameters the operands; its
    kind is kInput when a root is a reduction, else kLoop, and a note says so.

    \b
    Examples:
      hloidx threads tests/data/gpu/view/seed001.hlo --instruction fusion
      hloidx threads tests/data/gpu/view/seed001.hlo --instruction fusion --physical
      hloidx threads tests/data/gpu/view/seed001.hlo --instruction fusion --device h100 -q
      hloidx threads tests/data/gpu/emitters/gpu/reduce_row/side_output.hlo
    """
    from ..gpu.analysis import analyze_fusion
    from ..gpu.report import threads_document

    module, where = _load(file, language)
    profile, overrides = _setup(device, threads_per_block, unroll, vector)
    fusion = _find_fusion(module, instruction, where)
    view = analyze_fusion(fusion, profile, overrides)
    variables = None
    if names == "roles":
        from ..gpu.thread_names import add_variables, name_thread_view

        view, variables = name_thread_view(view)
    doc = threads_document(module.name, view, profile, physical=physical, verify=not no_verify)
    if variables is not None:
        add_variables(doc, view, variables)
    if fmt == "json":
        click.echo(json.dumps(doc))
    else:
        click.echo("\n".join(threads_lines(doc)))


@click.command()
@click.argument("file", metavar="FILE")
@_device_options
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@language_option
@global_options
def coalescing(
    file: str,
    device: str,
    threads_per_block: int | None,
    unroll: int | None,
    vector: int | None,
    fmt: str,
    language: str,
) -> None:
    """Whether each fusion's reads of each operand are coalesced on a GPU.

    For every fusion of the entry computation and every operand, XLA's coalescing analysis
    on hloidx's thread-id maps through the operand's layout: the first warp's addresses
    (runtime variables at their midpoints), split into contiguous ranges, counted in
    128-byte transactions against the ideal. The figures beside the verdict are measured
    from the first warp's map: transactions of the device's size touched (and the ideal),
    and bytes fetched per byte used. UNDEFINED maps count as not coalesced; emitters whose
    thread maps hloidx does not model fall back to XLA's heuristic and say so. A file holding
    just a fused computation is analysed as one fusion of that body (see ``hloidx threads``).

    \b
    Examples:
      hloidx coalescing tests/data/gpu/view/coalescing.hlo
      hloidx coalescing tests/data/gpu/view/coalescing.hlo --device a100 --format json
    """
    from ..gpu.analysis import analyze_module
    from ..gpu.report import coalescing_document

    module, _ = _load(file, language)
    profile, overrides = _setup(device, threads_per_block, unroll, vector)
    doc = coalescing_document(module.name, analyze_module(module, profile, overrides), profile)
    if fmt == "json":
        click.echo(json.dumps(doc))
    else:
        click.echo("\n".join(coalescing_lines(doc)))
