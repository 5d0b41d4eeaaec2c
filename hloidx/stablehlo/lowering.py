"""StableHLO statements lowered to HLO text, the way XLA converts them: one HLO computation per
``func.func`` and per region, an instruction per op, tuples and ``get-tuple-element`` for ops
with several results, values a region captures passed explicitly (``while``, ``case``).

The HLO text is then read by the HLO parser, so every op rule, fusion composition (calls),
utilization and ``check`` work on it unchanged. Each HLO line remembers the MLIR statement it
came from, so that an error is reported in the MLIR text.

An op that fails is not the end: its error (the first one of that op) is collected in
``errors``, what it wrote is taken back, and its results are poisoned, so that an op reading
them (a ``return``, a call of a function whose return reads one, a loop whose body does) is
left out without an error of its own. The HLO then holds every op that lowered.
"""

from __future__ import annotations

import re
from typing import Any

from .syntax import Group, Source, StableHloSyntaxError, Stmt, Tok, span_of
from .types import TensorType, read_type
from .values import (
    PoisonedValue,
    Scope,
    Value,
    _block_args,
    _is_value,
    _tuple_type,
    check_result_count,
)

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.\-]")


class Lowering:
    def __init__(self, source: Source, items: list[Any]) -> None:
        self.source = source
        self.items = items
        self.names: set[str] = set()
        self.blocks: list[tuple[str, list[tuple[str, int]]]] = []  # computations in order
        self.funcs: dict[str, Stmt] = {}
        self.lowered: dict[str, tuple[str, list[TensorType]]] = {}
        self.reducers: dict[tuple[str, str], str] = {}
        self.module_name = "stablehlo_module"
        #: every located error of an op, in the order found (each op's first error only)
        self.errors: list[StableHloSyntaxError] = []
        #: the SSA names (of the function being lowered) whose defining op failed
        self.poisoned: set[str] = set()
        #: functions whose return reads a poisoned value: a call of one is skipped quietly
        self.poisoned_funcs: set[str] = set()

    # -- names ----------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        base = _NAME_CHARS.sub("_", hint.lstrip("%@").strip('"')) or "v"
        if base[0].isdigit() or base[0] in ".-":
            base = "v" + base
        name, k = base, 1
        while name in self.names:
            name = f"{base}.{k}"
            k += 1
        self.names.add(name)
        return name

    def error(self, message: str, item: Any) -> StableHloSyntaxError:
        return StableHloSyntaxError(message, span_of(self.source, item))

    # -- module ----------------------------------------------------------------------
    def run(self) -> tuple[str, list[int]]:
        """The HLO text and, per HLO line, the MLIR offset it came from (-1: none)."""
        module = next((i for i in self.items if isinstance(i, Stmt) and i.kind == "module"), None)
        scope_items = self.items
        if module is not None:
            symbol = next(
                (p for p in module.pieces if isinstance(p, Tok) and p.type == "SYMBOL"), None
            )
            if symbol is not None:
                self.module_name = self.fresh(symbol.value)
            body = next(
                (
                    p
                    for p in module.pieces
                    if isinstance(p, Group)
                    and p.kind == "{"
                    and any(isinstance(s, Stmt) and s.kind == "func" for s in p.items)
                ),
                None,
            )
            scope_items = body.items if body is not None else []
        for stmt in scope_items:
            if isinstance(stmt, Stmt) and stmt.kind == "func":
                symbol = _symbol(stmt)
                if symbol is not None:
                    self.funcs[symbol] = stmt
        if not self.funcs:
            first = next(iter(self.items), None)
            raise self.error("no func.func in this StableHLO text", first or Tok("", "", 0))
        entry = (
            "@main"
            if "@main" in self.funcs
            else next(
                (s for s, f in self.funcs.items() if _visibility(f) == "public"),
                next(iter(self.funcs)),
            )
        )
        entry_name, _ = self.lower_func(entry, is_entry=True)
        lines = [f"HloModule {self.module_name}", ""]
        offsets = [-1, -1]
        for _title, block in self.blocks:
            for text, offset in block:
                lines.append(text)
                offsets.append(offset)
            lines.append("")
            offsets.append(-1)
        del entry_name
        return "\n".join(lines) + "\n", offsets

    def lower_func(self, symbol: str, is_entry: bool = False) -> tuple[str, list[TensorType]]:
        if symbol in self.lowered:
            if symbol in self.poisoned_funcs:
                raise PoisonedValue(symbol)
            return self.lowered[symbol]
        func = self.funcs.get(symbol)
        if func is None:
            raise self.error(f"call of an unknown function {symbol}", Tok("", "", 0))
        name = self.fresh(symbol.strip("@").strip('"'))
        args_group = next((p for p in func.pieces if isinstance(p, Group) and p.kind == "("), None)
        args = _block_args(args_group.items if args_group else [], self.source)
        body = next(
            (
                p
                for p in reversed(func.pieces)
                if isinstance(p, Group) and p.kind == "{" and (p.is_region or not p.items)
            ),
            None,
        )
        result_types = _func_results(func.pieces)
        self.lowered[symbol] = (name, result_types)  # before the body: recursion stays finite
        scope = Scope(name)
        for k, (ssa, t) in enumerate(args):
            hlo = self.fresh(ssa)
            scope.env[ssa] = Value(hlo, t)
            scope.lines.append((f"  {hlo} = {t.hlo} parameter({k})", func.start))
        if body is None:
            raise self.error(f"function {symbol} has no body (a declaration only)", func.head)
        outer, self.poisoned = self.poisoned, set()  # SSA names are scoped by function
        try:
            self.lower_body(scope, body.statements)
        except PoisonedValue:
            # its return reads a value whose op failed: a caller's call follows from that
            # error; the entry is written without its root (its errors are reported)
            self.poisoned_funcs.add(symbol)
            if not is_entry:
                raise
        finally:
            self.poisoned = outer
        self.finish(scope, ("ENTRY " if is_entry else "") + name)
        return name, result_types

    def finish(self, scope: Scope, title: str) -> None:
        lines = scope.lines
        if scope.root is not None:
            lines = [
                (text.replace(f"  {scope.root} = ", f"  ROOT {scope.root} = ", 1), off)
                if text.startswith(f"  {scope.root} = ")
                else (text, off)
                for text, off in lines
            ]
        self.blocks.append((title, [(f"{title} {{", -1), *lines, ("}", -1)]))

    # -- statements -------------------------------------------------------------------
    def lower_body(
        self, scope: Scope, statements: list[Stmt], extra: list[Value] | None = None
    ) -> list[Value]:
        """Lower ``statements``; the values of the final return (then ``extra``) become the
        root, a tuple when there are several."""
        from .ops import lower_op

        returned: list[Value] = []
        poisoned_return = False
        for stmt in statements:
            if stmt.kind == "return":
                try:
                    returned = [self.use(scope, t) for t in stmt.pieces if _is_value(t)]
                except PoisonedValue:
                    poisoned_return = True
                except StableHloSyntaxError as error:
                    self.errors.append(error)
                    poisoned_return = True
                continue
            if stmt.kind != "op":
                continue
            mark = len(scope.lines)
            try:
                lower_op(self, scope, stmt)
            except PoisonedValue:
                self._poison(scope, stmt, mark)  # follows from an error already reported
            except StableHloSyntaxError as error:
                self.errors.append(error)
                self._poison(scope, stmt, mark)
            except (IndexError, KeyError, TypeError, ValueError) as error:
                # an op missing a piece its handler reads (`dims = []`, a lone operand):
                # malformed input, reported at the op rather than as an internal error
                self.errors.append(
                    self.error(
                        "malformed op: it lacks an operand, attribute or type its conversion "
                        f"to HLO reads ({type(error).__name__})",
                        stmt.head,
                    )
                )
                self._poison(scope, stmt, mark)
        if poisoned_return:
            raise PoisonedValue("return")
        returned = returned + list(extra or [])
        if extra:
            scope.root = self.emit(scope, None, _tuple_type(returned), "tuple", returned, "", 0)
        elif len(returned) == 1 and returned[0].name in _defined(scope):
            scope.root = returned[0].name
        elif returned:
            scope.root = self.emit(scope, None, _tuple_type(returned), "tuple", returned, "", 0)
        return returned

    def _poison(self, scope: Scope, stmt: Stmt, mark: int) -> None:
        """``stmt`` failed: what it wrote is taken back and its results are poisoned, so that
        the ops reading them are skipped without errors of their own."""
        del scope.lines[mark:]
        if not stmt.head.value.rstrip().endswith("="):
            return
        names = [name for name, _ in stmt.result_groups] + stmt.result_names
        for name in names:
            scope.env.pop(name, None)
        self.poisoned.update(names)

    def use(self, scope: Scope, token: Tok) -> Value:
        value = scope.lookup(token.value)
        if value is None:
            base, hash_, index = token.value.partition("#")
            if token.value in self.poisoned or base in self.poisoned:
                raise PoisonedValue(token.value)
            if hash_ and scope.lookup(f"{base}#0") is not None:
                count = 1
                while scope.lookup(f"{base}#{count}") is not None:
                    count += 1
                raise self.error(
                    f"{token.value}: result {index} of {base}, which has {count} result"
                    + ("s" if count != 1 else "")
                    + f" (valid: {base}#0 to {base}#{count - 1})",
                    token,
                )
            single = scope.lookup(base) if hash_ else None
            if single is not None and single.type is not None and index == "0":
                return single  # `%x#0` of a single result is `%x`, as MLIR reads it
            if single is not None:
                raise self.error(
                    f"{token.value}: {base} has 1 result (valid: {base} or {base}#0)",
                    token,
                )
            raise self.error(f"{token.value} is used but never defined", token)
        return value

    def use_all(self, scope: Scope, tokens: list[Tok]) -> list[Value]:
        """The values of ``tokens``; each one that names no value is an error of its own (the
        first raised, the others collected), and one whose op failed makes the op poisoned."""
        values: list[Value] = []
        errors: list[StableHloSyntaxError] = []
        poisoned = False
        for token in tokens:
            try:
                values.append(self.use(scope, token))
            except PoisonedValue:
                poisoned = True
            except StableHloSyntaxError as error:
                if all(_at(e) != _at(error) for e in errors):  # `chlo.square %x`: x * x
                    errors.append(error)
        if errors:
            self.errors.extend(errors[1:])
            raise errors[0]
        if poisoned:
            raise PoisonedValue(tokens[0].value if tokens else "")
        return values

    def emit(
        self,
        scope: Scope,
        ssa: str | None,
        shape: str,
        opcode: str,
        operands: list[Value],
        attrs: str,
        offset: int,
    ) -> str:
        name = self.fresh(ssa or opcode)
        args = ", ".join(v.name for v in operands)
        suffix = f", {attrs}" if attrs else ""
        scope.lines.append((f"  {name} = {shape} {opcode}({args}){suffix}", offset))
        return name

    def bind(self, scope: Scope, stmt: Stmt, name: str, types: list[TensorType]) -> None:
        """Register the results of ``stmt``: one value, or a tuple and one element per result
        (``%0#k`` for ``%0:2 =``, each name for ``%values, %indices =``)."""
        ssa, count = stmt.results
        if count == 1 and len(types) <= 1:
            scope.env[ssa] = Value(name, types[0] if types else None)
            return
        check_result_count(self, stmt, len(types))
        names = stmt.result_names if count > 1 else [f"{ssa}#{k}" for k in range(len(types))]
        tuple_value = Value(name, None, tuple(types))
        if len(stmt.result_groups) == 1:
            scope.env[ssa] = tuple_value
        for k, t in enumerate(types):
            element = self.emit(
                scope,
                names[k] if "#" not in names[k] else f"{name}.{k}",
                t.hlo,
                "get-tuple-element",
                [tuple_value],
                f"index={k}",
                stmt.start,
            )
            scope.env[names[k]] = Value(element, t)

    def region(
        self,
        title: str,
        group: Group,
        params: list[tuple[str, TensorType]] | None = None,
        parent: Scope | None = None,
    ) -> tuple[str, Scope]:
        """A region as its own computation; ``params`` (else the ``^bb0(...)`` arguments) are
        its parameters, in order."""
        name = self.fresh(title)
        scope = Scope(name, parent=parent)
        if params is None:
            params = []
            for k, item in enumerate(group.items):
                if isinstance(item, Tok) and item.type == "BLOCK":
                    nxt = group.items[k + 1] if k + 1 < len(group.items) else None
                    if isinstance(nxt, Group):
                        params = _block_args(nxt.items, self.source)
                    break
        for k, (ssa, t) in enumerate(params):
            hlo = self.fresh(ssa)
            scope.env[ssa] = Value(hlo, t)
            scope.lines.append((f"  {hlo} = {t.hlo} parameter({k})", group.start))
        self.lower_body(scope, group.statements)
        self.finish(scope, name)
        return name, scope

    def reducer(self, op: str, element: str, count: int = 1) -> str:
        """``applies stablehlo.add``: a computation applying ``op`` to scalars."""
        from .ops import ELEMENTWISE

        key = (op, f"{element}x{count}")
        if key in self.reducers:
            return self.reducers[key]
        opcode = ELEMENTWISE.get(op.split(".")[-1], op.split(".")[-1])
        name = self.fresh(f"{opcode}_{element}")
        lines = [
            (f"  lhs = {element}[] parameter(0)", -1),
            (f"  rhs = {element}[] parameter(1)", -1),
        ]
        lines.append((f"  ROOT {name}.r = {element}[] {opcode}(lhs, rhs)", -1))
        self.blocks.append((name, [(f"{name} {{", -1), *lines, ("}", -1)]))
        self.reducers[key] = name
        return name


def _defined(scope: Scope) -> set[str]:
    return {text.split(" = ", 1)[0].strip() for text, _ in scope.lines}


def _symbol(stmt: Stmt) -> str | None:
    return next((p.value for p in stmt.pieces if isinstance(p, Tok) and p.type == "SYMBOL"), None)


def _visibility(stmt: Stmt) -> str:
    first = stmt.pieces[0] if stmt.pieces else None
    if isinstance(first, Tok) and first.value in ("public", "private", "nested"):
        return first.value
    return "public"


def _func_results(pieces: list[Any]) -> list[TensorType]:
    from .types import read_types

    arrow = next(
        (k for k, p in enumerate(pieces) if isinstance(p, Tok) and p.type == "ARROW"), None
    )
    if arrow is None:
        return []
    nxt = pieces[arrow + 1] if arrow + 1 < len(pieces) else None
    if isinstance(nxt, Group) and nxt.kind == "(":
        return read_types(nxt.items)
    t, _ = read_type(pieces, arrow + 1)
    return [t] if t is not None else []


def _at(error: StableHloSyntaxError) -> int:
    return -1 if error.span is None else error.span.start
