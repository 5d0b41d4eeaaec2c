"""Where every name of an HLO text is defined and used, with its exact character range.

The parsers keep the span of each instruction, not of every name in it; the language server
needs both ends of each reference (``%fusion.3``'s definition and each operand that reads it,
``calls=%fused_computation.3`` and the computation's header). :func:`scan` is a small scanner
over the text for exactly that: it cuts the text into computations (a header line ending in
``{`` up to a line that is ``}``) and instructions (``name = ...`` up to the next one), and
inside each instruction finds its opcode, its operand list (names, ``%t#i`` tuple elements,
``shape name`` operands), its attributes (computations in ``calls=``, ``to_apply=``,
``condition=``, ``body=``, ``branch_computations=``, ...; ``control-predecessors``;
``metadata={... stack_frame_id=N}``) and the module's ``FileNames`` / ``FunctionNames`` /
``FileLocations`` / ``StackFrames`` tables. It reads any text (a file cut off mid-line, binary
garbage): what it cannot recognise it skips, so that the parts it can read still answer.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Container, Iterator
from dataclasses import dataclass, field

from .attribute_names import COMPUTATION_ATTRIBUTES, KNOWN_ATTRIBUTES
from .debug_tables import frame_stack, table_line
from .index_links import link_steps

__all__ = [
    "ComputationInfo",
    "HloIndex",
    "InstructionInfo",
    "Occurrence",
    "scan",
    "scan_steps",
]

_NAME = r"[A-Za-z_][\w.\-]*"
_COMPUTATION_HEADER = re.compile(
    r"[ \t]*(ENTRY[ \t]+)?(%?" + _NAME + r")[ \t]*(\(.*\)[ \t]*->.*?)?\{[ \t\r]*(?://.*)?$"
)
_BODY_CLOSE = re.compile(r"[ \t]*\}")
# `name = ` followed by a shape, a tuple shape or `opcode(`: an instruction's first line (an
# attribute continuing an instruction, `  left_side=true,`, is not one).
_INSTRUCTION_START = re.compile(
    r"[ \t]*(ROOT[ \t]+)?(%?" + _NAME + r")[ \t]*=[ \t]*"
    r"(?=\(|[a-z][a-z0-9]*[ \t]*\[|[a-z][\w.\-]*[ \t]*\(|token\b|opaque\b)"
)
_OPCODE = re.compile(r"(?<![\w.%\-])([a-z][\w\-]*)[ \t]*\(")
_OPERAND = re.compile(r"%?(" + _NAME + r")((?:[ \t]*#[ \t]*\d+)*)")
_PLAIN_OPERANDS = re.compile(r"[ \t]*(?:%?" + _NAME + r"(?:[ \t]*#[ \t]*\d+)*[ \t]*(?:,[ \t]*|$))*")
_ATTRIBUTE = re.compile(r"[ \t\r\n]*,[ \t\r\n]*([A-Za-z_][\w\-]*)[ \t]*=[ \t]*")
_SIGNATURE_PARAM = re.compile(r"(?:[(,][ \t]*|/\*index=\d+\*/[ \t]*)%?(" + _NAME + r")[ \t]*:")
_STACK_FRAME = re.compile(r"stack_frame_id=(\d+)")
_SOURCE_FILE = re.compile(r'source_file="((?:[^"\\]|\\.)*)"')
_SOURCE_LINE = re.compile(r"source_line=(\d+)")
_ELEMENT = re.compile(r"\d+")

#: Opcodes whose parentheses hold a literal, not operands.
_LITERAL_OPCODES = frozenset({"parameter", "constant"})


@dataclass(eq=False, slots=True)
class Occurrence:
    """One mention of a name: ``kind`` is ``instruction`` (``scope``: its computation) or
    ``computation`` (``scope`` empty); ``[start, end)`` covers the name with its ``%``."""

    kind: str
    scope: str
    name: str
    start: int
    end: int
    is_definition: bool = False
    #: the instruction whose text holds this use (None for definitions and signatures)
    user: InstructionInfo | None = None
    #: the operand position of a use in an operand list; the attribute of a computation use
    operand_index: int | None = None
    attribute: str = ""
    #: ``%t#1#0``: the tuple element read
    element: tuple[int, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.scope, self.name)


@dataclass(eq=False, slots=True)
class InstructionInfo:
    name: str
    computation: str
    start: int  # the instruction's first character (ROOT or its name)
    end: int  # past its last non-blank character
    name_start: int
    name_end: int
    opcode: str = ""
    is_root: bool = False
    parameter_number: int | None = None
    operands: list[Occurrence] = field(default_factory=list)
    #: attribute -> the computations it names, in order
    calls: dict[str, list[str]] = field(default_factory=dict)
    #: the ``stack_frame_id`` of its metadata, and the metadata's range
    stack_frame: int | None = None
    metadata: tuple[int, int] | None = None


@dataclass(eq=False, slots=True)
class ComputationInfo:
    name: str
    is_entry: bool
    start: int  # the header line's first character
    end: int  # past the closing brace (the end of the text when there is none)
    name_start: int
    name_end: int
    instructions: list[InstructionInfo] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class MetadataRef:
    """A ``metadata={...}`` value or its ``stack_frame_id=N``: what hover explains."""

    start: int
    end: int
    instruction: InstructionInfo
    stack_frame: int | None = None
    source_file: str | None = None
    source_line: int | None = None


@dataclass(eq=False)
class HloIndex:
    text: str
    computations: list[ComputationInfo] = field(default_factory=list)
    occurrences: list[Occurrence] = field(default_factory=list)
    #: (kind, scope, name) -> the definition; -> every occurrence (the definition included)
    definitions: dict[tuple[str, str, str], Occurrence] = field(default_factory=dict)
    references: dict[tuple[str, str, str], list[Occurrence]] = field(default_factory=dict)
    instructions: dict[tuple[str, str], InstructionInfo] = field(default_factory=dict)
    metadata: list[MetadataRef] = field(default_factory=list)
    #: attributes XLA's parser does not read: (start, end, key)
    unknown_attributes: list[tuple[int, int, str]] = field(default_factory=list)
    #: FileNames / FunctionNames: id -> text; FileLocations / StackFrames: id -> fields
    tables: dict[str, dict[int, object]] = field(default_factory=dict)
    _starts: list[int] = field(default_factory=list, repr=False)

    # -- lookups --------------------------------------------------------------------------------
    def at(self, offset: int) -> Occurrence | None:
        """The occurrence whose range holds ``offset`` (its end included: a cursor just past
        a name still points at it)."""
        i = bisect.bisect_right(self._starts, offset) - 1
        if i >= 0:
            found = self.occurrences[i]
            if found.start <= offset <= found.end:
                return found
        return None

    def metadata_at(self, offset: int) -> MetadataRef | None:
        best = None
        for ref in self._metadata_near(offset):
            if ref.start <= offset <= ref.end and (
                best is None or ref.end - ref.start < best.end - best.start
            ):
                best = ref
        return best

    def _metadata_near(self, offset: int) -> list[MetadataRef]:
        starts = [m.start for m in self.metadata]
        i = bisect.bisect_right(starts, offset)
        return self.metadata[max(0, i - 2) : i]

    def instruction_at(self, offset: int) -> InstructionInfo | None:
        comp = self.computation_at(offset)
        if comp is None:
            return None
        starts = [i.start for i in comp.instructions]
        k = bisect.bisect_right(starts, offset) - 1
        if k >= 0 and comp.instructions[k].start <= offset <= comp.instructions[k].end:
            return comp.instructions[k]
        return None

    def computation_at(self, offset: int) -> ComputationInfo | None:
        starts = [c.start for c in self.computations]
        k = bisect.bisect_right(starts, offset) - 1
        if k >= 0 and offset <= self.computations[k].end:
            return self.computations[k]
        return None

    def computation(self, name: str) -> ComputationInfo | None:
        found = self.definitions.get(("computation", "", name))
        if found is None:
            return None
        return self.computation_at(found.start)

    def callers(self, computation: str) -> list[Occurrence]:
        """Every use of the computation in an attribute (``calls=``, ``to_apply=``, ...)."""
        return [
            o
            for o in self.references.get(("computation", "", computation), ())
            if not o.is_definition
        ]

    def frame(self, frame_id: int) -> list[tuple[str, int | None, str]]:
        """The stack of frame ``frame_id``, innermost first: (file, line, function) each;
        unknown parts are ``"?"`` / None."""
        return frame_stack(self.tables, frame_id)


def scan(text: str, begin: int = 0, end: int | None = None) -> HloIndex:
    """The index of ``text`` (any text: what is not HLO is skipped); with ``begin``/``end``,
    of that piece alone (a computation: its header line to its closing brace), at the offsets
    of the whole text."""
    index = HloIndex(text)
    for _ in scan_steps(index, begin, end):
        pass
    return index


#: Lines of the structure pass, and instructions of the name pass, between two yields.
_STEP_LINES = 4_000
_STEP_INSTRUCTIONS = 2_000


def scan_steps(index: HloIndex, begin: int = 0, end: int | None = None) -> Iterator[None]:
    """Fill ``index`` (made empty for its text) a slice at a time: yields between slices, so
    that a caller can answer something else in between (the language server's requests)."""
    text = index.text
    limit = len(text) if end is None else end
    lines = _line_offsets(text, begin, limit)
    yield from _scan_structure(text, lines, index, limit)
    done = 0
    for comp in index.computations:
        defined = {i.name for i in comp.instructions}
        for instr in comp.instructions:
            _scan_instruction(text, instr, defined, index)
            done += 1
            if done % _STEP_INSTRUCTIONS == 0:
                yield
        _scan_signature(text, comp, defined, index)
    yield from link_steps(index, {c.name for c in index.computations})


def _line_offsets(text: str, begin: int = 0, limit: int | None = None) -> list[int]:
    limit = len(text) if limit is None else limit
    starts = [begin]
    find = text.find
    i = find("\n", begin, limit)
    while i >= 0:
        starts.append(i + 1)
        i = find("\n", i + 1, limit)
    return starts


def _scan_structure(text: str, lines: list[int], index: HloIndex, limit: int) -> Iterator[None]:
    """Computations, their instructions' extents, the debug tables (in ``text[:limit]``);
    yields every ``_STEP_LINES`` lines."""
    comp: ComputationInfo | None = None
    table: str | None = None
    previous_continues = False  # the previous line of the body ended in `,`
    n = len(lines)
    for k in range(n):
        if k % _STEP_LINES == _STEP_LINES - 1:
            yield
        begin = lines[k]
        stop = lines[k + 1] - 1 if k + 1 < n else limit
        if comp is None:
            header = _COMPUTATION_HEADER.match(text, begin, stop)
            if header is not None and not text.startswith("HloModule", begin):
                name = header.group(2)
                start = header.start(2)
                comp = ComputationInfo(
                    name.lstrip("%"),
                    header.group(1) is not None,
                    begin,
                    limit,
                    start,
                    header.end(2),
                )
                index.computations.append(comp)
                index.occurrences.append(
                    Occurrence("computation", "", comp.name, start, header.end(2), True)
                )
                table = None
                previous_continues = False
                continue
            table_line(text, begin, stop, index.tables, table_holder := [table])
            table = table_holder[0]
            continue
        if _BODY_CLOSE.match(text, begin, stop) and not previous_continues:
            closing = text.index("}", begin, stop + 1 if stop < limit else stop)
            comp.end = closing + 1
            _close_last(text, comp, begin)
            comp = None
            continue
        start = None if previous_continues else _INSTRUCTION_START.match(text, begin, stop)
        if start is not None:
            _close_last(text, comp, begin)
            name = start.group(2)
            info = InstructionInfo(
                name.lstrip("%"),
                comp.name,
                start.start(1) if start.group(1) else start.start(2),
                stop,
                start.start(2),
                start.end(2),
                is_root=start.group(1) is not None,
            )
            comp.instructions.append(info)
            index.instructions[(comp.name, info.name)] = info
            index.occurrences.append(
                Occurrence(
                    "instruction", comp.name, info.name, info.name_start, info.name_end, True
                )
            )
        line = text[begin:stop].rstrip()
        if "//" in line:
            line = line.split("//", 1)[0].rstrip()
        previous_continues = line.endswith(",")
    if comp is not None:
        _close_last(text, comp, limit)


def _close_last(text: str, comp: ComputationInfo, limit: int) -> None:
    """The last instruction of ``comp`` ends at the last non-blank character before ``limit``."""
    if not comp.instructions:
        return
    last = comp.instructions[-1]
    end = limit
    while end > last.name_end and text[end - 1] in " \t\r\n":
        end -= 1
    last.end = end


def _matching(text: str, i: int, end: int, open_: str, close: str) -> int:
    """The offset of the bracket closing the one at ``i`` (``end`` when it is missing);
    strings are skipped."""
    if open_ == "(":  # the common case: no nested parenthesis, no string
        close_at = text.find(close, i + 1, end)
        if (
            close_at >= 0
            and text.find(open_, i + 1, close_at) < 0
            and text.find('"', i + 1, close_at) < 0
        ):
            return close_at
    depth = 0
    while i < end:
        c = text[i]
        if c == '"':
            i = _string_end(text, i, end)
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return end


def _string_end(text: str, i: int, end: int) -> int:
    """Past the string that opens at ``i``."""
    i += 1
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return end


def _scan_instruction(
    text: str, instr: InstructionInfo, defined: Container[str], index: HloIndex
) -> None:
    end = instr.end
    opcode = _OPCODE.search(text, instr.name_end, end)
    if opcode is None:
        return
    instr.opcode = opcode.group(1)
    open_paren = opcode.end() - 1
    close = _matching(text, open_paren, end, "(", ")")
    if instr.opcode == "parameter":
        try:
            instr.parameter_number = int(text[open_paren + 1 : close].strip(), 0)
        except ValueError:
            instr.parameter_number = None
    elif instr.opcode not in _LITERAL_OPCODES:
        _scan_operands(text, instr, open_paren + 1, close, defined, index)
    _scan_attributes(text, instr, min(close + 1, end), end, defined, index)


def _scan_operands(
    text: str,
    instr: InstructionInfo,
    begin: int,
    stop: int,
    defined: Container[str],
    index: HloIndex,
) -> None:
    plain = _PLAIN_OPERANDS.fullmatch(text, begin, stop)
    if plain is not None:  # `a, %b, t#1`: XLA's printed form, read by one regular expression
        for position, match in enumerate(_OPERAND.finditer(text, begin, stop)):
            name = match.group(1)
            if name in defined:
                occurrence = Occurrence(
                    "instruction",
                    instr.computation,
                    name,
                    match.start(),
                    match.end(1),
                    user=instr,
                    operand_index=position,
                    element=tuple(int(e) for e in _ELEMENT.findall(match.group(2)))
                    if match.group(2)
                    else (),
                )
                instr.operands.append(occurrence)
                index.occurrences.append(occurrence)
        return
    position = 0
    depth = 0
    i = begin
    while i < stop:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ",":
            if depth == 0:
                position += 1
        elif c == '"':
            i = _string_end(text, i, stop)
            continue
        elif (c == "%" or c.isalpha() or c == "_") and (
            i == begin or not (text[i - 1].isalnum() or text[i - 1] in "_.-%")
        ):
            match = _OPERAND.match(text, i, stop)
            if match is not None:
                name = match.group(1)
                after = match.end(1)
                while after < stop and text[after] in " \t":
                    after += 1
                follows = text[after] if after < stop else ""
                if name in defined and (follows == "" or follows not in "[:"):
                    elements = tuple(int(e) for e in _ELEMENT.findall(match.group(2)))
                    occurrence = Occurrence(
                        "instruction",
                        instr.computation,
                        name,
                        match.start(),
                        match.end(1),
                        user=instr,
                        operand_index=position,
                        element=elements,
                    )
                    instr.operands.append(occurrence)
                    index.occurrences.append(occurrence)
                i = match.end()
                continue
        i += 1


def _scan_attributes(
    text: str,
    instr: InstructionInfo,
    begin: int,
    stop: int,
    defined: Container[str],
    index: HloIndex,
) -> None:
    i = begin
    while i < stop:
        match = _ATTRIBUTE.match(text, i, stop)
        if match is None:
            return
        key = match.group(1)
        value_start = match.end()
        if value_start < stop and text[value_start] == "{":
            value_end = _matching(text, value_start, stop, "{", "}") + 1
        elif value_start < stop and text[value_start] == '"':
            value_end = _string_end(text, value_start, stop)
        else:
            value_end = value_start
            depth = 0
            while value_end < stop:
                c = text[value_end]
                if c in "([":
                    depth += 1
                elif c in ")]":
                    depth -= 1
                elif (c == "," and depth <= 0) or c in "\r\n":
                    break
                value_end += 1
        value_end = min(value_end, stop)
        if key in COMPUTATION_ATTRIBUTES:
            names = instr.calls.setdefault(key, [])
            for name in _OPERAND.finditer(text, value_start, value_end):
                names.append(name.group(1))
                index.occurrences.append(
                    Occurrence(
                        "computation",
                        "",
                        name.group(1),
                        name.start(),
                        name.end(1),
                        user=instr,
                        attribute=key,
                    )
                )
        elif key == "control-predecessors":
            for name in _OPERAND.finditer(text, value_start, value_end):
                if name.group(1) in defined:
                    index.occurrences.append(
                        Occurrence(
                            "instruction",
                            instr.computation,
                            name.group(1),
                            name.start(),
                            name.end(1),
                            user=instr,
                            attribute=key,
                        )
                    )
        elif key == "metadata":
            _scan_metadata(text, instr, match.start(1), value_start, value_end, index)
        elif key not in KNOWN_ATTRIBUTES:
            index.unknown_attributes.append((match.start(1), match.end(1), key))
        i = value_end


def _scan_metadata(
    text: str, instr: InstructionInfo, key_start: int, begin: int, end: int, index: HloIndex
) -> None:
    value = text[begin:end]
    frame = _STACK_FRAME.search(value)
    source_file = _SOURCE_FILE.search(value)
    source_line = _SOURCE_LINE.search(value)
    frame_id = int(frame.group(1)) if frame else None
    instr.stack_frame = frame_id
    instr.metadata = (key_start, end)
    common = {
        "stack_frame": frame_id,
        "source_file": source_file.group(1) if source_file else None,
        "source_line": int(source_line.group(1)) if source_line else None,
    }
    index.metadata.append(MetadataRef(key_start, end, instr, **common))
    if frame is not None:
        index.metadata.append(
            MetadataRef(begin + frame.start(), begin + frame.end(), instr, **common)
        )


def _scan_signature(
    text: str, comp: ComputationInfo, defined: Container[str], index: HloIndex
) -> None:
    """``%comp (p0: f32[2], p1: s32[]) -> ...``: each parameter name refers to its
    parameter instruction."""
    begin = comp.name_end
    stop = text.find("\n", begin)
    stop = len(text) if stop < 0 else stop
    if text[begin:stop].lstrip().startswith("("):
        for match in _SIGNATURE_PARAM.finditer(text, begin, stop):
            name = match.group(1)
            if name in defined:
                index.occurrences.append(
                    Occurrence(
                        "instruction",
                        comp.name,
                        name,
                        match.start(1) - (1 if text[match.start(1) - 1] == "%" else 0),
                        match.end(1),
                        attribute="signature",
                    )
                )
