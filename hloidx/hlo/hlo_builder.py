"""The Lark transformer that builds the typed IR from HLO text (the assembly of a module is in
:mod:`.assembly`, shared with the line parser)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer

from ..errors import HloidxError, HloSemanticError, HloSyntaxError
from ..grammar_files import grammar_text, lark_parser
from ..source import Source, Span
from .assembly import (
    LITERAL_OPCODES,
    SNIPPET_COMPUTATION,
    _Body,
    _Header,
    _Pending,
)
from .ir import Computation, Instruction, Shape
from .shape_text import (
    MAX_TUPLE_DEPTH,
    _tuple_depth,
    literal_element_count,
    literal_nests_as,
    literal_value_error,
    parse_shape,
)

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


class _Signature:
    """A computation's signature; only its result shape is kept."""

    __slots__ = ("result",)

    def __init__(self, result: Shape) -> None:
        self.result = result


class _BareOperand:
    """An operand written as a shape alone (`multiply(f32[2], f32[2])`): in XLA's
    single-instruction form it becomes a parameter; anywhere else it is an error."""

    __slots__ = ("end", "shape", "start")
    type = "BARE"  # read where the builder tells tokens apart

    def __init__(self, shape: Any, start: int, end: int) -> None:
        self.shape = shape
        self.start = start
        self.end = end


class _Inline:
    """The computations written inline as one attribute's value (one body, or a braced list of
    them for ``branch_computations``, where a name may stand for one) and the offset after the
    closing brace."""

    __slots__ = ("computations", "end", "is_list")

    def __init__(self, computations: list[Computation], is_list: bool, end: int) -> None:
        self.computations = computations
        self.is_list = is_list
        self.end = end


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
        #: anonymous instructions written as operands, not yet claimed by their user
        self.anonymous: list[Instruction] = []
        #: instruction -> the anonymous instructions written inside it (they precede it)
        self.nested_before: dict[Instruction, list[Instruction]] = {}
        self.anonymous_names: dict[str, int] = {}
        #: some instruction is written without its shape: the assembly infers it
        self.shapeless = False
        #: offset of an operand name -> the shape written before it (`f32[2] %x`)
        self.typed_operands: dict[int, Any] = {}
        #: (instruction, attribute, computations written inline as its value, a braced list?)
        self.inline_calls: list[tuple[Instruction, str, list[Computation], bool]] = []
        #: computations written inline, not yet placed before the computation holding them
        self.inline_pending: list[Computation] = []
        #: computation -> the computations written inline inside it (they precede it)
        self.inline_before: dict[Computation, list[Computation]] = {}
        #: the text is one instruction (XLA's single-instruction form): operands it does not
        #: define, written with their shapes, become parameters
        self.single = False

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
        # XLA's redundant spelling: kept to check it against the producer's shape
        shape, name = children[0], children[-1]
        self.typed_operands[name.start_pos] = shape
        return name

    def bare_operand(self, children: list[Any]) -> _BareOperand:
        shape = children[0]
        if type(shape) is Token:
            start = shape.start_pos + self.base
            end = start + len(str(shape).rstrip())
            return _BareOperand(self.located_shape(str(shape), shape), start, end)
        return _BareOperand(shape, -1, -1)  # a tuple: located at its user's opcode

    def instruction(self, children: list[Any]) -> Instruction:
        first = children[0]
        if first.type == "ROOT":
            root_token: Token | None = first
            index = 1
        else:
            root_token = None
            index = 0
        name_token = children[index]
        name = str(name_token)
        name = name[: name.index("=")].rstrip()  # DEFINED_NAME is `name = `
        if name[0] == "%":
            name = name[1:]
        instruction = self._build(name, name_token, root_token, children, index + 1)
        if self.anonymous:  # written in place of operands: they come first
            self._claim_anonymous(instruction)
        return instruction

    def _claim_anonymous(self, instruction: Instruction) -> None:
        """The anonymous instructions written inside ``instruction`` precede it. (Those of an
        instruction whose inline computation holds this one stay for their own user.)"""
        start = instruction.span.start
        mine = [i for i in self.anonymous if i.span.start >= start]
        if mine:
            self.nested_before[instruction] = mine
            self.anonymous = [i for i in self.anonymous if i.span.start < start]

    def canonical_instruction(self, children: list[Any]) -> Instruction:
        """XLA's single instruction without a name (`f32[2] multiply(f32[2], f32[2])`): named
        after its opcode, unless an operand already has that name."""
        call = children[1]
        opcode = str(call)[: str(call).index("(")].rstrip()
        first = children[0] if type(children[0]) is Token else call
        instruction = self._build(opcode, first, None, children, 0)
        taken = {name for name, _, _ in self.pending[instruction].operands}
        count = 0
        while instruction.name in taken:
            count += 1
            instruction.name = f"{opcode}.{count}"
        if self.anonymous:
            self._claim_anonymous(instruction)
        return instruction

    def nested_instruction(self, children: list[Any]) -> Instruction:
        """An anonymous instruction written as an operand: ``multiply(x, y)`` inside ``add``;
        named as XLA names it (``multiply.anon``, ``multiply.anon.1``, ...)."""
        call = children[1]
        opcode = str(call)[: str(call).index("(")].rstrip()
        count = self.anonymous_names.get(opcode, 0)
        self.anonymous_names[opcode] = count + 1
        name = f"{opcode}.anon" + (f".{count}" if count else "")
        first = children[0] if isinstance(children[0], Token) else call
        instruction = self._build(name, first, None, [None, *children], 1)
        self.anonymous.append(instruction)
        return instruction

    def _build(
        self,
        name: str,
        name_token: Token,
        root_token: Token | None,
        children: list[Any],
        index: int,
    ) -> Instruction:
        """``children[index:]`` is ``[shape] CALL args... RPAR [ATTRIBUTES]``."""
        shape, call = children[index : index + 2]
        index += 2
        args: list[Any] = []
        while True:
            child = children[index]
            index += 1
            if child is None:
                continue
            if type(child) is Instruction:
                args.append(child)
                continue
            if child.type == "RPAR":
                rpar = child
                break
            args.append(child)
        if type(shape) is Token:
            shape = self.located_shape(str(shape), shape)
        elif shape is None:
            self.shapeless = True
        call_text = str(call)
        inline = children[index + 1] if index + 1 < len(children) else None
        paren = call_text.index("(")
        opcode = call_text[:paren].rstrip()
        attributes: dict[str, str] = {}
        offsets: dict[str, int] = {}
        end = rpar.end_pos
        base = self.base
        token = children[index] if index < len(children) else None
        if token is not None:
            self._split_attributes(token, attributes, offsets)
            end = token.end_pos
        if inline is not None:
            inline, end = self._inline_attributes(inline, attributes, offsets)
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
        typed: dict[int, Shape] | None = None
        if opcode in LITERAL_OPCODES:
            # Tokens for the error spans, built only here: most instructions take operands.
            at = call.start_pos
            opcode_token = Token("NAME", opcode, start_pos=at, end_pos=at + len(opcode))
            lpar = Token("LPAR", "(", start_pos=at + paren, end_pos=at + paren + 1)
            instruction.literal = self.text[lpar.end_pos + base : rpar.start_pos + base].strip()
            if shape is not None:  # else the shape inference asks for it, located
                self._check_literal(instruction, opcode_token, lpar)
        else:
            for token in args:
                if type(token) is Instruction:
                    span = token.span
                    operands.append((token.name, span.start, span.end))
                elif token.type == "BARE":
                    typed = typed or {}
                    typed[len(operands)] = token.shape
                    if token.start < 0:
                        token.start, token.end = call.start_pos + base, call.end_pos + base
                    operands.append(("", token.start, token.end))  # named by the assembly
                elif token.type == "NAME" or token.type == "ELEMENT_NAME":
                    if self.typed_operands:
                        written = self.typed_operands.pop(token.start_pos, None)
                        if written is not None:
                            if type(written) is Token:
                                written = self.located_shape(str(written), written)
                            typed = typed or {}
                            typed[len(operands)] = written
                    operand = str(token)
                    if token.type == "ELEMENT_NAME":
                        operand = self._element_name(token)
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
            operands, root_token.start_pos + base if root_token is not None else None, typed
        )
        if inline:
            for key, value in inline:
                self.inline_calls.append((instruction, key, value.computations, value.is_list))
        return instruction

    def _element_name(self, token: Token) -> str:
        """``%t # 1#0`` as ``%t#1#0``; an index left out (``%t#``) is reported at its ``#``."""
        text = str(token)
        name = "".join(text.split())
        for match in re.finditer(r"#\s*(?!\s|-?\d)", text):
            at = token.start_pos + self.base + match.start()
            self.errors.append(
                HloSyntaxError(
                    "expected an element index after '#' (`%t#1` is element 1 of the "
                    "tuple-shaped instruction t)",
                    Span(self.source, at, at + 1),
                )
            )
            break
        return name

    def _inline_attributes(
        self, parts: list[Any], attributes: dict[str, str], offsets: dict[str, int]
    ) -> tuple[list[tuple[str, _Inline]], int]:
        """``INLINE_KEY value [ATTRIBUTES]`` runs: the attributes whose values are written
        inline (their values are set to the generated names by the assembly) and the end."""
        calls: list[tuple[str, _Inline]] = []
        end = 0
        for at, part in enumerate(parts):
            if part is None:
                continue
            if type(part) is _Inline:
                end = part.end
                continue
            if part.type == "ATTRIBUTES":
                self._split_attributes(part, attributes, offsets)
                end = part.end_pos
                continue
            text = str(part)  # INLINE_KEY: `, key = ` (the `{` follows)
            key = text[text.index(",") + 1 : text.index("=")].strip()
            if key in attributes:
                where = part.start_pos + self.base + text.index(key)
                self.errors.append(
                    HloSyntaxError(
                        f"attribute {key} given twice", Span(self.source, where, where + len(key))
                    )
                )
            attributes[key] = ""  # the assembly writes the generated name
            offsets[key] = part.end_pos + self.base
            calls.append((key, parts[at + 1]))
        return calls, end

    def inline_body(self, children: list[Any]) -> _Inline:
        """A computation written inline: its instructions (with the anonymous ones written
        inside them) up to the closing brace; named by the assembly."""
        closing = children[-1]
        instructions = self._with_nested(children[:-1])
        first = instructions[0].span
        computation = Computation(
            name="",
            instructions=instructions,
            is_entry=False,
            span=Span(self.source, first.start, closing.end_pos + self.base),
        )
        self.inline_pending.append(computation)  # after those written inside it
        return _Inline([computation], False, closing.end_pos)

    def inline_list(self, children: list[Any]) -> _Inline:
        """A braced list of computations, each written inline or named (``%a``)."""
        items: list[Any] = []
        for child in children[:-1]:
            if type(child) is _Inline:
                items.extend(child.computations)
            else:
                items.append(str(child)[1:] if str(child)[0] == "%" else str(child))
        return _Inline(items, True, children[-1].end_pos)

    def inline_attributes(self, children: list[Any]) -> list[Any]:
        return children

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
        shape = instruction.shape
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
        if not literal:
            self.error(HloSyntaxError, "a constant needs a literal value", opcode_token)
            return
        if not shape.is_array or shape.dynamic or "..." in literal:
            return  # tuple literals, dynamic shapes and elided `{...}` are not counted
        problem = literal_value_error(literal, shape.element_type)
        if problem is not None:
            self.error(HloSemanticError, f"constant literal: {problem}", where)
            return
        count = literal_element_count(literal)
        expected = shape.num_elements()
        if count != expected and count != 1:  # XLA broadcasts a lone scalar to the shape
            self.error(
                HloSemanticError,
                f"constant literal has {count} element{'s' if count != 1 else ''} but "
                f"its shape {shape} has {expected}",
                where,
            )
        elif count == expected != 1 and not literal_nests_as(literal, shape.dims):
            self.error(
                HloSemanticError,
                f"constant literal's braces do not nest as its shape {shape} (one level of "
                "braces per dimension, e.g. { {1, 2}, {3, 4} } for [2,2])",
                where,
            )

    def lone_instruction(self, children: list[Any]) -> Instruction:
        return children[0]

    # -- computations ------------------------------------------------------------------------------
    def param_decl(self, children: list[Any]) -> None:
        return None

    def signature(self, children: list[Any]) -> _Signature:
        shape = children[-1]
        if type(shape) is Token:
            shape = self.located_shape(str(shape), shape)
        return _Signature(shape)

    def computation(self, children: list[Any]) -> Computation:
        is_entry = False
        index = 0
        if isinstance(children[0], Token) and children[0].type == "ENTRY":
            is_entry = True
            index = 1
        name_token = children[index]
        instructions = self._with_nested(children[index + 1 :])
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
        signature = children[index + 1]
        if type(signature) is _Signature:
            computation.result_shape = signature.result
        if self.inline_pending:  # written inline inside it: they precede it
            self.inline_before[computation] = self.inline_pending
            self.inline_pending = []
        return computation

    def computations(self, children: list[Computation]) -> _Body:
        if not self.inline_before:
            return _Body(list(children), is_snippet=False)
        body = []
        for computation in children:
            body.extend(self.inline_before.get(computation, ()))
            body.append(computation)
        return _Body(body, is_snippet=False)

    def _with_nested(self, children: list[Any]) -> list[Instruction]:
        """The instructions of a body, each preceded by those written inside it."""
        instructions = []
        nested = self.nested_before
        for child in children:
            if isinstance(child, Instruction):
                if nested and child in nested:
                    instructions.extend(nested[child])
                instructions.append(child)
        return instructions

    def snippet(self, children: list[Instruction]) -> _Body:
        instructions = self._with_nested(children)
        first = instructions[0].span
        last = instructions[-1].span
        span = Span(self.source, first.start, last.end) if first and last else None
        computation = Computation(
            name=SNIPPET_COMPUTATION, instructions=instructions, is_entry=True, span=span
        )
        self.single = len(children) == 1
        inline, self.inline_pending = self.inline_pending, []
        return _Body([*inline, computation], is_snippet=True)

    def single_instruction(self, children: list[Any]) -> tuple[None, _Body]:
        """The whole text is XLA's single instruction without a name."""
        return None, self.snippet(children)

    # -- module ----------------------------------------------------------------------------------
    def header(self, children: list[Any]) -> _Header:
        name = str(children[0]).rstrip(":")
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
