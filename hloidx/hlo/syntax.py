"""HLO text into the typed IR of :mod:`hloidx.hlo.ir`, through ``grammars/hlo.lark``.

Text in XLA's printed layout (one instruction per line) is read by :mod:`.line_parser` with no
lark at all; it declines anything else, which the grammar then reads. The grammar is one LALR
parser with an inline transformer (:class:`_Builder`): lark calls the builder as it
reduces, so no parse tree is ever built and no lark ``Tree``/``Token`` escapes. Attribute values
stay raw text; :mod:`hloidx.hlo.attributes` types them on first use.

After the syntax, the builder checks what XLA's parser checks and the analysis relies on:
every operand names an instruction of its computation, at most one ROOT, parameter numbers
unique, called computations exist, constant literals have as many elements as their shape.
These are :class:`HloSemanticError`, each located at the offending token.

:func:`parse_hlo` raises the first error; :func:`parse_hlo_lenient` keeps going: on a syntax
error it re-parses instruction by instruction, drops what it cannot read (and whatever reads
it), and returns the module it recovered with every error.
"""

from __future__ import annotations

import gc
import re
import threading
from typing import Any

from ..errors import HloidxError, HloSyntaxError
from ..source import Source
from .assembly import (
    _HEADER,
    SNIPPET_COMPUTATION,
    _assemble,
    _drop,
    _drop_callers,
    _Header,
    _Pending,
)
from .ir import Computation, HloModule, Instruction
from .line_parser import parse_lines
from .shape_check import check_module
from .shape_text import parse_shape

# lark (the grammar, the fast path over its tables, its error messages) is imported only when
# the line parser declines a text: XLA's printed modules never need it.

__all__ = ["parse_hlo", "parse_hlo_lenient", "parse_shape"]


# ---------------------------------------------------------------------------------------------
# The parser object (built once)
# ---------------------------------------------------------------------------------------------

_LOCK = threading.Lock()


def build_grammar(**options: Any) -> Any:
    """A fresh Lark object for ``grammars/hlo.lark`` (tests build it with ``strict=True``)."""
    from ..grammar_files import grammar_text, lark_parser
    from .hlo_builder import _LARK_OPTIONS

    return lark_parser(grammar_text("hlo.lark"), **{**_LARK_OPTIONS, **options})


def _fast_parser() -> Any:
    """The fast path over lark's tables (:mod:`.fast_parser`), or None."""
    from .fast_parser import _fast_parser as build

    return build()


#: The line parser (None when it declines the text); tests switch it off to compare.
_whole_lines = parse_lines


# ---------------------------------------------------------------------------------------------
# The fast path: one master regular expression and a plain LALR loop
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# The builder: grammar callbacks -> IR
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Linking: operands, roots, parameters, called computations
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Lark errors in human words
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def _run(
    text: str, source: Source, start: str, base: int, anonymous: dict[str, int] | None = None
) -> tuple[Any, Any]:
    """Parse ``text`` (a piece of ``source`` beginning at ``base``) from rule ``start``;
    ``anonymous`` counts the anonymous instructions named so far (pieces of one text share it,
    so that two pieces never name two instructions `add.anon`).

    Must be called with ``_LOCK`` held: the builder's per-parse state is shared.
    """
    enabled = gc.isenabled()
    gc.disable()  # the parse allocates many small objects and frees none: skip the collector
    try:
        if start == "start" and base == 0:
            read = _whole_lines(text, source)
            if read is not None:
                return read
        from .fast_parser import _Fallback
        from .hlo_builder import _parser

        lark, builder = _parser()
        builder.reset(source, base)
        if anonymous is not None:
            builder.anonymous_names = anonymous
        fast = _fast_parser()
        if fast is not None:
            try:
                return fast.parse(text, start), builder
            except _Fallback:
                builder.reset(source, base)  # drop what the fast path built
                if anonymous is not None:
                    builder.anonymous_names = anonymous
        # Outside the handler, so that errors raised here do not chain to _Fallback.
        result = _parse_exactly(lark, text, start, source, base)
    finally:
        if enabled:
            gc.enable()
    return result, builder


def _parse_exactly(lark: Any, text: str, start: str, source: Source, base: int) -> Any:
    from lark.exceptions import UnexpectedInput

    from .syntax_errors import _convert

    try:
        return lark.parse(text, start=start)
    except UnexpectedInput as error:
        raise _convert(error, source, base, text) from None


def parse_hlo(text: str, name: str = "<string>", *, verify: bool = True) -> HloModule:
    """Parse HLO text: a module, a single computation or a bare list of instructions.

    Raises :class:`HloSyntaxError` (malformed text) or :class:`HloSemanticError` (an unknown
    operand, two ROOTs, and with ``verify`` a shape or opcode XLA would reject), located at
    the offending token. ``verify=False`` checks the syntax only.
    """
    source = Source(name, text)
    with _LOCK:
        (header, body), builder = _run(text, source, "start", 0)
        errors = list(builder.errors)
        module = _assemble(
            header, body.computations, body.is_snippet, source, builder, errors, verify=verify
        )
        builder.pending = {}
    if verify and not errors:
        _check_shapes(module, errors, drop=False)
    if errors:
        raise min(errors, key=lambda e: e.span.start if e.span else -1)  # the first in the text
    return module


# -- lenient parsing ------------------------------------------------------------------------------

# `name = shape ...` or `name = opcode(` (shape inferred) at the start of a line; requiring one
# keeps attribute lines such as `  left_side=true,` (XLA's tests split long instructions) from
# looking like instructions.
_INSTRUCTION_START = re.compile(
    r"^[ \t]*(?:ROOT[ \t]+)?%?[A-Za-z_][\w.\-]*[ \t]*=[ \t]*"
    r"(?:\(|[a-z][a-z0-9]*[ \t]*\[|[a-z][\w.\-]*[ \t]*\()",
    re.MULTILINE,
)
_CONTINUED = re.compile(r",[ \t\r\n]*\Z")

_COMPUTATION_START = re.compile(
    r"^[ \t]*(?:ENTRY[ \t]+)?(%?[A-Za-z_][\w.\-]*)[ \t]*(?:\(.*\)[ \t]*->.*)?\{[ \t\r]*(?://.*)?$",
    re.MULTILINE,
)
_COMPUTATION_END = re.compile(r"^[ \t]*\}[ \t\r]*(?:,.*)?$", re.MULTILINE)


# the name an instruction's piece defines (`ROOT %add.3 = ...`)
_DEFINED_NAME = re.compile(r"[ \t]*(?:ROOT[ \t]+)?%?([A-Za-z_][\w.\-]*)[ \t]*=")

_NAME_START = re.compile(r"[ \t]*(?:ROOT[ \t]+)?%?[A-Za-z_]")


def _instruction_starts(text: str, begin: int, stop: int) -> list[int]:
    """Offsets of the lines that open an instruction (not continuing the line before)."""
    starts = []
    for match in _INSTRUCTION_START.finditer(text, begin, stop):
        before = text[max(begin, match.start() - 200) : match.start()]
        if not _CONTINUED.search(before):
            starts.append(match.start())
    # A file cut off inside an instruction's first line (`p1 = f32[10] add(p0,`): that line
    # is a piece of its own, so the cut costs no more than that instruction.
    last = text.rfind("\n", begin, stop) + 1
    if (
        stop == len(text)
        and last > begin
        and (not starts or last > starts[-1])
        and _NAME_START.match(text, last)
        and not text[begin:last].rstrip().endswith((",", "{", "(", "["))
    ):
        starts.append(last)
    return starts


def parse_hlo_lenient(
    text: str, name: str = "<string>", *, verify: bool = True
) -> tuple[HloModule | None, list[HloidxError]]:
    """Parse what can be parsed; return the module (or None) and every error found.

    Without errors this is :func:`parse_hlo`. On a syntax error the text is cut into pieces
    (the header, each computation, each instruction) and each piece is parsed alone; a broken
    instruction is skipped, as is every instruction that reads it, and its error reported.
    """
    source = Source(name, text)
    with _LOCK:
        try:
            (header, body), builder = _run(text, source, "start", 0)
        except HloSyntaxError as first:
            module, errors = _recover(text, source, verify)
            # The pieces re-find the syntax errors, each at its own instruction; the whole
            # parse's error is kept only when no piece holds it (say, text between computations).
            if not any(isinstance(e, HloSyntaxError) for e in errors):
                errors.insert(0, first)
            if module is not None and verify:
                _check_shapes(module, errors, drop=True)
            errors.sort(key=lambda e: e.span.start if e.span else -1)
            return module, errors
        errors = list(builder.errors)
        module = _assemble(
            header,
            body.computations,
            body.is_snippet,
            source,
            builder,
            errors,
            drop_unresolved=True,
            verify=verify,
        )
        builder.pending = {}
    if verify:
        _check_shapes(module, errors, drop=True)
        errors.sort(key=lambda e: e.span.start if e.span else -1)
    return module, errors


def _check_shapes(module: HloModule, errors: list[HloidxError], drop: bool) -> None:
    """XLA's shape rules (:mod:`.shape_check`): each violation is a located error; with
    ``drop``, the instruction and everything that depends on it leave the module."""
    found = check_module(module)
    errors.extend(error for _, error in found)
    if not drop or not found:
        return
    broken: dict[str, set[Instruction]] = {}
    for instr, _ in found:
        if instr.computation is not None:
            broken.setdefault(instr.computation.name, set()).add(instr)
    rootless = set()
    for name, instructions in broken.items():
        dropped = _drop(module.computations[name], instructions)
        if any(i.is_root for i in dropped):
            rootless.add(name)
    if rootless:
        _drop_callers(module, rootless)


def _computation_blocks(text: str) -> list[tuple[str, bool, int, int, int]]:
    """(name, is_entry, header start, body start, body end) of each `name ... {` ... `}`."""
    blocks: list[tuple[str, bool, int, int, int]] = []
    position = 0
    while True:
        start = _COMPUTATION_START.search(text, position)
        if start is None:
            return blocks
        end = _COMPUTATION_END.search(text, start.end())
        stop = end.start() if end else len(text)
        name = start.group(1)
        is_entry = start.group(0).lstrip().startswith("ENTRY")
        blocks.append(
            (name[1:] if name.startswith("%") else name, is_entry, start.start(), start.end(), stop)
        )
        position = end.end() if end else len(text)


def _recover_header(
    text: str, source: Source, body_start: int, errors: list[HloidxError]
) -> _Header | None:
    """The module header (and debug tables) before ``body_start``, parsed alone."""
    match = _HEADER.search(text, 0, body_start)
    if match is None:
        return None
    try:
        header, _ = _run(text[match.start() : body_start], source, "lone_header", match.start())
        return header
    except HloSyntaxError as error:
        errors.append(error)
        name = match.group(1)
        return _Header(name[1:] if name.startswith("%") else name, {})


def _recover(
    text: str, source: Source, verify: bool = True
) -> tuple[HloModule | None, list[HloidxError]]:
    """Piecewise parse (with ``_LOCK`` held)."""
    from .hlo_builder import _parser

    _, builder = _parser()
    builder.reset(source, 0)
    errors: list[HloidxError] = []
    pending: dict[Instruction, _Pending] = {}

    # Computation blocks: a header line ending in `{` up to a line holding only `}`.
    blocks = _computation_blocks(text)
    is_snippet = not blocks
    if is_snippet:
        first_instructions = _instruction_starts(text, 0, len(text))
        begin = first_instructions[0] if first_instructions else len(text)
        blocks.append((SNIPPET_COMPUTATION, True, begin, begin, len(text)))
    header = _recover_header(text, source, blocks[0][2], errors)

    computations: list[Computation] = []
    rootless: set[str] = set()
    shapeless = False
    anonymous: dict[str, int] = {}
    inline_calls: list = []
    #: computation -> names of its instructions whose text did not parse
    unparsed: dict[str, set[str]] = {}
    for comp_name, is_entry, _, begin, stop in blocks:
        starts = _instruction_starts(text, begin, stop)
        instructions: list[Instruction] = []
        for i, piece_start in enumerate(starts):
            piece_end = starts[i + 1] if i + 1 < len(starts) else stop
            piece = text[piece_start:piece_end]
            try:
                instruction, piece_builder = _run(
                    piece, source, "lone_instruction", piece_start, anonymous
                )
            except HloSyntaxError as error:
                errors.append(error)
                if piece.lstrip().startswith("ROOT"):
                    rootless.add(comp_name)
                defined = _DEFINED_NAME.match(piece)
                if defined is not None:
                    unparsed.setdefault(comp_name or "entry", set()).add(defined.group(1))
                continue
            errors.extend(piece_builder.errors)
            pending.update(piece_builder.pending)
            shapeless = shapeless or piece_builder.shapeless
            # computations written inline in the piece precede the one it belongs to
            computations.extend(piece_builder.inline_pending)
            inline_calls.extend(piece_builder.inline_calls)
            instructions.extend(piece_builder.nested_before.get(instruction, ()))
            instructions.append(instruction)
        if instructions:
            first, last = instructions[0].span, instructions[-1].span
            span = source.span(first.start, last.end) if first and last else None
            computations.append(Computation(comp_name or "entry", instructions, is_entry, span))
    if not computations:
        return None, errors
    builder.reset(source, 0)
    builder.pending = pending
    builder.rootless = rootless
    builder.shapeless = shapeless
    builder.inline_calls = inline_calls
    builder.unparsed = unparsed
    try:
        module = _assemble(
            header,
            computations,
            is_snippet,
            source,
            builder,
            errors,
            drop_unresolved=True,
            verify=verify,
        )
    finally:
        builder.pending = {}
        builder.unparsed = {}
    return module, errors
