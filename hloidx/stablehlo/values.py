"""What the lowering and the op handlers share: SSA values, scopes (one HLO computation being
written), and :class:`LoweringContext`, the interface through which a handler of
:mod:`.ops` or :mod:`.op_forms` writes instructions (:class:`.lowering.Lowering` is the one
implementation). Its own module, so that the lowering can dispatch to the handlers without
the handlers importing the lowering."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .syntax import Group, Source, StableHloSyntaxError, Stmt, Tok, span_of
from .types import TensorType, read_type

__all__ = ["LoweringContext", "PoisonedValue", "Scope", "Value", "check_result_count"]


class PoisonedValue(Exception):
    """A use of an SSA value whose defining op failed (its error is already reported): the
    using op is skipped without an error of its own. Never reaches a user."""


@dataclass
class Value:
    """An SSA value's HLO instruction name and type (``types`` for a tuple-valued one)."""

    name: str
    type: TensorType | None
    types: tuple[TensorType, ...] = ()

    @property
    def shape(self) -> str:
        if self.type is not None:
            return self.type.hlo
        return "(" + ", ".join(t.hlo for t in self.types) + ")"


@dataclass
class Scope:
    """One HLO computation being written: its lines, parameters and SSA environment."""

    name: str
    lines: list[tuple[str, int]] = field(default_factory=list)  # (HLO line, MLIR offset)
    env: dict[str, Value] = field(default_factory=dict)
    root: str | None = None
    parent: Scope | None = None

    def lookup(self, ssa: str) -> Value | None:
        scope: Scope | None = self
        while scope is not None:
            if ssa in scope.env:
                return scope.env[ssa]
            scope = scope.parent
        return None


class LoweringContext(Protocol):
    """The lowering as the op handlers use it."""

    source: Source

    def fresh(self, hint: str) -> str: ...

    def error(self, message: str, item: Any) -> StableHloSyntaxError: ...

    def lower_func(self, symbol: str, is_entry: bool = False) -> tuple[str, list[TensorType]]: ...

    def finish(self, scope: Scope, title: str) -> None: ...

    def lower_body(
        self, scope: Scope, statements: list[Stmt], extra: list[Value] | None = None
    ) -> list[Value]: ...

    def use(self, scope: Scope, token: Tok) -> Value: ...

    def use_all(self, scope: Scope, tokens: list[Tok]) -> list[Value]: ...

    def emit(self, scope: Scope, ssa: str | None, *args: Any) -> str: ...

    def bind(self, scope: Scope, stmt: Stmt, name: str, types: list[TensorType]) -> None: ...

    def region(self, title: str, group: Group, *args: Any, **kwargs: Any) -> Any: ...

    def reducer(self, op: str, element: str, count: int = 1) -> str: ...


def _is_value(item: Any) -> bool:
    return isinstance(item, Tok) and item.type == "VALUE"


def _tuple_type(values: list[Value]) -> str:
    return "(" + ", ".join(v.shape for v in values) + ")"


def _block_args(items: list[Any], source: Source | None = None) -> list[tuple[str, TensorType]]:
    """``%arg0: tensor<4xf32> {attrs} loc(...), %arg1: ...`` as (name, type) pairs; errors
    located in ``source``."""
    out: list[tuple[str, TensorType]] = []
    k = 0
    while k < len(items):
        item = items[k]
        if (
            _is_value(item)
            and k + 1 < len(items)
            and isinstance(items[k + 1], Tok)
            and items[k + 1].type == "COLON"
        ):
            t, nxt = read_type(items, k + 2)
            if t is None:
                where = span_of(source, item) if source is not None else None
                raise StableHloSyntaxError(f"no type for {item.value}", where)
            out.append((item.value, t))
            k = nxt
            continue
        k += 1
    return out


def check_result_count(lowering: LoweringContext, stmt: Stmt, produced: int) -> None:
    """A located error when the results ``stmt`` names (``%a, %b =``, ``%0:3 =``) are not the
    ``produced`` results its op's type gives."""
    _, count = stmt.results
    if count == 1 or count == produced:
        return
    head = stmt.head.value.rstrip("=").strip()
    raise lowering.error(
        f"`{head}` names {count} results but the op has {produced} (by its type)", stmt.head
    )
