"""The functions behind ``hloidx.analyze``, ``show``, ``tile``, ``threads``, ``coalescing`` and
``cost``: each takes a module (an ``HloModule``, HLO or StableHLO text, a path to a file, or an
:class:`~hloidx.notebook.analysis.Analysis`) and returns a result object of this layer."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from ..errors import HloidxError
from ..hlo.ir import HloModule, Instruction
from .analysis import Analysis, _not_found
from .results import CoalescingView, CostView, Picture, ThreadsView, TileView, picture_of


def as_module(source: Any) -> HloModule:
    """``source`` as a module: a module as it is, text parsed (HLO or StableHLO, detected),
    a path (or the name of an existing file) read and parsed (errors located in the file), an
    analysis's module."""
    if isinstance(source, HloModule):
        return source
    if isinstance(source, Analysis):
        return source.hlo
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        from ..hlo.binary_hlo import decompressed, hlo_text_from_bytes

        with open(path, "rb") as handle:  # XLA's binary HLO (*.hlo.pb, *.hlo.pb.xz) as text
            text = hlo_text_from_bytes(decompressed(handle.read(), path), path)
        if text is not None:
            return _parse(text, path)
        with open(path, encoding="utf-8", errors="replace") as handle:
            return _parse(handle.read(), path)
    if isinstance(source, str):
        if "\n" not in source and os.path.isfile(source):  # a file's name, not HLO text
            return as_module(Path(source))
        return _parse(source, "<string>")
    raise TypeError(f"expected an HloModule, HLO text or a path, not {type(source).__name__}")


def _parse(text: str, name: str) -> HloModule:
    from ..hlo.syntax import parse_hlo
    from ..stablehlo import detect_language, parse_stablehlo

    if detect_language(text) == "stablehlo":
        return parse_stablehlo(text, name)
    return parse_hlo(text, name)


def find(module: HloModule, name: str, *, fusion: bool = False) -> Instruction:
    """The instruction called ``name`` (``%`` optional), or an error naming the closest."""
    bare = name.strip().lstrip("%")
    found = module.instruction(bare)
    if found is not None and (not fusion or found.opcode == "fusion"):
        return found
    candidates = [i.name for i in module.instructions() if not fusion or i.opcode == "fusion"]
    close = difflib.get_close_matches(bare, candidates, n=3, cutoff=0.5)
    what = "no instruction" if found is None else "not a fusion:"
    raise _not_found(f"{what} {bare!r} in module {module.name}", close)


def analyze(
    source: Any, *, spelling: str = "floordiv", names: str = "plain", **options: Any
) -> Analysis:
    """Every instruction's indexing maps, verdicts and utilization (options as
    ``hloidx.hlo.analysis.analyze``: ``verify``, ``simplify``, ``direction``, ...);
    ``names="roles"`` names the maps' variables by what they index (``hloidx maps --names``)."""
    from ..hlo.analysis import analyze as analyze_module

    if names not in ("plain", "roles"):
        raise HloidxError(f"names is 'plain' or 'roles', not {names!r}")
    module = as_module(source)
    result = analyze_module(module, **options)
    if names == "roles":
        from ..hlo.role_names import name_module

        result = name_module(result)
    return Analysis(module, result, spelling)


def show(source: Any, instruction: str, operand: int = 0, **options: Any) -> Picture:
    """The heatmap of one operand of ``instruction`` (``hloidx show``; options ``dims``,
    ``output_element``, ``tile`` and ``tile_index``, ``warp`` and ``device``, ``width``)."""
    if isinstance(source, Analysis):
        record = source.instruction(instruction).record
    else:
        from ..hlo.analysis import analyze as analyze_module

        module = as_module(source)
        found = find(module, instruction)
        record = analyze_module(module, verify=False, only=[found]).instructions[0]
    return picture_of(record, operand, **options)


def tile(source: Any, instruction: str, sizes: Any = "symbolic", *, limit: int = 20) -> TileView:
    """The tile of every operand an output tile of ``instruction`` needs (``hloidx tile``):
    ``sizes`` per output dimension, ``"symbolic"`` (XLA's SymbolicTile form) or ``"auto"``
    (power-of-two sizes ranked by bytes per output element, ``limit`` of them)."""
    from ..tiling.operand_tiles import tile_instruction
    from ..tiling.report import tiles_document

    instr = find(as_module(source), instruction)
    if isinstance(sizes, str) and sizes == "auto":
        from ..tiling.report import auto_document

        return TileView(auto_document(instr, limit))
    if isinstance(sizes, str) and sizes != "symbolic":
        raise HloidxError(f"sizes are a tuple of ints, 'symbolic' or 'auto', not {sizes!r}")
    result = tile_instruction(instr, None if isinstance(sizes, str) else tuple(sizes))
    return TileView(tiles_document(result), result)


def _gpu(device: str, threads_per_block: Any, unroll: Any, vector: Any) -> tuple[Any, Any]:
    from ..gpu.devices import device_profile
    from ..gpu.launch import Overrides

    return device_profile(device), Overrides(threads_per_block, unroll, vector)


def threads(
    source: Any,
    fusion: str,
    device: str = "rtx-a6000",
    *,
    physical: bool = False,
    verify: bool = True,
    threads_per_block: int | None = None,
    unroll: int | None = None,
    vector: int | None = None,
) -> ThreadsView:
    """Thread-id maps of a fusion on a GPU (``hloidx threads``)."""
    from ..gpu.analysis import analyze_fusion
    from ..gpu.report import threads_document

    module = as_module(source)
    found = find(module, fusion, fusion=True)
    profile, overrides = _gpu(device, threads_per_block, unroll, vector)
    view = analyze_fusion(found, profile, overrides)
    return ThreadsView(
        threads_document(module.name, view, profile, physical=physical, verify=verify)
    )


def coalescing(
    source: Any,
    device: str = "rtx-a6000",
    *,
    threads_per_block: int | None = None,
    unroll: int | None = None,
    vector: int | None = None,
) -> CoalescingView:
    """Whether each fusion's reads of each operand are coalesced (``hloidx coalescing``)."""
    from ..gpu.analysis import analyze_module
    from ..gpu.report import coalescing_document

    module = as_module(source)
    profile, overrides = _gpu(device, threads_per_block, unroll, vector)
    views = analyze_module(module, profile, overrides)
    return CoalescingView(coalescing_document(module.name, views, profile))


def cost(
    source: Any,
    device: str | None = None,
    *,
    model: str = "hloidx",
    sort: str = "time",
    limit: int | None = None,
    profile: str | None = None,
) -> CostView:
    """What each kernel of the module costs on ``device`` (``hloidx cost``; rtx-a6000 unless
    the profile gives the GPU), from the cost model of :mod:`hloidx.perf` (estimates,
    labelled so); ``model`` ``"hloidx"`` or ``"xla"``, rows by ``sort`` (time, bytes, flops,
    name), the first ``limit``. ``profile``: a measured profile of the module (nsys-jax,
    Nsight SQLite, xplane; ``hloidx cost --profile``) joined onto the rows."""
    try:
        from ..perf import estimate_module
    except ImportError as error:
        raise HloidxError(f"the cost model (hloidx.perf) is not available: {error}") from None
    module = as_module(source)
    measured = program = None
    target: Any = device
    if profile is not None:
        from ..perf.measured_source import attach, profile_device, program_of
        from ..profiles import read_profile

        measured = read_profile(profile)
        path = os.fspath(source) if isinstance(source, str | os.PathLike) else None
        program = program_of(measured, module, path if path and os.path.isfile(path) else None)
        if device is None:
            target = profile_device(measured)
    report = estimate_module(module, target or "rtx-a6000", model)
    if measured is not None:
        attach(report, module, measured, program)
    return CostView(report, sort, limit)
