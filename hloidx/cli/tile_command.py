"""``hloidx tile``: the tile of every operand that an output tile needs (thin over
hloidx.tiling)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .options import global_options, language_option, names_option


def _parse_tile(text: str) -> tuple[int, ...] | str:
    if text in ("symbolic", "auto"):
        return text
    try:
        sizes = tuple(int(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise click.BadParameter(
            f"{text!r}: give sizes like 16,64, or 'symbolic', or 'auto'", param_hint="--tile"
        ) from None
    if not sizes or any(s < 1 for s in sizes):
        raise click.BadParameter(f"{text!r}: every tile size must be >= 1", param_hint="--tile")
    return sizes


def _find(module: Any, name: str) -> Any:
    instr = module.instruction(name)
    if instr is not None:
        return instr
    entry = module.entry
    names = ", ".join(i.name for i in entry.instructions if i.opcode != "parameter")[:300]
    raise click.UsageError(
        f"no instruction named {name.lstrip('%')!r}; the entry computation has: {names}"
    )


@click.command()
@click.argument("file", metavar="FILE", required=False)
@click.option("--instruction", metavar="NAME", help="The fusion or instruction to tile.")
@click.option("--map", "map_text", metavar="MAP", help="Tile one operand given its map instead.")
@click.option(
    "--tile",
    "tile_text",
    default="symbolic",
    show_default=True,
    metavar="SIZES|symbolic|auto",
    help="Tile sizes per output dimension (16,64), symbolic, or auto.",
)
@click.option("--limit", default=20, show_default=True, help="--tile auto: rows to show.")
@click.option(
    "--device",
    metavar="DEVICE",
    help="Estimate the time of the tiling on this GPU (rtx-a6000, a100, h100) with XLA's "
    "tiled cost model; with --tile auto, rank the tilings by it.",
)
@click.option(
    "--element-bytes", default=4, show_default=True, help="--map: bytes per operand element."
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@language_option
@names_option
@global_options
def tile(
    file: str | None,
    instruction: str | None,
    map_text: str | None,
    tile_text: str,
    limit: int,
    device: str | None,
    element_bytes: int,
    fmt: str,
    language: str,
    names: str,
) -> None:
    """What tile of each operand an output tile needs (block-level tiling, XLA's Triton path).

    The output is cut into tiles of --tile sizes; for every operand the tile is printed as
    offsets, sizes and strides (XLA's SymbolicTile): with sizes, offsets are a map from the
    tile index; with --tile symbolic the three maps go from the tile sizes (d_i = size along
    output dim i) to the first tile, with the constraints on the sizes under which the
    description is exact. When no single strided rectangle describes every tile (a slice of
    a linearized dimension, seed 004), the exact description is a loop of rectangles over
    the fewest output dims, with its count and bytes. --tile auto ranks power-of-two sizes
    by bytes loaded per output element; with --device it ranks them by the time XLA's tiled
    (Triton) cost model estimates on that GPU, and with sizes --device adds that tiling's
    estimate (an estimate, not a measurement; a tiling that spills registers gets none).
    --map tiles one operand from a pasted map.

    \b
    Examples:
      hloidx tile tests/data/tiling/seed004.hlo --instruction fusion --tile 10,100
      hloidx tile tests/data/tiling/seed004.hlo --instruction fusion --tile 4,100
      hloidx tile tests/data/tiling/seed004.hlo --instruction fusion --tile auto
      hloidx tile tests/data/xla/cost/reduce.hlo --instruction reduce --tile auto --device a100
      hloidx tile --map "(d0, d1) -> (d0 * 2048 + d1), domain: d0 in [0, 3], d1 in [0, 2047]"
    """
    from ..errors import HloidxError
    from .options import EXIT_BAD_INPUT, report_error

    try:
        _tile(
            file,
            instruction,
            map_text,
            tile_text,
            limit,
            element_bytes,
            fmt,
            language,
            device,
            names,
        )
    except HloidxError as error:
        report_error(error)
        sys.exit(EXIT_BAD_INPUT)


def _tile(
    file,
    instruction,
    map_text,
    tile_text,
    limit,
    element_bytes,
    fmt,
    language,
    device=None,
    names="plain",
) -> None:
    from ..tiling.report import text_lines, tiles_document

    tile_spec = _parse_tile(tile_text)
    sizes = tile_spec if isinstance(tile_spec, tuple) else None
    if map_text is not None:
        if file is not None or instruction is not None:
            raise click.UsageError("give either --map or FILE --instruction, not both")
        if tile_spec == "auto":
            raise click.UsageError("--tile auto needs FILE --instruction")
        from ..maps.syntax import parse_map
        from ..tiling.operand_tiles import tile_map

        doc = tiles_document(tile_map(parse_map(map_text, "<map>"), sizes, element_bytes))
    else:
        if file is None or instruction is None:
            raise click.UsageError("give FILE and --instruction NAME (or --map MAP)")
        from .options import EXIT_BAD_INPUT, load_module

        module, _, errors = load_module(file, language)
        if errors:
            sys.exit(EXIT_BAD_INPUT)
        from ..hlo.lone_fusion import lone_fusion_note, wrap_lone_fusion

        module = wrap_lone_fusion(module)  # a fused computation on its own
        instr = _find(module, instruction)
        # what the wrapping did, said wherever the output has notes (threads/coalescing too)
        note = lone_fusion_note(instr)
        wrapped = [] if note is None else [note]
        if device is not None and tile_spec == "auto":
            from ..render.tile_estimates import ranking_output

            click.echo(ranking_output(module, instr, device, limit, fmt, wrapped))
            return
        if tile_spec == "auto":
            from ..tiling.report import auto_document

            doc = auto_document(instr, limit)
            if wrapped:
                doc["notes"] = wrapped
            if fmt == "json":
                click.echo(json.dumps(doc, indent=2))
            else:
                from ..render.tiles import auto_tile_lines

                click.echo("\n".join(auto_tile_lines(doc)))
            return
        from ..tiling.operand_tiles import tile_instruction

        doc = tiles_document(tile_instruction(instr, sizes))
        if names == "roles":
            from ..tiling.tile_names import name_tile_document

            doc = name_tile_document(doc, instr)
        doc["notes"] = [*wrapped, *doc["notes"]]
        if device is not None and sizes is not None:
            from ..render.tile_estimates import estimate_document, estimate_lines

            doc["estimate"] = estimate_document(module, instr, device, sizes)
            if fmt != "json":
                click.echo("\n".join([*text_lines(doc), *estimate_lines(doc["estimate"])]))
                return
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo("\n".join(text_lines(doc)))
