"""The Lark transformer that builds the typed IR from HLO text, and the assembly of a module:
linking called computations, dropping what depends on a broken instruction."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer

from ..errors import HloidxError, HloSemanticError, HloSyntaxError
from ..grammar_files import grammar_text, lark_parser
from ..source import Source, Span
from .ir import CALL_ATTRIBUTES, Computation, HloModule, Instruction, Shape
from .shape_text import (
    MAX_TUPLE_DEPTH,
    _tuple_depth,
    literal_element_count,
    parse_shape,
)

#: Opcodes whose parentheses hold a literal rather than operands.
LITERAL_OPCODES = frozenset({"parameter", "constant"})


#: The name of the computation a bare list of instructions is wrapped in.
SNIPPET_COMPUTATION = "entry"


SNIPPET_MODULE = "snippet"


#: Shared by the parser and :func:`build_grammar`. No ``propagate_positions``: the builder reads
#: positions from tokens alone, and the meta bookkeeping cost ~10% of the parse.
_LARK_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "propagate_positions": False,
    "maybe_placeholders": True,
    "start": ["start", "lone_instruction", "lone_header"],
}


@cache
def _parser() -> tuple[Lark, _Builder]:
    builder = _Builder()
    lark = lark_parser(
        grammar_text("hlo.lark"), lexer="contextual", transformer=builder, **_LARK_OPTIONS
    )
    return lark, builder


@cache
def _attribute_regex() -> re.Pattern[str]:
    """One ``, key=value`` (ATTRIBUTES is ``(?:ATTRIBUTE)+``; this is its ATTRIBUTE)."""
    lark, _ = _parser()
    pattern = lark.get_terminal("ATTRIBUTES").pattern.to_regexp()
    if not (pattern.startswith("(?:") and pattern.endswith(")+")):
        raise RuntimeError(f"ATTRIBUTES is not a repetition of ATTRIBUTE: {pattern[:40]}")
    return re.compile(pattern[3:-2])


class _Pending:
    """What an instruction still needs once its computation is complete."""

    __slots__ = ("operands", "root_at")

    def __init__(self, operands: list[tuple[str, int, int]], root_at: int | None) -> None:
        #: operand name (without %) and its absolute start and end offsets
        self.operands = operands
        #: absolute offset of the ROOT keyword
        self.root_at = root_at


class _Header:
    __slots__ = ("attributes", "name")

    def __init__(self, name: str, attributes: dict[str, str]) -> None:
        self.name = name
        self.attributes = attributes


class _Body:
    __slots__ = ("computations", "is_snippet")

    def __init__(self, computations: list[Computation], is_snippet: bool) -> None:
        self.computations = computations
        self.is_snippet = is_snippet


class _Builder(Transformer):
    """Lark calls these as it reduces; state is per parse (see :meth:`reset`)."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.reset(Source("<string>", ""), 0)

    def reset(self, source: Source, base: int) -> None:
        self.source = source
        self.text = source.text
        #: offset of the parsed text inside ``source`` (non-zero when re-parsing a piece)
        self.base = base
        self.errors: list[HloidxError] = []
        self.pending: dict[Instruction, _Pending] = {}
        #: lenient mode: computations whose ROOT was dropped (their callers go too)
        self.rootless: set[str] = set()

    # -- helpers -----------------------------------------------------------------------------
    def span_of(self, token: Token, end: int | None = None) -> Span:
        start = token.start_pos + self.base
        stop = (token.end_pos if end is None else end) + self.base
        return Span(self.source, start, stop)

    def error(self, kind: type[HloidxError], message: str, token: Token) -> None:
        self.errors.append(kind(message, self.span_of(token)))

    # -- shapes --------------------------------------------------------------------------------
    # A shape arrives either as a Shape (tuples, spaced layouts) or as the bare ARRAY_SHAPE
    # token that `?shape` passes through; :func:`_shape` accepts both.
    def located_shape(self, text: str, token: Token) -> Shape:
        try:
            return parse_shape(text)
        except HloSyntaxError as error:
            raise error.with_span(self.span_of(token)) from None

    def spaced_layout(self, children: list[Token]) -> Shape:
        return self.located_shape(str(children[0]) + str(children[1]), children[0])

    def tuple_shape(self, children: list[Any]) -> Shape:
        closing = children[-1]
        elements = tuple(
            self.located_shape(str(c), c) if isinstance(c, Token) else c
            for c in children[:-1]
            if c is not None
        )
        # Shapes are hashed and printed recursively downstream; refuse absurd nesting here,
        # located, rather than let a later RecursionError end the run without a location.
        if 1 + max((_tuple_depth(e) for e in elements), default=0) > MAX_TUPLE_DEPTH:
            raise HloSyntaxError(
                f"tuple shapes nested more than {MAX_TUPLE_DEPTH} levels deep",
                self.span_of(closing),
            )
        return Shape("tuple", tuple_shapes=elements)

    # -- instructions ------------------------------------------------------------------------------
    def typed_operand(self, children: list[Any]) -> Token:
        return children[-1]  # the inline shape is XLA's redundant spelling; the producer's wins

    def instruction(self, children: list[Any]) -> Instruction:
        first = children[0]
        if first.type == "ROOT":
            root_token: Token | None = first
            name_token, shape, call = children[1:4]
            index = 4
        else:
            root_token = None
            name_token, shape, call = children[0:3]
            index = 3
        args: list[Token] = []
        while True:
            child = children[index]
            index += 1
            if child is None:
                continue
            if child.type == "RPAR":
                rpar = child
                break
            args.append(child)
        if type(shape) is Token:
            shape = self.located_shape(str(shape), shape)
        call_text = str(call)
        paren = call_text.index("(")
        opcode = call_text[:paren].rstrip()
        attributes: dict[str, str] = {}
        offsets: dict[str, int] = {}
        end = rpar.end_pos
        base = self.base
        token = children[index]
        if token is not None:
            self._split_attributes(token, attributes, offsets)
            end = token.end_pos
        name = str(name_token)
        name = name[: name.index("=")].rstrip()  # DEFINED_NAME is `name = `
        if name[0] == "%":
            name = name[1:]
        instruction = Instruction(
            name=name,
            opcode=opcode,
            shape=shape,
            attributes=attributes,
            attribute_offsets=offsets,
            span=self.span_of(name_token, end),
            is_root=root_token is not None,
        )
        operands: list[tuple[str, int, int]] = []
        if opcode in LITERAL_OPCODES:
            # Tokens for the error spans, built only here: most instructions take operands.
            at = call.start_pos
            opcode_token = Token("NAME", opcode, start_pos=at, end_pos=at + len(opcode))
            lpar = Token("LPAR", "(", start_pos=at + paren, end_pos=at + paren + 1)
            instruction.literal = self.text[lpar.end_pos + base : rpar.start_pos + base].strip()
            self._check_literal(instruction, opcode_token, lpar)
        else:
            for token in args:
                if token.type == "NAME":
                    operand = str(token)
                    operands.append(
                        (
                            operand[1:] if operand[0] == "%" else operand,
                            token.start_pos + base,
                            token.end_pos + base,
                        )
                    )
                else:
                    self.error(
                        HloSyntaxError,
                        f"expected an operand name, got {str(token)[:40]!r} "
                        f"({opcode} takes operands, not a literal)",
                        token,
                    )
        self.pending[instruction] = _Pending(
            operands, root_token.start_pos + base if root_token is not None else None
        )
        return instruction

    def _split_attributes(
        self, token: Token, attributes: dict[str, str], offsets: dict[str, int]
    ) -> None:
        """One ATTRIBUTES token into ``key -> raw value`` and ``key -> value offset``."""
        at = token.start_pos + self.base
        for match in _attribute_regex().finditer(str(token)):
            text = match.group()
            eq = text.index("=")
            key = text[text.index(",") + 1 : eq].strip()
            value_at = eq + 1
            while text[value_at] in " \t\r\n":
                value_at += 1
            if key in attributes:
                self.errors.append(
                    HloSyntaxError(
                        f"attribute {key} given twice",
                        Span(self.source, at + match.start(), at + match.start() + eq),
                    )
                )
            attributes[key] = text[value_at:]
            offsets[key] = at + match.start() + value_at

    def _check_literal(self, instruction: Instruction, opcode_token: Token, lpar: Token) -> None:
        literal = instruction.literal or ""
        raw = self.text[lpar.end_pos + self.base : lpar.end_pos + self.base + len(literal) + 64]
        start = lpar.end_pos + len(raw) - len(raw.lstrip())  # the literal may follow spaces
        where = Token("LITERAL", literal, start_pos=start, end_pos=start + len(literal))
        if instruction.opcode == "parameter":
            if not literal.isdigit():
                self.error(
                    HloSyntaxError,
                    f"a parameter number must be a non-negative integer, got {literal!r}",
                    where if literal else opcode_token,
                )
            return
        shape = instruction.shape
        if not literal:
            self.error(HloSyntaxError, "a constant needs a literal value", opcode_token)
            return
        if not shape.is_array or shape.dynamic or "..." in literal:
            return  # tuple literals, dynamic shapes and elided `{...}` are not counted
        count = literal_element_count(literal)
        expected = shape.num_elements()
        if count != expected and count != 1:  # XLA broadcasts a lone scalar to the shape
            self.error(
                HloSemanticError,
                f"constant literal has {count} element{'s' if count != 1 else ''} but "
                f"its shape {shape} has {expected}",
                where,
            )

    def lone_instruction(self, children: list[Any]) -> Instruction:
        return children[0]

    # -- computations ------------------------------------------------------------------------------
    def param_decl(self, children: list[Any]) -> None:
        return None

    def signature(self, children: list[Any]) -> str:
        return "signature"

    def computation(self, children: list[Any]) -> Computation:
        is_entry = False
        index = 0
        if isinstance(children[0], Token) and children[0].type == "ENTRY":
            is_entry = True
            index = 1
        name_token = children[index]
        instructions = [c for c in children[index + 1 :] if isinstance(c, Instruction)]
        name = str(name_token)
        if name[0] == "%":
            name = name[1:]
        end = (
            instructions[-1].span.end - self.base
            if instructions and instructions[-1].span
            else None
        )
        computation = Computation(
            name=name,
            instructions=instructions,
            is_entry=is_entry,
            span=self.span_of(name_token, end),
        )
        return computation

    def computations(self, children: list[Computation]) -> _Body:
        return _Body(list(children), is_snippet=False)

    def snippet(self, children: list[Instruction]) -> _Body:
        instructions = list(children)
        first = instructions[0].span
        last = instructions[-1].span
        span = Span(self.source, first.start, last.end) if first and last else None
        computation = Computation(
            name=SNIPPET_COMPUTATION, instructions=instructions, is_entry=True, span=span
        )
        return _Body([computation], is_snippet=True)

    # -- module ----------------------------------------------------------------------------------
    def header(self, children: list[Any]) -> _Header:
        name = str(children[0])
        attributes: dict[str, str] = {}
        if children[1] is not None:
            self._split_attributes(children[1], attributes, {})
        return _Header(name[1:] if name.startswith("%") else name, attributes)

    def lone_header(self, children: list[Any]) -> _Header:
        return children[0]

    def table_entry(self, children: list[Any]) -> None:
        return None

    def debug_table(self, children: list[Any]) -> None:
        return None

    def start(self, children: list[Any]) -> tuple[_Header | None, _Body]:
        header = children[0] if isinstance(children[0], _Header) else None
        return header, children[-1]


def _link_computation(
    computation: Computation,
    builder: _Builder,
    errors: list[HloidxError],
    drop_unresolved: bool = False,
) -> None:
    """Resolve operand names, check ROOT and parameter numbers; errors go to ``errors``."""
    by_name: dict[str, Instruction] = {}
    for instruction in computation.instructions:
        instruction.computation = computation
        if instruction.name in by_name:
            errors.append(
                HloSemanticError(
                    f"instruction {instruction.name} is defined twice in computation "
                    f"{computation.name}",
                    _name_span(instruction),
                )
            )
            continue
        by_name[instruction.name] = instruction

    roots: list[Instruction] = []
    parameters: dict[int, Instruction] = {}
    broken: set[Instruction] = set()
    for instruction in computation.instructions:
        pending = builder.pending.get(instruction)
        if pending is None:
            continue
        if instruction.is_root:
            roots.append(instruction)
            if len(roots) == 2:
                errors.append(
                    HloSemanticError(
                        f"computation {computation.name} has a second ROOT "
                        f"({instruction.name}; the first is {roots[0].name})",
                        builder.source.span(pending.root_at, pending.root_at + 4),
                    )
                )
        if (
            instruction.opcode == "parameter"
            and instruction.literal
            and instruction.literal.isdigit()
        ):
            number = int(instruction.literal)
            if number in parameters:
                errors.append(
                    HloSemanticError(
                        f"parameter number {number} is used twice in computation "
                        f"{computation.name} (also by {parameters[number].name})",
                        _literal_span(instruction),
                    )
                )
            else:
                parameters[number] = instruction
        operands: list[Instruction] = []
        for name, start, end in pending.operands:
            producer = by_name.get(name)
            if producer is None:
                errors.append(
                    HloSemanticError(
                        f"operand {name} of {instruction.name} names no instruction in computation "
                        f"{computation.name}",
                        builder.source.span(start, end),
                    )
                )
                broken.add(instruction)
            else:
                operands.append(producer)
        instruction.operands = operands

    dropped = _drop(computation, broken) if drop_unresolved and broken else set()
    if any(i.is_root for i in dropped):
        builder.rootless.add(computation.name)
    if not any(i.is_root for i in computation.instructions) and computation.instructions:
        computation.instructions[-1].is_root = True  # XLA's rule: the last instruction


def _drop(computation: Computation, broken: set[Instruction]) -> set[Instruction]:
    """Remove ``broken`` instructions and, transitively, every instruction reading one."""
    changed = True
    while changed:
        changed = False
        for instruction in computation.instructions:
            if instruction not in broken and any(o in broken for o in instruction.operands):
                broken.add(instruction)
                changed = True
    computation.instructions = [i for i in computation.instructions if i not in broken]
    computation.__dict__.pop("by_name", None)
    return broken


def _drop_callers(module: HloModule, rootless: set[str]) -> None:
    """Lenient mode: drop every instruction calling a computation that lost its ROOT."""
    from .attributes import parse_name_list

    changed = True
    while changed:
        changed = False
        for computation in module.computations.values():
            callers = set()
            for instruction in computation.instructions:
                for key in CALL_ATTRIBUTES:
                    value = instruction.attributes.get(key)
                    if value is None:
                        continue
                    try:
                        names = parse_name_list(value)
                    except HloidxError:
                        continue  # reported by the called-computation check
                    if rootless.intersection(names):
                        callers.add(instruction)
            if callers:
                dropped = _drop(computation, callers)
                if computation.name not in rootless and any(i.is_root for i in dropped):
                    rootless.add(computation.name)
                    changed = True


def _name_span(instruction: Instruction) -> Span | None:
    span = instruction.span
    if span is None:
        return None
    return span.source.span(span.start, span.start + len(instruction.name) + 1)


def _literal_span(instruction: Instruction) -> Span | None:
    span = instruction.span
    if span is None or instruction.literal is None:
        return span
    text = span.source.text
    at = text.find(instruction.literal, span.start, span.end)
    return span.source.span(at, at + len(instruction.literal)) if at >= 0 else span


def _assemble(
    header: _Header | None,
    computations: list[Computation],
    is_snippet: bool,
    source: Source,
    builder: _Builder,
    errors: list[HloidxError],
    drop_unresolved: bool = False,
) -> HloModule:
    module = HloModule(
        name=header.name if header else SNIPPET_MODULE if is_snippet else "module",
        attributes=header.attributes if header else {},
        source=source,
    )
    entries: list[Computation] = []
    for computation in computations:
        if computation.name in module.computations:
            where = computation.span
            if where is not None:
                where = source.span(where.start, where.start + len(computation.name) + 1)
            errors.append(
                HloSemanticError(f"computation {computation.name} is defined twice", where)
            )
            continue
        computation.module = module
        module.computations[computation.name] = computation
        _link_computation(computation, builder, errors, drop_unresolved)
        if computation.is_entry:
            entries.append(computation)
            if len(entries) == 2:
                errors.append(
                    HloSemanticError(
                        f"a second ENTRY computation ({computation.name}; the first is "
                        f"{entries[0].name})",
                        computation.span,
                    )
                )
    if drop_unresolved and builder.rootless:
        _drop_callers(module, builder.rootless)
    if not entries and module.computations:
        last = list(module.computations.values())[-1]
        last.is_entry = True  # XLA's rule when no computation says ENTRY
        entries.append(last)
    module.entry = entries[0] if entries else None

    if not is_snippet:
        # A bare list of instructions cannot define computations, so its `to_apply=max` and
        # the like stay unresolved on purpose (the seeds' snippets are written that way).
        from .attributes import parse_name_list

        for computation in module.computations.values():
            for instruction in computation.instructions:
                for key in CALL_ATTRIBUTES:
                    value = instruction.attributes.get(key)
                    if value is None:
                        continue
                    try:
                        names = parse_name_list(value)
                    except HloidxError as error:
                        errors.append(error.with_span(instruction.attribute_span(key)))
                        continue
                    for called in names:
                        if called not in module.computations:
                            errors.append(
                                HloSemanticError(
                                    f"{instruction.name} refers to computation {called} "
                                    f"({key}=), which does not exist",
                                    instruction.attribute_span(key),
                                )
                            )
    return module


_HEADER = re.compile(r"^[ \t]*HloModule[ \t]+(%?[A-Za-z_][\w.\-]*)", re.MULTILINE)
