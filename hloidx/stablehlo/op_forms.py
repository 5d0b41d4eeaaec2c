"""The StableHLO ops with structure: convolution, gather, scatter, sort, while, case/if,
custom_call, composite, tuples. Control flow passes the values a region captures explicitly,
as XLA's conversion does (a while loop carries them through its state)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attributes import OpPieces, attributes, ints, nested_ints, record, word
from .syntax import Group, Stmt, Tok
from .values import check_result_count

if TYPE_CHECKING:
    from .values import LoweringContext as Lowering
    from .values import Scope, Value


def _simple(*args: Any) -> None:
    from .emit import _simple as simple

    simple(*args)


def _braces(values: list[int]) -> str:
    return "{" + ",".join(str(v) for v in values) + "}"


# ---------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------


def _convolution(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    labels = _conv_labels(op)
    if labels is None:
        raise lowering.error("convolution: no dim_numbers / dimension_numbers", stmt.head)
    lhs, rhs, out = labels
    window_attrs: dict[str, list[Any]] = {}
    window = op.attrs.get("window")
    if window:
        group = next((g for g in window if isinstance(g, Group) and g.kind == "{"), None)
        if group is not None:
            window_attrs = attributes(group.items)
    kernel = op.operand_types[1] if len(op.operand_types) > 1 else None
    spatial = [c for c in rhs if c.isdigit()]
    sizes = []
    for k in range(len(spatial)):
        position = rhs.index(str(k))
        sizes.append(kernel.dims[position] if kernel and kernel.dims[position] is not None else 1)

    def get(*names: str) -> list[Any]:
        for name in names:
            if name in window_attrs:
                return window_attrs[name]
            if name in op.attrs:
                return op.attrs[name]
        return []

    pads = nested_ints(get("pad", "padding"))
    from .emit import _window

    text = _window(
        sizes,
        ints(get("stride", "window_strides")),
        pads if pads and isinstance(pads[0], list) else [],
        ints(get("lhs_dilate", "lhs_dilation")),
        ints(get("rhs_dilate", "rhs_dilation")),
    )
    reverse = [
        w for w in get("reverse", "window_reversal") if isinstance(w, Tok) and w.type == "BARE_ID"
    ]
    if any(w.value == "true" for w in reverse):
        flags = "x".join("1" if w.value == "true" else "0" for w in reverse)
        text = text[:-1] + f" rhs_reversal={flags}}}"
    attrs = [text, f"dim_labels={lhs}_{rhs}->{out}"]
    for name in ("feature_group_count", "batch_group_count"):
        if name in op.attrs:
            value = ints(op.attrs[name])
            if value and value[0] != 1:
                attrs.append(f"{name}={value[0]}")
    _simple(lowering, scope, stmt, op, "convolution", ", ".join(attrs))


def _conv_labels(op: OpPieces) -> tuple[str, str, str] | None:
    value = op.attrs.get("dim_numbers") or op.attrs.get("dimension_numbers")
    if value is None:
        return None
    groups = [g for g in value if isinstance(g, Group) and g.kind == "["]
    if not groups:  # generic: #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>
        inner = next((g for g in value if isinstance(g, Group) and g.kind == "<"), None)
        groups = [g for g in inner.items if isinstance(g, Group) and g.kind == "["] if inner else []
    if len(groups) != 3:
        return None

    def label(group: Group) -> str:
        return "".join(t.value for t in group.items if isinstance(t, Tok) and t.type != "COMMA")

    return label(groups[0]), label(groups[1]), label(groups[2])


# ---------------------------------------------------------------------------
# Gather and scatter
# ---------------------------------------------------------------------------


def _gather(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    numbers = record(op.attrs.get("dimension_numbers", []))
    attrs = []
    for name in (
        "offset_dims",
        "collapsed_slice_dims",
        "operand_batching_dims",
        "start_indices_batching_dims",
        "start_index_map",
    ):
        values = ints(numbers.get(name, []))
        if values or name in ("offset_dims", "collapsed_slice_dims", "start_index_map"):
            attrs.append(f"{name}={_braces(values)}")
    attrs.append(f"index_vector_dim={ints(numbers.get('index_vector_dim', []))[0]}")
    attrs.append(f"slice_sizes={_braces(ints(op.attrs.get('slice_sizes', [])))}")
    _simple(lowering, scope, stmt, op, "gather", ", ".join(attrs))


def _scatter(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    numbers = record(op.attrs.get("scatter_dimension_numbers", []))
    attrs = []
    for name in (
        "update_window_dims",
        "inserted_window_dims",
        "input_batching_dims",
        "scatter_indices_batching_dims",
        "scatter_dims_to_operand_dims",
    ):
        values = ints(numbers.get(name, []))
        if values or name in (
            "update_window_dims",
            "inserted_window_dims",
            "scatter_dims_to_operand_dims",
        ):
            attrs.append(f"{name}={_braces(values)}")
    attrs.append(f"index_vector_dim={ints(numbers.get('index_vector_dim', []))[0]}")
    count = (len(op.operands) - 1) // 2
    element = op.operand_types[0].element if op.operand_types else "f32"
    params = None
    if op.regions:
        name, _ = lowering.region(f"scatter_{stmt.results[0]}", op.regions[0], params)
    else:
        name = lowering.reducer("stablehlo.add", element, count)
    attrs.append(f"to_apply={name}")
    _simple(lowering, scope, stmt, op, "scatter", ", ".join(attrs))


# ---------------------------------------------------------------------------
# Sort, custom calls, composites, tuples
# ---------------------------------------------------------------------------


def _sort(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    dimension = ints(op.attrs.get("dimension", []) or [Tok("NUMBER", "0", 0)])[0]
    stable = word(op.attrs.get("is_stable", [])) == "true"
    if not op.regions:
        raise lowering.error("sort: no comparator region", stmt.head)
    name, _ = lowering.region(f"compare_{stmt.results[0]}", op.regions[0])
    attrs = f"dimensions={{{dimension}}}" + (", is_stable=true" if stable else "")
    _simple(lowering, scope, stmt, op, "sort", f"{attrs}, to_apply={name}")


def _top_k(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    """``%values, %indices = chlo.top_k(%x, k = 5) : A -> (V, I)``: XLA's ``topk`` (the k largest
    of each row along the minor dimension; the HLO XLA converts it to, with the same maps)."""
    types = op.result_types
    if len(op.operands) != 1 or len(types) != 2:
        raise lowering.error(
            "chlo.top_k: expected one operand and two results (values, indices): "
            "`chlo.top_k(%x, k = K) : tensor<...> -> (tensor<...>, tensor<...>)`",
            stmt.head,
        )
    k = types[0].dims[-1] if types[0].dims else None
    written = _paren_attribute(op, "k")
    if written is not None and k is not None and written != k:
        raise lowering.error(
            f"chlo.top_k: k = {written} but the result type keeps {k} per row", stmt.head
        )
    k = k if k is not None else written
    _simple(lowering, scope, stmt, op, "topk", f"k={k}, largest=true")


def _approx_top_k(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> bool:
    """``lax.approx_max_k``'s ``custom_call @ApproxTopK(x, iota, init, init)`` with
    ``is_fallback = true``: what XLA converts it to, an exact top-k (a sort of the operand and
    its iota along ``reduction_dim`` by the comparator, then the first ``top_k`` of each).
    False (left an opaque custom-call) for any other form."""
    from .values import Value, _tuple_type

    config: dict[str, list[Any]] = {}
    for item in op.attrs.get("mhlo.backend_config", []):
        if isinstance(item, Group) and item.kind == "{":
            config = attributes(item.items)
    comparator = next(
        (
            t.value
            for t in op.attrs.get("called_computations", [])
            for t in (t.items if isinstance(t, Group) else [t])
            if isinstance(t, Tok) and t.type == "SYMBOL"
        ),
        None,
    )
    types = op.result_types
    if (
        word(config.get("is_fallback", [])) != "true"
        or word(config.get("aggregate_to_topk", [])) != "true"
        or ints(config.get("reduction_input_size_override", [])) not in ([], [-1])
        or comparator is None
        or len(op.operands) != 4
        or len(types) != 2
    ):
        return False
    dim = ints(config.get("reduction_dim", []))
    k = ints(config.get("top_k", []))
    if len(dim) != 1 or len(k) != 1 or any(t.dims[dim[0] :][:1] != (k[0],) for t in types):
        return False
    values, iota = (lowering.use(scope, t) for t in op.operands[:2])
    if values.type is None or iota.type is None:
        return False
    compare, _ = lowering.lower_func(comparator)
    pair = [values, iota]
    sort = lowering.emit(
        scope,
        None,
        _tuple_type(pair),
        "sort",
        pair,
        f"dimensions={{{dim[0]}}}, is_stable=true, to_apply={compare}",
        stmt.start,
    )
    whole = Value(sort, None, (values.type, iota.type))
    parts = []
    for j, (source, out) in enumerate(zip(pair, types, strict=True)):
        element = lowering.emit(
            scope, None, source.shape, "get-tuple-element", [whole], f"index={j}", stmt.start
        )
        box = ", ".join(f"[0:{n}]" for n in out.dims)
        cut = lowering.emit(
            scope,
            None,
            out.hlo,
            "slice",
            [Value(element, source.type)],
            f"slice={{{box}}}",
            stmt.start,
        )
        parts.append(Value(cut, out))
    name = lowering.emit(scope, stmt.results[0], _tuple_type(parts), "tuple", parts, "", stmt.start)
    lowering.bind(scope, stmt, name, list(types))
    return True


def _paren_attribute(op: OpPieces, key: str) -> int | None:
    """``k = 5`` inside the operand parentheses (``chlo.top_k(%x, k = 5)``), or in the
    attributes (``<{k = 5 : i64}>`` of the generic form)."""
    for group in op.body:
        if isinstance(group, Group) and group.kind == "(":
            items = group.items
            for j in range(len(items) - 2):
                a, eq, v = items[j : j + 3]
                if (
                    isinstance(a, Tok)
                    and a.value == key
                    and isinstance(eq, Tok)
                    and eq.type == "EQUAL"
                    and isinstance(v, Tok)
                    and v.type == "NUMBER"
                ):
                    return int(v.value)
    if key in op.attrs:
        values = ints(op.attrs[key])
        return values[0] if values else None
    return None


def _custom_call(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    target = (op.callee or "@unknown").lstrip("@").strip('"')
    if target == "ApproxTopK" and _approx_top_k(lowering, scope, stmt, op):
        return
    if "call_target_name" in op.attrs:
        target = word(op.attrs["call_target_name"]) or target
    _simple(lowering, scope, stmt, op, "custom-call", f'custom_call_target="{target}"')


def _composite(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    """A composite reads what its decomposition reads: a call of it."""
    decomposition = op.attrs.get("decomposition", [])
    symbol = next(
        (t.value for t in decomposition if isinstance(t, Tok) and t.type == "SYMBOL"), None
    )
    if symbol is None:
        from .emit import _unknown

        _unknown(lowering, scope, stmt, op)
        return
    name, _ = lowering.lower_func(symbol)
    _simple(lowering, scope, stmt, op, "call", f"to_apply={name}")


def _get_tuple_element(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    index = ints(op.attrs.get("index", []))[0]
    _simple(lowering, scope, stmt, op, "get-tuple-element", f"index={index}")


def _optimization_barrier(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    values = [lowering.use(scope, t) for t in op.operands]
    from .values import _tuple_type

    packed = lowering.emit(scope, None, _tuple_type(values), "tuple", values, "", stmt.start)
    from .values import Value

    shape = _tuple_type(values)
    name = lowering.emit(
        scope,
        stmt.results[0],
        shape,
        "opt-barrier",
        [Value(packed, None, tuple(v.type for v in values if v.type))],
        "",
        stmt.start,
    )
    lowering.bind(scope, stmt, name, [v.type for v in values if v.type is not None])


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------


def _captures(lowering: Lowering, regions: list[Group], defined_outside: Scope) -> list[str]:
    """SSA names used inside ``regions`` but defined outside them (in order of first use)."""
    inner: set[str] = set()
    used: list[str] = []

    def walk(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, Stmt):
                if item.kind == "op":
                    inner.update(name for name, _ in item.result_groups)
                    inner.update(item.result_names)
                walk(item.pieces)
            elif isinstance(item, Group):
                if item.kind == "(":
                    for k, x in enumerate(item.items):  # block arguments `%a: type`
                        if isinstance(x, Tok) and x.type == "VALUE" and k + 1 < len(item.items):
                            nxt = item.items[k + 1]
                            if isinstance(nxt, Tok) and nxt.type == "COLON":
                                inner.add(x.value)
                walk(item.items)
            elif (
                isinstance(item, Tok)
                and item.type == "VALUE"
                and item.value not in inner
                and item.value not in used
            ):
                used.append(item.value)

    for region in regions:
        walk(region.items)
    return [u for u in used if u not in inner and defined_outside.lookup(u) is not None]


def _while(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    from .values import Value, _tuple_type

    bindings = next((g for g in op.body if isinstance(g, Group) and g.kind == "("), None)
    names: list[str] = []
    inits: list[Value] = []
    if bindings is not None:
        for binding in bindings.statements:
            names.append(binding.results[0])
            value = next(
                (t for t in binding.pieces if isinstance(t, Tok) and t.type == "VALUE"), None
            )
            if value is None:
                raise lowering.error("while: a loop value without an initial value", binding.head)
            inits.append(lowering.use(scope, value))
    regions = [p for p in stmt.pieces if isinstance(p, Group) and p.is_region]
    if len(regions) != 2:
        raise lowering.error("while: expected `cond { ... } do { ... }`", stmt.head)
    captured = _captures(lowering, regions, scope)
    captured_values = [scope.lookup(c) for c in captured]
    state = inits + [v for v in captured_values if v is not None]
    state_types = tuple(v.type for v in state)
    state_shape = _tuple_type(state)
    packed = lowering.emit(scope, None, state_shape, "tuple", state, "", stmt.start)

    def loop_region(title: str, group: Group, is_body: bool) -> str:
        from .values import Scope

        name = lowering.fresh(title)
        inner = Scope(name)
        param = lowering.fresh(f"{name}.state")
        inner.lines.append((f"  {param} = {state_shape} parameter(0)", group.start))
        whole = Value(param, None, state_types)  # type: ignore[arg-type]
        for k, ssa in enumerate(names + captured):
            element = lowering.emit(
                inner,
                f"{ssa}.in",
                state[k].shape,
                "get-tuple-element",
                [whole],
                f"index={k}",
                group.start,
            )
            inner.env[ssa] = Value(element, state[k].type)
        # the body's result: the new loop values, and the captured values riding along
        extra = [inner.env[c] for c in captured] if is_body else []
        lowering.lower_body(inner, group.statements, extra)
        lowering.finish(inner, name)
        return name

    condition = loop_region("while_cond", regions[0], False)
    body = loop_region("while_body", regions[1], True)
    loop = lowering.emit(
        scope,
        stmt.results[0],
        state_shape,
        "while",
        [Value(packed, None, state_types)],
        f"condition={condition}, body={body}",
        stmt.start,
    )
    types = list(op.result_types) or [v.type for v in inits]
    ssa, count = stmt.results
    check_result_count(lowering, stmt, len(inits))
    names = stmt.result_names if count > 1 else [f"{ssa}#0"]
    whole = Value(loop, None, state_types)
    for k in range(len(inits)):
        element = lowering.emit(
            scope,
            f"{ssa}.{k}",
            state[k].shape,
            "get-tuple-element",
            [whole],
            f"index={k}",
            stmt.start,
        )
        scope.env[names[k]] = Value(element, types[k] if k < len(types) else state[k].type)
    if count == 1 and len(inits) == 1:
        scope.env[ssa] = scope.env[f"{ssa}#0"]


def _case(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces, is_if: bool = False) -> None:
    from .values import Scope as NewScope
    from .values import Value, _tuple_type

    selector = lowering.use(scope, op.operands[0])
    branches: list[str] = []
    operands: list[Value] = [selector]
    for k, region in enumerate(op.regions):
        captured = _captures(lowering, [region], scope)
        values = [v for v in (scope.lookup(c) for c in captured) if v is not None]
        name = lowering.fresh(f"branch_{k}")
        inner = NewScope(name)
        param = lowering.fresh(f"{name}.args")
        if len(values) == 1:
            # one captured value is passed as it is (as XLA does), not in a tuple
            operands.append(values[0])
            inner.lines.append((f"  {param} = {values[0].shape} parameter(0)", region.start))
            inner.env[captured[0]] = Value(param, values[0].type)
        else:
            shape = _tuple_type(values)
            packed = lowering.emit(scope, None, shape, "tuple", values, "", stmt.start)
            operands.append(Value(packed, None, tuple(v.type for v in values)))
            inner.lines.append((f"  {param} = {shape} parameter(0)", region.start))
            whole = Value(param, None, tuple(v.type for v in values))
            for j, ssa in enumerate(captured):
                element = lowering.emit(
                    inner,
                    f"{ssa}.in",
                    values[j].shape,
                    "get-tuple-element",
                    [whole],
                    f"index={j}",
                    region.start,
                )
                inner.env[ssa] = Value(element, values[j].type)
        lowering.lower_body(inner, region.statements)
        lowering.finish(inner, name)
        branches.append(name)
    if is_if:
        attrs = f"true_computation={branches[0]}, false_computation={branches[1]}"
    else:
        attrs = "branch_computations={" + ", ".join(branches) + "}"
    from .emit import _result_shape

    shape, types = _result_shape(op, lowering, stmt)
    name = lowering.emit(scope, stmt.results[0], shape, "conditional", operands, attrs, stmt.start)
    lowering.bind(scope, stmt, name, types)


def _fusion(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    """``mhlo.fusion`` (what XLA's converter writes for an HLO fusion): its region is the
    fused computation."""
    if not op.regions:
        raise lowering.error("fusion: no fused region", stmt.head)
    kind = "kLoop"
    for item in op.attrs.get("fusion_kind", []):
        if isinstance(item, Group):
            words = [t.value for t in item.items if isinstance(t, Tok) and t.type == "BARE_ID"]
            kind = next((w for w in words if w.startswith("k")), kind)
    name, _ = lowering.region(f"fused_{stmt.results[0]}", op.regions[0])
    _simple(lowering, scope, stmt, op, "fusion", f"kind={kind}, calls={name}")


def _bitcast(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    """``mhlo.bitcast`` (XLA's converter writes an HLO bitcast so): the bytes of the operand in
    ``source_layout`` read in ``result_layout``. The operand is first given that layout (a
    ``copy``, the same values), so that the bitcast rule sees both layouts."""
    from .values import Value

    source = ints(op.attrs.get("source_layout", []))
    result = ints(op.attrs.get("result_layout", []))
    value = lowering.use(scope, op.operands[0])
    if not op.result_types or value.type is None:
        raise lowering.error("bitcast: no result type", stmt.head)
    out = op.result_types[0]
    src_shape = value.type.hlo + (_braces(source) if source else "")
    if source:
        copied = lowering.emit(scope, None, src_shape, "copy", [value], "", stmt.start)
        value = Value(copied, value.type)
    shape = out.hlo + (_braces(result) if result else "")
    name = lowering.emit(scope, stmt.results[0], shape, "bitcast", [value], "", stmt.start)
    lowering.bind(scope, stmt, name, [out])


def _replica_groups(value: list[Any]) -> str:
    groups = nested_ints(value)
    if groups and isinstance(groups[0], list):
        return "{" + ",".join(_braces(g) for g in groups) + "}"
    return "{}"


def _all_gather(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    dim = ints(op.attrs.get("all_gather_dim", []))[0]
    groups = _replica_groups(op.attrs.get("replica_groups", []))
    _simple(
        lowering, scope, stmt, op, "all-gather", f"dimensions={{{dim}}}, replica_groups={groups}"
    )


def _map(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    dims = ints(op.attrs.get("dimensions", []))
    if not op.regions:
        raise lowering.error("map: no computation region", stmt.head)
    name, _ = lowering.region(f"mapped_{stmt.results[0]}", op.regions[0])
    _simple(lowering, scope, stmt, op, "map", f"dimensions={_braces(dims)}, to_apply={name}")


def _triangular_solve(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    flags = [
        f"{name}={word(op.attrs[name]) or 'false'}"
        for name in ("left_side", "lower", "unit_diagonal")
        if name in op.attrs
    ]
    transpose = word(op.attrs.get("transpose_a", [])) or "NO_TRANSPOSE"
    _simple(
        lowering,
        scope,
        stmt,
        op,
        "triangular-solve",
        ", ".join([*flags, f"transpose_a={transpose}"]),
    )


HANDLERS: dict[str, Any] = {
    "fusion": _fusion,
    "map": _map,
    "triangular_solve": _triangular_solve,
    "all_gather": _all_gather,
    "bitcast": _bitcast,
    "convolution": _convolution,
    "gather": _gather,
    "scatter": _scatter,
    "sort": _sort,
    "custom_call": _custom_call,
    "composite": _composite,
    "get_tuple_element": _get_tuple_element,
    "tuple": lambda lw, sc, st, op: _simple(lw, sc, st, op, "tuple", ""),
    "optimization_barrier": _optimization_barrier,
    "while": _while,
    "case": _case,
    "if": lambda lw, sc, st, op: _case(lw, sc, st, op, is_if=True),
}
