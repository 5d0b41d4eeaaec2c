"""HLO text into the typed IR of :mod:`hloidx.hlo.ir`, through ``grammars/hlo.lark``.

One LALR parser with an inline transformer (:class:`_Builder`): lark calls the builder as it
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
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..caches import register
from ..errors import HloidxError, HloSemanticError, HloSyntaxError
from ..grammar_files import grammar_text
from ..source import Source, Span
from .ir import CALL_ATTRIBUTES, Computation, HloModule, Instruction, Layout, Shape

__all__ = ["parse_hlo", "parse_hlo_lenient", "parse_shape"]

#: Opcodes whose parentheses hold a literal rather than operands.
LITERAL_OPCODES = frozenset({"parameter", "constant"})

#: Every element type XLA prints (xla/xla_data.proto PrimitiveType, lower-cased).
ELEMENT_TYPE = re.compile(
    r"pred|[su](?:2|4|8|16|32|64)|f(?:16|32|64)|bf16|c(?:64|128)|token|opaque"
    r"|f8e4m3(?:fn|b11fnuz|fnuz)?|f8e5m2(?:fnuz)?|f8e3m4|f8e8m0fnu|f4e2m1fn"
)

#: The deepest tuple nesting accepted in a shape (XLA prints a handful of levels at most).
MAX_TUPLE_DEPTH = 64


def _tuple_depth(shape: Shape) -> int:
    """Tuple nesting of an already accepted shape (so at most MAX_TUPLE_DEPTH levels)."""
    if shape.tuple_shapes is None:
        return 0
    return 1 + max((_tuple_depth(s) for s in shape.tuple_shapes), default=0)


#: The name of the computation a bare list of instructions is wrapped in.
SNIPPET_COMPUTATION = "entry"
SNIPPET_MODULE = "snippet"


# ---------------------------------------------------------------------------------------------
# The parser object (built once)
# ---------------------------------------------------------------------------------------------

_LOCK = threading.Lock()


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
    lark = Lark(grammar_text("hlo.lark"), lexer="contextual", transformer=builder, **_LARK_OPTIONS)
    return lark, builder


@cache
def _fast_parser() -> _FastParser | None:
    """The fast path over the parser's own tables, or None if lark's internals have moved."""
    try:
        return _FastParser(_parser()[0])
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


@cache
def _attribute_regex() -> re.Pattern[str]:
    """One ``, key=value`` (ATTRIBUTES is ``(?:ATTRIBUTE)+``; this is its ATTRIBUTE)."""
    lark, _ = _parser()
    pattern = lark.get_terminal("ATTRIBUTES").pattern.to_regexp()
    if not (pattern.startswith("(?:") and pattern.endswith(")+")):
        raise RuntimeError(f"ATTRIBUTES is not a repetition of ATTRIBUTE: {pattern[:40]}")
    return re.compile(pattern[3:-2])


def build_grammar(**options: Any) -> Lark:
    """A fresh Lark object for ``grammars/hlo.lark`` (tests build it with ``strict=True``)."""
    return Lark(grammar_text("hlo.lark"), **{**_LARK_OPTIONS, **options})


# ---------------------------------------------------------------------------------------------
# The fast path: one master regular expression and a plain LALR loop
# ---------------------------------------------------------------------------------------------


class _Fallback(Exception):
    """The fast path met something it does not decide itself (any error, an odd token)."""


class _FastParser:
    """Lexes with ONE compiled regular expression and drives lark's own LALR tables.

    lark's contextual lexer picks, in each parser state, the first alternative of its ordered
    terminal list that matches among the terminals that state accepts; this path matches with
    the same ordered list over ALL terminals (lark's root scanner, keyword re-typing included)
    and accepts the token only if the state accepts its type. Then both lexers chose the same
    token: every alternative ordered before it failed here, so it failed there too. Anything
    else (an unexpected character or token, a token only the contextual lexer would read) raises
    :class:`_Fallback`, and the caller re-parses with lark itself, whose errors we convert. The
    callbacks (child filters around :class:`_Builder`) are lark's, so results are identical;
    tokens carry ``type``, ``value``, ``start_pos`` and ``end_pos``, all the builder reads.
    """

    def __init__(self, lark: Lark) -> None:
        lalr = lark.parser.parser.parser
        table = lalr.parse_table
        self.start_states: dict[str, int] = dict(table.start_states)
        self.end_states: dict[str, int] = dict(table.end_states)
        self.callbacks = lalr.callbacks
        root = lark.parser.lexer.root_lexer
        scanner = root.scanner
        if len(scanner._mres) != 1:
            raise ValueError("lark split the terminals over several regular expressions")
        self.regex: re.Pattern[str] = scanner._mres[0]
        self.ignore: frozenset[str] = frozenset(root.ignore_types)
        # Keywords that a regex terminal also matches (`ROOT` is a NAME too): lark re-types the
        # token when its whole text is the keyword.
        self.keywords: dict[str, dict[str, str]] = {}
        for kind, callback in root.callback.items():
            strings = callback.scanner.terminals
            if type(callback).__name__ != "UnlessCallback" or any(t.pattern.flags for t in strings):
                raise ValueError(f"unexpected lexer callback on {kind}")
            self.keywords[kind] = {t.pattern.value: t.name for t in strings}
        # Per state: symbol -> (True, next state) or (False, (size, nonterminal, callback)).
        # Keys are plain strings: lark's nonterminal names are Tokens, whose == is slow.
        self.states: dict[int, dict[str, tuple[bool, Any]]] = {}
        for state, actions in table.states.items():
            row: dict[str, tuple[bool, Any]] = {}
            for symbol, (action, arg) in actions.items():
                if action.name == "Shift":
                    row[str(symbol)] = (True, arg)
                else:
                    reduce = (len(arg.expansion), str(arg.origin.name), self.callbacks[arg])
                    row[str(symbol)] = (False, reduce)
            self.states[state] = row
        if any(kind in self.callbacks for row in self.states.values() for kind in row):
            raise ValueError("terminal callbacks are not supported by the fast path")
        # Terminals every rule filters out (punctuation, `_COMMA`): no callback reads them, so
        # they are shifted as None rather than built as tokens.
        kept = {
            symbol.name
            for rule in lark.rules
            for symbol in rule.expansion
            if symbol.is_term and (not symbol.filter_out or rule.options.keep_all_tokens)
        }
        self.unread: frozenset[str] = frozenset(
            symbol.name
            for rule in lark.rules
            for symbol in rule.expansion
            if symbol.is_term and symbol.name not in kept
        )
        self.state_lexers = lark.parser.lexer.lexers

    def relex(self, state: int, text: str, position: int) -> tuple[str, str]:
        """The token lark's contextual lexer reads at ``position`` in ``state``."""
        lexer = self.state_lexers[state]
        for regex in lexer.scanner._mres:
            found = regex.match(text, position)
            if found is not None:
                break
        else:
            raise _Fallback(position)
        value, kind = found.group(), found.lastgroup
        callback = lexer.callback.get(kind)
        if callback is not None:
            kind = callback(Token(kind, value)).type
        return kind, value

    def parse(self, text: str, start: str) -> Any:
        states = self.states
        match = self.regex.match
        ignore = self.ignore
        keywords = self.keywords
        unread = self.unread
        end_state = self.end_states[start]
        new_str = str.__new__
        token_class = Token
        state = self.start_states[start]
        state_stack = [state]
        value_stack: list[Any] = []
        row = states[state]
        position = 0
        length = len(text)
        at_end = False
        while True:
            if position < length:
                found = match(text, position)
                if found is None:
                    raise _Fallback(position)
                kind = found.lastgroup
                end = found.end()
                if kind in ignore:
                    position = end
                    continue
                value = found.group()
                if kind in keywords:
                    kind = keywords[kind].get(value, kind)
                if kind not in row:
                    # What lark's lexer for this state reads (`{` opens a body, not a BLOB).
                    kind, value = self.relex(state, text, position)
                    end = position + len(value)
                    if kind in ignore:
                        position = end
                        continue
                if kind in unread:
                    token = None
                else:
                    token = new_str(token_class, value)
                    token.type = kind
                    token.value = value
                    token.start_pos = position
                    token.end_pos = end
                position = end
            else:
                kind = "$END"
                token = None
                at_end = True
            while True:
                action = row.get(kind)
                if action is None:
                    raise _Fallback(position)
                if action[0]:
                    if at_end:
                        raise _Fallback(position)  # lark never shifts the end marker
                    state = action[1]
                    state_stack.append(state)
                    value_stack.append(token)
                    row = states[state]
                    break
                size, origin, callback = action[1]
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value = callback(children)
                state = states[state_stack[-1]][origin][1]
                state_stack.append(state)
                value_stack.append(value)
                row = states[state]
                if at_end and state == end_state:
                    return value_stack[-1]


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------

_SHAPE_CACHE: dict[str, Shape] = {}
register(_SHAPE_CACHE.clear)


def parse_shape(text: str) -> Shape:
    """One array shape token: ``f32[10,<=20,?]{1,0:T(8,128)}``.

    The grammar validates the token's outline; a malformed number inside it (a stray newline in
    a layout, ``<=`` with nothing after it) raises :class:`HloSyntaxError` for the caller to
    locate.
    """
    shape = _SHAPE_CACHE.get(text)
    if shape is not None:
        return shape
    try:
        return _parse_shape_uncached(text)
    except (ValueError, IndexError):
        shown = " ".join(text.split())
        raise HloSyntaxError(
            f"malformed shape {shown!r}; expected a shape such as f32[10,20] or f32[<=10,?]{{1,0}}"
        ) from None


def _parse_shape_uncached(text: str) -> Shape:
    key, text = text, text.rstrip()  # the token carries the whitespace after it
    open_at = text.index("[")
    close_at = text.index("]", open_at)
    element_type = text[:open_at]
    dims: list[int] = []
    dynamic: list[bool] = []
    body = text[open_at + 1 : close_at].strip()
    if body:
        for part in body.split(","):
            part = part.strip()
            if part == "?":
                dims.append(-1)
                dynamic.append(True)
            elif part.startswith("<="):
                dims.append(int(part[2:].strip()))
                dynamic.append(True)
            else:
                dims.append(int(part))
                dynamic.append(False)
    layout = None
    rest = text[close_at + 1 :].lstrip()  # XLA's tests also write `f32[2,3] {0,1}`
    if rest:
        inner = rest[1:-1]
        order, _, tiling = inner.partition(":")
        minor_to_major = tuple(int(p) for p in order.replace(" ", "").split(",") if p.strip())
        layout = Layout(minor_to_major, tiling.strip())
    shape = Shape(element_type, tuple(dims), tuple(dynamic) if any(dynamic) else (), layout)
    if len(_SHAPE_CACHE) < 100_000:
        _SHAPE_CACHE[key] = shape
    return shape


# ---------------------------------------------------------------------------------------------
# The builder: grammar callbacks -> IR
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------------------------

_PAIR = re.compile(r"\([^()]*\)")
_ELEMENT = re.compile(r"[^\s{},]+")


def literal_element_count(literal: str) -> int:
    """How many values a literal holds: ``{ {1, 2}, {3, 4} }`` -> 4, ``-inf`` -> 1.

    Complex values are written as pairs ``(1, 2)`` and count once.
    """
    return len(_ELEMENT.findall(_PAIR.sub("x", literal)))


# ---------------------------------------------------------------------------------------------
# Linking: operands, roots, parameters, called computations
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Lark errors in human words
# ---------------------------------------------------------------------------------------------

_TERMINAL_WORDS = {
    "ARRAY_SHAPE": "a shape such as f32[10,20]",
    "NAME": "a name",
    "ATTRIBUTES": "',' and an attribute such as dimensions={0}",
    "NUMBER": "a number",
    "INT": "a number",
    "BLOB": "a {...} literal",
    "STRING": "a string",
    "DEFINED_NAME": "an instruction such as p0 = f32[2] parameter(0)",
    "CALL": "an opcode and '(' such as add(",
    "RPAR": "')'",
    "_COMMA": "','",
    "ROOT": "ROOT",
    "ENTRY": "ENTRY",
    "$END": "the end of the input",
}
_WORD_ORDER = [
    "a shape such as f32[10,20] or (f32[], s32[])",
    "a shape such as f32[10,20]",
    "a name",
    "ROOT",
    "ENTRY",
    "'('",
    "')'",
    "'{'",
    "'}'",
    "'='",
    "','",
]


@cache
def _anonymous_words() -> dict[str, str]:
    lark, _ = _parser()
    words: dict[str, str] = {}
    for terminal in lark.terminals:
        pattern = terminal.pattern
        if pattern.type == "str" and terminal.name not in _TERMINAL_WORDS:
            words[terminal.name] = f"'{pattern.value}'"
    return words


def _expected_words(names: set[str] | frozenset[str] | None) -> str:
    if not names:
        return ""
    anonymous = _anonymous_words()
    words = {_TERMINAL_WORDS.get(n) or anonymous.get(n) or n.lower() for n in names}
    if "a shape such as f32[10,20]" in words and "'('" in words:
        words.discard("'('")  # where a shape may come, '(' opens a tuple shape
        words.discard("a shape such as f32[10,20]")
        words.add("a shape such as f32[10,20] or (f32[], s32[])")
    if "a {...} literal" in words and "a number" in words:
        words.discard("a {...} literal")
        words.discard("a number")
        words.add("a literal")
    order = {w: i for i, w in enumerate(_WORD_ORDER)}
    ranked = sorted(words, key=lambda w: (order.get(w, len(order)), w))
    if len(ranked) > 6:
        ranked = [*ranked[:6], "..."]
    return ", ".join(ranked)


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "the end of the input"
    text = str(token).rstrip()
    if len(text) > 30:
        text = text[:27] + "..."
    return repr(text)


_ELEMENT_TYPE_AT = re.compile(r"([a-z][a-z0-9]*)\[")
_KEY_AT = re.compile(r"\s*,\s*([A-Za-z_][\w.\-]*)\s*=")


def _specific(source: Source, at: int, expected: set[str]) -> HloSyntaxError | None:
    """A clearer message for the common mistakes at ``at``, or None."""
    text = source.text
    if "ARRAY_SHAPE" in expected:
        match = _ELEMENT_TYPE_AT.match(text, at)
        if match:
            element_type = match.group(1)
            if not ELEMENT_TYPE.fullmatch(element_type):
                return HloSyntaxError(
                    f"unknown element type {element_type!r}; expected a shape such as f32[10,20]",
                    source.span(at, match.end(1)),
                )
            line_end = text.find("\n", at)
            line = text[at : line_end if line_end >= 0 else len(text)]
            close = line.find("]")
            shown = line[: close + 1] if close >= 0 else line[:20]
            return HloSyntaxError(
                f"malformed shape {shown!r}; expected a shape such as "
                f"f32[10,20] or f32[<=10,?]{{1,0}}",
                source.span(at, match.end()),
            )
    if "ATTRIBUTES" in expected:
        match = _KEY_AT.match(text, at)
        if match:
            key = match.group(1)
            return HloSyntaxError(
                f"malformed value of attribute {key}: unbalanced braces, brackets or quotes?",
                source.span(match.start(1), match.end(1)),
            )
    return None


def _convert(error: UnexpectedInput, source: Source, base: int, piece: str) -> HloSyntaxError:
    """A lark exception as our error: located, with the expected tokens in words."""
    if isinstance(error, UnexpectedToken) and error.token.type != "$END":
        token = error.token
        names = set(error.accepts or error.expected)
        at = base + token.start_pos
        specific = _specific(source, at, names)
        if specific:
            return specific
        expected = _expected_words(names)
        message = f"unexpected {_describe_token(token)}" + (
            f"; expected {expected}" if expected else ""
        )
        return HloSyntaxError(message, source.span(at, at + max(1, len(str(token).rstrip()))))
    if isinstance(error, UnexpectedCharacters):
        at = base + error.pos_in_stream
        names = set(error.allowed or ())
        specific = _specific(source, at, names)
        if specific:
            return specific
        char = source.text[at] if at < len(source.text) else ""
        shown = "NUL byte" if char == "\0" else f"character {char!r}"
        expected = _expected_words(names)
        message = f"unexpected {shown}" + (f"; expected {expected}" if expected else "")
        return HloSyntaxError(message, source.span(at, at + 1))
    if isinstance(error, UnexpectedToken | UnexpectedEOF):
        names = (
            set(error.accepts or error.expected)
            if isinstance(error, UnexpectedToken)
            else set(error.expected)
        )
        content_end = len(piece.rstrip())
        at = base + content_end
        if content_end == 0:
            return HloSyntaxError(
                "empty input; expected an HLO module, a computation or "
                "instructions such as p0 = f32[2] parameter(0)",
                source.span(at, at),
            )
        expected = _expected_words(names)
        return HloSyntaxError(
            "unexpected end of the input" + (f"; expected {expected}" if expected else ""),
            source.span(at, at),
        )
    return HloSyntaxError(str(error).splitlines()[0], source.span(base, base))


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def _run(text: str, source: Source, start: str, base: int) -> tuple[Any, _Builder]:
    """Parse ``text`` (a piece of ``source`` beginning at ``base``) from rule ``start``.

    Must be called with ``_LOCK`` held: the builder's per-parse state is shared.
    """
    lark, builder = _parser()
    builder.reset(source, base)
    enabled = gc.isenabled()
    gc.disable()  # the parse allocates many small objects and frees none: skip the collector
    try:
        fast = _fast_parser()
        if fast is not None:
            try:
                return fast.parse(text, start), builder
            except _Fallback:
                builder.reset(source, base)  # drop what the fast path built
        # Outside the handler, so that errors raised here do not chain to _Fallback.
        result = _parse_exactly(lark, text, start, source, base)
    finally:
        if enabled:
            gc.enable()
    return result, builder


def _parse_exactly(lark: Lark, text: str, start: str, source: Source, base: int) -> Any:
    try:
        return lark.parse(text, start=start)
    except UnexpectedInput as error:
        raise _convert(error, source, base, text) from None


def parse_hlo(text: str, name: str = "<string>") -> HloModule:
    """Parse HLO text: a module, a single computation or a bare list of instructions.

    Raises :class:`HloSyntaxError` (malformed text) or :class:`HloSemanticError` (an unknown
    operand, two ROOTs, ...), located at the offending token.
    """
    source = Source(name, text)
    with _LOCK:
        (header, body), builder = _run(text, source, "start", 0)
        errors = list(builder.errors)
        module = _assemble(header, body.computations, body.is_snippet, source, builder, errors)
        builder.pending = {}
    if errors:
        raise min(errors, key=lambda e: e.span.start if e.span else -1)  # the first in the text
    return module


# -- lenient parsing ------------------------------------------------------------------------------

# `name = shape ...` at the start of a line; the shape check keeps attribute lines such as
# `  left_side=true,` (XLA's tests split long instructions) from looking like instructions.
_INSTRUCTION_START = re.compile(
    r"^[ \t]*(?:ROOT[ \t]+)?%?[A-Za-z_][\w.\-]*[ \t]*=[ \t]*(?:\(|[a-z][a-z0-9]*\[)",
    re.MULTILINE,
)
_CONTINUED = re.compile(r",[ \t\r\n]*\Z")

_COMPUTATION_START = re.compile(
    r"^[ \t]*(?:ENTRY[ \t]+)?(%?[A-Za-z_][\w.\-]*)[ \t]*(?:\(.*\)[ \t]*->.*)?\{[ \t\r]*(?://.*)?$",
    re.MULTILINE,
)
_COMPUTATION_END = re.compile(r"^[ \t]*\}[ \t\r]*(?:,.*)?$", re.MULTILINE)
_HEADER = re.compile(r"^[ \t]*HloModule[ \t]+(%?[A-Za-z_][\w.\-]*)", re.MULTILINE)


def _instruction_starts(text: str, begin: int, stop: int) -> list[int]:
    """Offsets of the lines that open an instruction (not continuing the line before)."""
    starts = []
    for match in _INSTRUCTION_START.finditer(text, begin, stop):
        before = text[max(begin, match.start() - 200) : match.start()]
        if not _CONTINUED.search(before):
            starts.append(match.start())
    return starts


def parse_hlo_lenient(
    text: str, name: str = "<string>"
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
            module, errors = _recover(text, source)
            # The pieces re-find the syntax errors, each at its own instruction; the whole
            # parse's error is kept only when no piece holds it (say, text between computations).
            if not any(isinstance(e, HloSyntaxError) for e in errors):
                errors.insert(0, first)
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
        )
        builder.pending = {}
    return module, errors


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


def _recover(text: str, source: Source) -> tuple[HloModule | None, list[HloidxError]]:
    """Piecewise parse (with ``_LOCK`` held)."""
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
    for comp_name, is_entry, _, begin, stop in blocks:
        starts = _instruction_starts(text, begin, stop)
        instructions: list[Instruction] = []
        for i, piece_start in enumerate(starts):
            piece_end = starts[i + 1] if i + 1 < len(starts) else stop
            piece = text[piece_start:piece_end]
            try:
                instruction, piece_builder = _run(piece, source, "lone_instruction", piece_start)
            except HloSyntaxError as error:
                errors.append(error)
                if piece.lstrip().startswith("ROOT"):
                    rootless.add(comp_name)
                continue
            errors.extend(piece_builder.errors)
            pending.update(piece_builder.pending)
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
    module = _assemble(
        header, computations, is_snippet, source, builder, errors, drop_unresolved=True
    )
    builder.pending = {}
    return module, errors
