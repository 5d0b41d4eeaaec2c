"""Reading an op's pieces: operands, ``name = value`` attributes (pretty and generic forms),
the type signature after the top-level ``:``, and attribute values (lists, ``array<i64: ...>``,
``dense<...>``, ``#stablehlo.gather<...>`` records, numbers, booleans)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .syntax import Group, Stmt, Tok
from .types import TensorType, read_type, read_types


@dataclass
class OpPieces:
    """One op statement taken apart."""

    name: str  # `stablehlo.add`, `stablehlo.gather` (generic form unquoted), `call`
    operands: list[Tok]  # VALUE tokens, in order
    attrs: dict[str, Any]  # name -> the pieces of its value (read with the helpers below)
    operand_types: list[TensorType]
    result_types: list[TensorType]
    regions: list[Group]  # brace groups holding statements, in order
    body: list[Any]  # the pieces before the type signature (for op-specific forms)
    callee: str | None = None  # `@f` of call / custom_call / composite
    region_args: list[Group] = field(default_factory=list)  # `reducer(...)` parentheses


def split_op(stmt: Stmt) -> OpPieces:
    pieces = stmt.pieces
    if not pieces:
        raise ValueError("an op without a name")
    head = pieces[0]
    name = head.value.strip('"') if isinstance(head, Tok) else "?"
    rest = pieces[1:]
    colon = next(
        (k for k, p in enumerate(rest) if isinstance(p, Tok) and p.type == "COLON"), len(rest)
    )
    body, signature = rest[:colon], rest[colon + 1 :]
    regions = [p for p in rest if isinstance(p, Group) and p.is_region]
    for p in rest:  # generic form: `({ ... }, { ... })`
        if isinstance(p, Group) and p.kind == "(":
            regions += [g for g in p.items if isinstance(g, Group) and g.is_region]
    callee = next((p.value for p in body if isinstance(p, Tok) and p.type == "SYMBOL"), None)
    operands = _operands(body)
    region_args = []
    for k, p in enumerate(rest):
        if isinstance(p, Tok) and p.type == "BARE_ID" and p.value == "reducer":
            # the parentheses right after `reducer` (not a later `loc(...)`, debug info)
            for g in rest[k + 1 :]:
                if not (isinstance(g, Group) and g.kind == "("):
                    break
                region_args.append(g)
            break
    operand_types, result_types = _signature(signature)
    return OpPieces(
        name,
        operands,
        attributes(body),
        operand_types,
        result_types,
        regions,
        body,
        callee,
        region_args,
    )


def _operands(body: list[Any]) -> list[Tok]:
    """``op %a, %b``; or ``op(%a, %b)``, ``call @f(%a)``, ``stablehlo.reduce(%x init: %c),
    (%y init: %d)``: the values in the leading parentheses (never those of regions)."""
    k = 0
    while k < len(body) and isinstance(body[k], Tok) and body[k].type in ("SYMBOL", "STRING"):
        k += 1
    if k < len(body) and isinstance(body[k], Group) and body[k].kind == "(":
        out: list[Tok] = []
        while k < len(body) and isinstance(body[k], Group) and body[k].kind == "(":
            group = body[k]
            if any(
                isinstance(i, Stmt) or (isinstance(i, Group) and i.is_region) for i in group.items
            ):
                break
            out += [t for t in group.items if isinstance(t, Tok) and t.type == "VALUE"]
            k += 1
            if k < len(body) and isinstance(body[k], Tok) and body[k].type == "COMMA":
                k += 1
        return out
    return [t for t in body if isinstance(t, Tok) and t.type == "VALUE"]


def _signature(items: list[Any]) -> tuple[list[TensorType], list[TensorType]]:
    """``(A, B) -> R``, ``A -> R``, ``A, B`` (result: the last), ``T`` (all the same)."""
    stop = next(
        (
            k
            for k, p in enumerate(items)
            if (isinstance(p, Group) and p.kind == "{")
            or (
                isinstance(p, Tok) and p.type == "BARE_ID" and p.value in ("cond", "reducer", "loc")
            )
        ),
        len(items),
    )
    items = items[:stop]
    arrow = next((k for k, p in enumerate(items) if isinstance(p, Tok) and p.type == "ARROW"), None)
    if arrow is None:
        types = read_types(items)
        return types, types[-1:] if types else []
    lhs, rhs = items[:arrow], items[arrow + 1 :]

    def side(part: list[Any]) -> list[TensorType]:
        if len(part) == 1 and isinstance(part[0], Group) and part[0].kind == "(":
            return read_types(part[0].items)
        return read_types(part)

    return side(lhs), side(rhs)


def attributes(items: list[Any]) -> dict[str, list[Any]]:
    """``name = value`` pairs at the top level of ``items`` and inside ``{...}``/``<{...}>``
    attribute dictionaries (not inside regions); a value is the list of its pieces up to the
    next top-level comma."""
    out: dict[str, list[Any]] = {}
    _collect(items, out)
    return out


def _collect(items: list[Any], out: dict[str, list[Any]]) -> None:
    k = 0
    while k < len(items):
        item = items[k]
        if (
            isinstance(item, Tok)
            and item.type in ("BARE_ID", "STRING")
            and k + 1 < len(items)
            and isinstance(items[k + 1], Tok)
            and items[k + 1].type == "EQUAL"
        ):
            end = k + 2
            while end < len(items) and not (
                isinstance(items[end], Tok) and items[end].type == "COMMA"
            ):
                end += 1
            value = items[k + 2 : end]
            out.setdefault(item.value.strip('"'), value)
            # a dictionary printed right after a value with no comma between (`window = {...}
            # {feature_group_count = 2 : i64}`) holds attributes of the op too
            for part in value[1:]:
                if isinstance(part, Group) and part.kind == "{" and not part.is_region:
                    _collect(part.items, out)
            k = end
            continue
        if isinstance(item, Group) and item.kind in ("{", "<") and not item.is_region:
            _collect(item.items, out)
        k += 1


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


def ints(value: list[Any]) -> list[int]:
    """``[1, 2]``, ``array<i64: 1, 2>``, ``dense<[1, 2]> : tensor<2xi64>``, ``3 : i64``."""
    out: list[int] = []

    def walk(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, Tok) and item.type == "NUMBER":
                out.append(int(float(item.value)))
            elif isinstance(item, Group) and item.kind in ("[", "<"):
                if item.kind == "<" and _is_type_args(item):
                    continue
                walk(item.items)

    # stop at a `: type` suffix
    cut = next(
        (k for k, p in enumerate(value) if isinstance(p, Tok) and p.type == "COLON"), len(value)
    )
    head = value[:cut]
    if head and isinstance(head[0], Tok) and head[0].value == "array":
        inner = head[1].items if len(head) > 1 and isinstance(head[1], Group) else []
        colon = next(
            (k for k, p in enumerate(inner) if isinstance(p, Tok) and p.type == "COLON"), -1
        )
        walk(inner[colon + 1 :])
        return out
    walk(head)
    return out


def _is_type_args(group: Group) -> bool:
    return bool(group.items) and isinstance(group.items[0], Tok) and group.items[0].type == "DIMS"


def nested_ints(value: list[Any]) -> list[Any]:
    """``[[1, 1], [2, 2]]`` or ``dense<[[1, 1], [2, 2]]>`` as nested lists; ``dense<0> :
    tensor<2x2xi64>`` as a splat (a one-element list)."""

    def walk(item: Any) -> Any:
        if isinstance(item, Group) and item.kind == "[":
            return [walk(i) for i in item.items if not (isinstance(i, Tok) and i.type == "COMMA")]
        if isinstance(item, Tok) and item.type == "NUMBER":
            return int(float(item.value))
        return None

    for k, item in enumerate(value):
        if isinstance(item, Tok) and item.value == "dense" and k + 1 < len(value):
            inner = value[k + 1].items
            return walk(inner[0]) if inner and isinstance(inner[0], Group) else [walk(inner[0])]
        if isinstance(item, Group) and item.kind == "[":
            return walk(item)
    return []


def word(value: list[Any]) -> str | None:
    """The first bare word of a value (``true``, ``DEFAULT``, ``#stablehlo<comparison_direction
    LT>``'s ``LT``)."""
    for item in value:
        if isinstance(item, Tok) and item.type in ("BARE_ID", "STRING"):
            return item.value.strip('"')
        if isinstance(item, Group) and item.kind == "<":
            inner = word(item.items)
            if inner is not None:
                return inner.split()[-1]
    return None


def record(value: list[Any]) -> dict[str, list[Any]]:
    """``#stablehlo.gather<offset_dims = [1], ...>`` as its fields."""
    for item in value:
        if isinstance(item, Group) and item.kind == "<":
            return attributes(item.items)
    return {}


def first_type(value: list[Any]) -> TensorType | None:
    for k in range(len(value)):
        t, _ = read_type(value, k)
        if t is not None:
            return t
    return None
