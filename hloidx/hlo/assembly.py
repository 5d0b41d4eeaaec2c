"""Assembling parsed computations into a module, whichever parser read them: linking operands
to their producers, checking ROOTs, parameter numbers and called computations, and dropping
what depends on a broken instruction (lenient mode). Free of lark, so that a module read by the
line parser never imports it."""

from __future__ import annotations

import re
from typing import Protocol

from ..errors import HloidxError, HloSemanticError
from ..source import Source, Span
from .attribute_checks import compatible_shapes as _compatible
from .attribute_checks import instruction_attribute_errors, module_attribute_errors
from .ir import CALL_ATTRIBUTES, Computation, HloModule, Instruction, Shape
from .shape_check import unknown_opcode

#: Opcodes whose parentheses hold a literal rather than operands.
LITERAL_OPCODES = frozenset({"parameter", "constant"})


#: The name of the computation a bare list of instructions is wrapped in.
SNIPPET_COMPUTATION = "entry"


SNIPPET_MODULE = "snippet"


class ParseState(Protocol):
    """What a parser leaves for the assembly: the source, each instruction's unresolved operands,
    and (lenient mode) the computations whose ROOT was dropped."""

    source: Source
    pending: dict[Instruction, _Pending]
    rootless: set[str]
    #: some instruction was written without its shape (the grammar's builder only)
    shapeless: bool
    #: (instruction, attribute, its computations written inline, a braced list?) (the grammar's
    #: builder only); the computations are in the parsed list, named by :func:`_assemble`
    inline_calls: list[tuple[Instruction, str, list[Computation], bool]]
    #: the text is one instruction: XLA's single-instruction form
    single: bool
    # (lenient recovery, the grammar's builder only) ``unparsed``: computation -> the names of
    # its instructions whose text did not parse; a use of one is no further error


class _Pending:
    """What an instruction still needs once its computation is complete."""

    __slots__ = ("operands", "root_at", "typed")

    def __init__(
        self,
        operands: list[tuple[str, int, int]],
        root_at: int | None,
        typed: dict[int, Shape] | None = None,
    ) -> None:
        #: operand name (without %) and its absolute start and end offsets
        self.operands = operands
        #: absolute offset of the ROOT keyword
        self.root_at = root_at
        #: operand position -> the shape written before its name (`f32[2] %x`), if any
        self.typed = typed


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


def _link_computation(
    computation: Computation,
    builder: ParseState,
    errors: list[HloidxError],
    drop_unresolved: bool = False,
    verify: bool = True,
) -> None:
    """Resolve operand names, check ROOT and parameter numbers (with ``verify``, also the
    shapes written before operand names); errors go to ``errors``."""
    by_name: dict[str, Instruction] = {}
    # names whose definitions failed to parse (already an error): a use adds none
    unparsed = getattr(builder, "unparsed", {}).get(computation.name, ())
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
    #: the get-tuple-elements written as operands (`t#1`), each with its first user
    implied: list[tuple[Instruction, Instruction]] = []
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
            if producer is None and "#" in name:
                producer = _element_operand(
                    name, start, end, instruction, by_name, builder.source, errors, implied
                )
                if producer is None:
                    broken.add(instruction)
                    continue
            if producer is None and name in unparsed:
                broken.add(instruction)
                continue
            if producer is None:
                message = (
                    f"operand {name} of {instruction.name} names no instruction in computation "
                    f"{computation.name}"
                    if name
                    else f"an operand of {instruction.name} is a shape without a name: only the "
                    "operands of a text that is one instruction may be (XLA's single-instruction "
                    "form, where each becomes a parameter)"
                )
                errors.append(HloSemanticError(message, builder.source.span(start, end)))
                broken.add(instruction)
            else:
                operands.append(producer)
        instruction.operands = operands
        if verify and pending.typed:
            _check_written_shapes(instruction, pending, by_name, builder.source, errors)

        if "control-predecessors" in instruction.attributes:
            _check_predecessors(instruction, by_name, computation.name, errors)
        errors.extend(
            instruction_attribute_errors(instruction, len(operands) == len(pending.operands))
        )

    if implied:
        _place_implied(computation, implied)
    dropped = _drop(computation, broken) if drop_unresolved and broken else set()
    for instruction in dropped:  # its opcode is wrong whatever its operands are
        opcode_error = unknown_opcode(instruction)
        if opcode_error is not None:
            errors.append(opcode_error)
    if any(i.is_root for i in dropped):
        builder.rootless.add(computation.name)
    if not any(i.is_root for i in computation.instructions) and computation.instructions:
        computation.instructions[-1].is_root = True  # XLA's rule: the last instruction


def _element_operand(
    name: str,
    start: int,
    end: int,
    user: Instruction,
    by_name: dict[str, Instruction],
    source: Source,
    errors: list[HloidxError],
    implied: list[tuple[Instruction, Instruction]],
) -> Instruction | None:
    """The operand ``t#i`` (``t#i#j``, ...): element ``i`` of the tuple-shaped instruction
    ``t``, as XLA's parser reads it (its dumps elide get-tuple-elements and write their
    elements so). Like XLA's parser, each element is one get-tuple-element of the computation,
    shared by all its uses, and made here; it is named as the text writes it (``t#1``), which
    no defined name can be. None (with a located error) when ``t`` is not a tuple with an
    element ``i``."""
    base, *indexes = name.split("#")
    span = source.span(start, end)
    producer = by_name.get(base)
    if producer is None:
        errors.append(
            HloSemanticError(
                f"operand {name} of {user.name}: {base} names no instruction in computation "
                f"{user.computation.name if user.computation else ''}",
                span,
            )
        )
        return None
    path = base
    for text in indexes:
        if not text.lstrip("-").isdigit():
            return None  # `t#` with no index: the parser reported it
        index = int(text)
        path = f"{path}#{index}"
        element = by_name.get(path)
        if element is None:
            shape = producer.shape
            if shape is not None and not shape.is_tuple:
                errors.append(
                    HloSemanticError(
                        f"operand {name} of {user.name}: {producer.name} is {shape}, not a "
                        f"tuple; #{index} selects an element of a tuple",
                        span,
                    )
                )
                return None
            elements = shape.tuple_shapes if shape is not None else None
            if elements is not None and not 0 <= index < len(elements):
                errors.append(
                    HloSemanticError(
                        f"operand {name} of {user.name}: {producer.name} is a tuple of "
                        f"{len(elements)} element{'s' if len(elements) != 1 else ''} "
                        f"(#0 to #{len(elements) - 1}), it has no element #{index}",
                        span,
                    )
                )
                return None
            element = Instruction(
                name=path,
                opcode="get-tuple-element",
                # a shape left out is inferred (the producer's, then this one's)
                shape=elements[index] if elements is not None else None,  # type: ignore[arg-type]
                operands=[producer],
                attributes={"index": str(index)},
                span=span,
            )
            element.computation = user.computation
            by_name[path] = element
            implied.append((element, user))
        producer = element
    return producer


def _place_implied(
    computation: Computation, implied: list[tuple[Instruction, Instruction]]
) -> None:
    """Each get-tuple-element written as an operand goes just before its first user."""
    before: dict[Instruction, list[Instruction]] = {}
    for element, user in implied:
        before.setdefault(user, []).append(element)
    placed: list[Instruction] = []
    for instruction in computation.instructions:
        elements = before.get(instruction)
        if elements is not None:
            placed.extend(elements)
        placed.append(instruction)
    computation.instructions = placed
    computation.__dict__.pop("by_name", None)


def _parameters_for_written_operands(computation: Computation, builder: ParseState) -> None:
    """XLA's single-instruction form, ``m = f32[2] multiply(f32[2] %a, f32[2])`` alone (with
    the anonymous instructions written inside it): each operand it does not define, written
    with its shape, is a parameter, numbered in the order of the text, as XLA's parser makes
    it. A named one keeps its name (once for all its uses); one written as a shape alone is
    named after its number, ``_0``, ``_1``, ... (a name taken already gets a suffix)."""
    defined = {i.name for i in computation.instructions}
    parameters: dict[str, Instruction] = {}
    for instruction in computation.instructions:
        pending = builder.pending.get(instruction)
        if pending is None or not pending.typed:
            continue
        operands = pending.operands
        for position, shape in pending.typed.items():
            name, start, end = operands[position]
            if name in defined or name in parameters or "#" in name:
                continue  # defined, a parameter already, or an element of a tuple (`t#1`)
            if not name:
                name = base = f"_{len(parameters)}"
                count = 0
                while name in defined or name in parameters:
                    count += 1
                    name = f"{base}.{count}"
                operands[position] = (name, start, end)
            parameter = Instruction(
                name=name,
                opcode="parameter",
                shape=shape,
                span=builder.source.span(start, end),
            )
            parameter.literal = str(len(parameters))
            builder.pending[parameter] = _Pending([], None)
            parameters[name] = parameter
    if parameters:
        computation.instructions = [*parameters.values(), *computation.instructions]


def _name_inline_computations(
    computations: list[Computation],
    calls: list[tuple[Instruction, str, list[Computation | str], bool]],
) -> set[str]:
    """Name each computation written inline after its caller and attribute
    (``fusion.calls``, ``conditional.branch_computations.1``; a name taken already gets a
    suffix), and write the name(s) as the attribute's value; returns the names made."""
    taken = {c.name for c in computations if c.name}
    made: set[str] = set()
    for instruction, key, inline, is_list in calls:
        names = []
        for number, computation in enumerate(inline):
            if isinstance(computation, str):  # a name in a list of computations
                names.append(computation)
                continue
            name = base = f"{instruction.name}.{key}" + (f".{number}" if is_list else "")
            count = 0
            while name in taken:
                count += 1
                name = f"{base}.{count}"
            taken.add(name)
            made.add(name)
            computation.name = name
            names.append(name)
        instruction.attributes[key] = "{" + ", ".join(names) + "}" if is_list else names[0]
    return made


def _check_written_shapes(
    instruction: Instruction,
    pending: _Pending,
    by_name: dict[str, Instruction],
    source: Source,
    errors: list[HloidxError],
) -> None:
    """A shape written before an operand name (`f32[2] %x`) is the operand's shape."""
    for position, written in (pending.typed or {}).items():
        name, start, end = pending.operands[position]
        producer = by_name.get(name)
        if producer is None or producer.shape is None or _compatible(written, producer.shape):
            continue
        errors.append(
            HloSemanticError(
                f"operand {name} of {instruction.name} is written as {written} "
                f"but is {producer.shape}",
                source.span(start, end),
            )
        )


def _check_result_shapes(module: HloModule, errors: list[HloidxError]) -> None:
    """A computation's root has the result shape its signature declares."""
    for computation in module.computations.values():
        declared = computation.result_shape
        root = computation.root if computation.instructions else None
        if declared is None or root is None or root.shape is None:
            continue
        if not _compatible(declared, root.shape):
            where = computation.span
            if where is not None:
                where = where.source.span(where.start, where.start + len(computation.name))
            errors.append(
                HloSemanticError(
                    f"computation {computation.name} declares the result {declared} but its "
                    f"root {root.name} is {root.shape}",
                    where,
                )
            )


def _check_predecessors(
    instruction: Instruction,
    by_name: dict[str, Instruction],
    computation: str,
    errors: list[HloidxError],
) -> None:
    """Each name of ``control-predecessors={...}`` is an instruction of the computation."""
    from .attributes import parse_name_list

    span = instruction.attribute_span("control-predecessors")
    try:
        names = parse_name_list(instruction.attributes["control-predecessors"])
    except HloidxError as error:
        errors.append(error.with_span(span))
        return
    for name in names:
        if name not in by_name:
            errors.append(
                HloSemanticError(
                    f"control predecessor {name} of {instruction.name} names no instruction "
                    f"in computation {computation}",
                    span,
                )
            )


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


_CALL_ATTRIBUTE_SET = frozenset(CALL_ATTRIBUTES)


def _called_names(instruction: Instruction):
    """``(attribute, the computation names it lists)`` for each call attribute of
    ``instruction``; the names are the :class:`HloidxError` when the value does not parse."""
    if instruction.attributes.keys().isdisjoint(_CALL_ATTRIBUTE_SET):
        return  # most instructions call nothing: one set test instead of ten look-ups
    from .attributes import parse_name_list

    for key in CALL_ATTRIBUTES:
        value = instruction.attributes.get(key)
        if value is None:
            continue
        try:
            yield key, parse_name_list(value)
        except HloidxError as error:
            yield key, error


def _drop_callers(module: HloModule, rootless: set[str]) -> None:
    """Lenient mode: drop every instruction calling a computation that lost its ROOT."""
    changed = True
    while changed:
        changed = False
        for computation in module.computations.values():
            callers = set()
            for instruction in computation.instructions:
                for _, names in _called_names(instruction):
                    # an unreadable list is reported by the called-computation check
                    if not isinstance(names, HloidxError) and rootless.intersection(names):
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
    builder: ParseState,
    errors: list[HloidxError],
    drop_unresolved: bool = False,
    verify: bool = True,
) -> HloModule:
    module = HloModule(
        name=header.name if header else SNIPPET_MODULE if is_snippet else "module",
        attributes=header.attributes if header else {},
        source=source,
    )
    if header is not None and header.attributes:
        errors.extend(module_attribute_errors(module))
    entries: list[Computation] = []
    generated: set[str] = set()
    inline_keys: set[tuple[int, str]] = set()
    if builder.inline_calls:
        generated = _name_inline_computations(computations, builder.inline_calls)
        inline_keys = {(id(i), key) for i, key, _, _ in builder.inline_calls}
    if builder.single and is_snippet:  # the text's one instruction is the last computation
        _parameters_for_written_operands(computations[-1], builder)
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
        _link_computation(computation, builder, errors, drop_unresolved, verify)
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
    if builder.shapeless:
        from .shape_inference import infer_missing_shapes

        shapeless = infer_missing_shapes(module, errors)
        for computation in module.computations.values():
            broken = {i for i in computation.instructions if i in shapeless}
            # strict parses raise the errors; lenient ones drop what has no shape
            if broken and any(i.is_root for i in _drop(computation, broken)):
                builder.rootless.add(computation.name)
    if verify and any(c.result_shape is not None for c in module.computations.values()):
        _check_result_shapes(module, errors)
    if drop_unresolved and builder.rootless:
        _drop_callers(module, builder.rootless)
    if not entries and module.computations:
        last = list(module.computations.values())[-1]
        last.is_entry = True  # XLA's rule when no computation says ENTRY
        entries.append(last)
    module.entry = entries[0] if entries else None

    # A bare list of instructions cannot define computations, so its `to_apply=max` and the
    # like stay unresolved on purpose (the seeds' snippets are written that way); the names
    # must still be names (not a computation written inline, which hloidx does not read).
    for computation in module.computations.values():
        for instruction in computation.instructions:
            for key, names in _called_names(instruction):
                if isinstance(names, HloidxError):
                    errors.append(names.with_span(instruction.attribute_span(key)))
                    continue
                if not names:  # `calls={}`, `calls=\n{\n}`: XLA reads no computation there
                    errors.append(
                        HloSemanticError(
                            f"{key}= of {instruction.name} names no computation",
                            instruction.attribute_span(key),
                        )
                    )
                for called in names:
                    if called in generated and (id(instruction), key) not in inline_keys:
                        # XLA: a computation written inline has no name another can call
                        errors.append(
                            HloSemanticError(
                                f"{instruction.name} refers to computation {called} ({key}=), "
                                "which does not exist (a computation written inline is named "
                                "by hloidx, not by the text)",
                                instruction.attribute_span(key),
                            )
                        )
                    elif called not in module.computations and not is_snippet:
                        errors.append(
                            HloSemanticError(
                                f"{instruction.name} refers to computation {called} "
                                f"({key}=), which does not exist",
                                instruction.attribute_span(key),
                            )
                        )
    return module


_HEADER = re.compile(r"^[ \t]*HloModule[ \t]+(%?[A-Za-z_][\w.\-]*)", re.MULTILINE)
