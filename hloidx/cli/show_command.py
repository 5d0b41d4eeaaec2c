"""``hloidx show``: a heatmap of one operand, every element coloured by how often it is read."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..render.pictures import picture_document, picture_lines
from .options import (
    EXIT_BAD_INPUT,
    console,
    global_options,
    language_option,
    load_module,
    names_option,
)


def _ints(text: str | None, what: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip() != "")
    except ValueError:
        raise click.BadParameter(
            f"{what} is a comma-separated list of integers: {text!r}"
        ) from None


@click.command()
@click.argument("file", metavar="FILE")
@click.option("--instruction", required=True, metavar="NAME", help="The instruction (% optional).")
@click.option(
    "--operand",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Which operand to draw.",
)
@click.option(
    "--dims",
    metavar="A,B",
    help="The two operand dimensions drawn as rows and "
    "columns (the others are summed over); default: the last two.",
)
@click.option(
    "--output-element",
    metavar="I,J,...",
    help="Outline the elements this one output element reads.",
)
@click.option(
    "--tile",
    "tile_sizes",
    metavar="SIZES",
    help="Outline what one output tile reads (sizes as for `hloidx tile`).",
)
@click.option(
    "--tile-index",
    metavar="I,J,...",
    help="Which tile (default: the first).",
)
@click.option(
    "--warp",
    metavar="BLOCK,WARP",
    help="Outline what one warp of the fusion's GPU kernel reads (as `hloidx threads`).",
)
@click.option("--device", default="rtx-a6000", show_default=True, help="GPU profile for --warp.")
@click.option("--svg", "svg_file", metavar="FILE", help="Also write the picture as SVG.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@language_option
@names_option
@global_options
def show(
    file: str,
    instruction: str,
    operand: int,
    dims: str | None,
    output_element: str | None,
    tile_sizes: str | None,
    tile_index: str | None,
    warp: str | None,
    device: str,
    svg_file: str | None,
    fmt: str,
    language: str,
    names: str,
) -> None:
    """A heatmap of one operand: each element coloured by how many times it is read when the
    whole output is computed (from the operand's output-to-input maps, the same counts that
    `reads` averages). Higher ranks show two dimensions (`--dims`), summed over the others;
    large operands are drawn in blocks of elements (the legend says so). `--output-element`
    outlines what one output element reads; `--tile 4,100 [--tile-index 2,0]` what one
    output tile reads (the tile `hloidx tile` describes); `--warp 0,1` what warp 1 of block 0
    of the fusion's GPU kernel reads (the thread maps of `hloidx threads`, on --device).
    Counts are exact when the domain is small enough to enumerate, else sampled (labelled);
    an operand read through an op without a rule has no picture.

    \b
    Examples:
      hloidx show samples/seed000/reduce_window.hlo --instruction reduce-window
      hloidx show samples/seed000/pad.hlo --instruction pad --output-element 3,5
      hloidx show tests/data/tiling/seed004.hlo --instruction fusion --tile 4,100 --tile-index 2,0
      hloidx show tests/data/gpu/view/coalescing.hlo --instruction added --operand 1 --warp 0,1
    """
    from ..hlo.analysis import analyze
    from ..hlo.selection import SelectionError, select_instructions
    from ..pictures import operand_picture
    from ..pictures.svg import svg

    module, where, errors = load_module(file, language)
    try:
        selected = select_instructions(
            module, instructions={instruction.lstrip("%")}, all_computations=True
        )
    except SelectionError as error:
        raise click.UsageError(f"{error.message} in {where}{error.hint}") from None
    analysis = analyze(module, verify=False, only=selected[:1])
    ins = analysis.instructions[0]
    if operand >= len(ins.operands):
        raise click.UsageError(
            f"{ins.name} has {len(ins.operands)} operand(s); no operand {operand}"
        )
    width = console().width or 80
    chosen = [x for x in (output_element, tile_sizes, warp) if x is not None]
    if len(chosen) > 1:
        raise click.UsageError("give one of --output-element, --tile and --warp")
    region, marked = None, "the chosen output element"
    if tile_sizes is not None:
        region, marked = _tile_region(ins.instruction, tile_sizes, tile_index)
    elif tile_index is not None:
        raise click.UsageError("--tile-index needs --tile")
    operand_points = None
    if warp is not None:
        operand_points, marked = _warp_points(ins.instruction, warp, device, operand)
    try:
        pic, counts = operand_picture(
            ins,
            operand,
            dims=_pair(_ints(dims, "--dims")),
            output_element=_ints(output_element, "--output-element"),
            output_region=region,
            operand_points=operand_points,
            max_cols=max(8, min(64, (width - 10) // 2)),
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    op = ins.operands[operand]
    title = f"{ins.name} operand {operand}: {op.name} {op.shape}"
    if pic is None:
        message = f"{title}: no picture: {counts.note}"
        if fmt == "json":
            click.echo(
                json.dumps(
                    {
                        "schema_version": 1,
                        "instruction": ins.name,
                        "operand": operand,
                        "picture": None,
                        "reason": counts.note,
                    }
                )
            )
        else:
            click.echo(message)
        return
    if svg_file:
        with open(svg_file, "w", encoding="utf-8") as handle:
            handle.write(svg(pic, title))
    named = _named_maps(ins, operand) if names == "roles" else None
    if fmt == "json":
        doc = picture_document(ins.name, operand, op, pic)
        if named is not None:
            doc["maps"], doc["variables"] = named
        click.echo(json.dumps(doc))
        return
    _draw(title, pic, marked)
    if named is not None:  # --names roles: the maps pictured, their variables named
        for text in named[0]:
            click.echo(f"  map: {text}")
    if errors:
        sys.exit(EXIT_BAD_INPUT)


def _named_maps(ins: Any, operand: int) -> tuple[list[str], list[Any]]:
    """The operand's output-to-input maps named by role, and their variables."""
    from ..hlo.role_names import name_instruction
    from ..maps.printer import format_map
    from ..maps.var_names import variables_json

    op = name_instruction(ins).operands[operand]
    found = op.map_names[0] if op.map_names else [None] * len(op.output_to_input)
    texts = [format_map(m) for m in op.output_to_input]
    return texts, [variables_json(m, n) for m, n in zip(op.output_to_input, found, strict=False)]


def _pair(values: tuple[int, ...] | None) -> tuple[int, int] | None:
    if values is None:
        return None
    if len(values) != 2:
        raise click.BadParameter("--dims takes two dimensions, e.g. --dims 0,2")
    return values[0], values[1]


def _tile_region(
    instr: Any, sizes_text: str, index_text: str | None
) -> tuple[tuple[tuple[int, int], ...], str]:
    sizes = _ints(sizes_text, "--tile")
    extents = tuple(instr.shape.dims) if instr.shape.is_array else ()
    if sizes is None or len(sizes) != len(extents):
        raise click.UsageError(f"--tile needs {len(extents)} sizes for output {list(extents)}")
    index = _ints(index_text, "--tile-index") or tuple(0 for _ in sizes)
    if len(index) != len(sizes):
        raise click.UsageError(f"--tile-index needs {len(sizes)} indices")
    box = []
    for k, (s, t, n) in enumerate(zip(sizes, index, extents, strict=True)):
        if s < 1 or not 0 <= t * s < n:
            raise click.UsageError(f"tile {list(index)} of sizes {list(sizes)} is outside dim {k}")
        box.append((t * s, min(n, (t + 1) * s) - 1))
    return tuple(box), f"output tile {list(index)} of sizes {list(sizes)}"


def _warp_points(
    instr: Any, warp_text: str, device: str, operand: int
) -> tuple[list[tuple[int, ...]], str]:
    from ..errors import HloidxError
    from ..gpu.analysis import analyze_fusion
    from ..gpu.devices import device_profile
    from ..gpu.thread_maps import warp_operand_elements

    values = _ints(warp_text, "--warp")
    if values is None or len(values) != 2:
        raise click.UsageError("--warp takes BLOCK,WARP, e.g. --warp 0,1")
    if instr.opcode != "fusion":
        raise click.UsageError("--warp needs a fusion (the GPU kernel XLA emits for it)")
    view = analyze_fusion(instr, device_profile(device))
    if operand >= len(view.threads.operands):
        raise click.UsageError(f"{instr.name} has no operand {operand}")
    try:
        points = warp_operand_elements(view.threads, values[0], values[1], operand)
    except HloidxError as error:
        raise click.UsageError(str(error)) from None
    label = f"warp {values[1]} of block {values[0]} ({len(points)} elements)"
    return points, label


def _draw(title: str, pic: Any, marked: str = "the chosen output element") -> None:
    from rich.text import Text

    out = console()
    plain = not out.is_terminal or out.no_color
    lines = picture_lines(title, pic, marked, plain)
    if plain:
        out.file.write("\n".join(t.plain for t in lines) + "\n")
    else:
        out.print(Text("\n").join(lines))
