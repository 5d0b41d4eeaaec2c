"""The provenance interpreter: evaluates an instruction (recursing into fusions, calls,
conditionals and whiles) on concrete data and records which operand elements every output
element reads. Never uses indexing maps or the op rules."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import HloidxError, UnsupportedOpError
from .semantics import DONE_ELEMENT, SEMANTICS
from .tensors import (
    _ELEMENTWISE,
    DEFAULT_LIMIT,
    MAX_WHILE_ITERATIONS,
    Reads,
    Tag,
    Tensor,
    Value,
    _bitcast,
    _check_size,
    _constant_cone,
    _default_data,
    _dtype,
    _elementwise_values,
    _empty_provenance,
    _leaf_tensor,
    _literal_values,
    _post_order,
    _regroup,
    _union,
    _union2,
    _union_all,
)

if TYPE_CHECKING:
    from ..hlo.ir import Computation, HloModule, Instruction


class _Interpreter:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.inner: dict[Instruction, Value] = {}

    # -- computations --------------------------------------------------------
    def run(self, comp: Computation, args: Sequence[Value]) -> Value:
        root = comp.root
        if root is None:
            raise UnsupportedOpError(f"the oracle cannot run the empty computation {comp.name}")
        env: dict[int, Value] = {}
        for instr in _post_order(root):
            if instr.opcode == "parameter":
                number = instr.parameter_number or 0
                if number >= len(args):
                    raise UnsupportedOpError(
                        f"{comp.name} reads parameter {number} but was given {len(args)}",
                        instr.span,
                    )
                value = args[number]
            else:
                value = self.evaluate(instr, [env[id(o)] for o in instr.operands])
            env[id(instr)] = value
            self.inner[instr] = value
        return env[id(root)]

    def _body(self, instr: Instruction, *keys: str) -> Computation:
        called = instr.called_computations
        for key in keys:
            if called.get(key):
                return called[key][0]
        raise UnsupportedOpError(
            f"the oracle found no called computation for {instr.name}", instr.span
        )

    # -- one instruction -------------------------------------------------------
    def evaluate(self, instr: Instruction, ops: list[Value]) -> Value:
        op = instr.opcode
        if instr.shape.is_array:
            _check_size(instr, instr.shape.dims, self.limit)
        if op == "tuple":
            return tuple(ops)
        if op == "get-tuple-element":
            return ops[0][instr.tuple_index or 0]  # type: ignore[index]
        if op in ("fusion", "call", "async-start"):
            return self.run(self._body(instr, "calls", "to_apply"), ops)
        if op == "conditional":
            return self._conditional(instr, ops)
        if op == "while":
            return self._while(instr, ops)
        if op in ("opt-barrier", "domain", "add-dependency"):
            return ops[0]  # data passes through unchanged, tuples included
        if op in DONE_ELEMENT and isinstance(ops[0], tuple):
            return ops[0][DONE_ELEMENT[op]]
        arrays = [o for o in ops if isinstance(o, Tensor)]
        if len(arrays) != len(ops):
            raise UnsupportedOpError(f"the oracle does not interpret {op} of tuples", instr.span)
        semantics = SEMANTICS.get(op)
        if semantics is not None:
            return semantics(self, instr, arrays)
        method = getattr(self, "_" + op.replace("-", "_"), None)
        if method is not None:
            return method(instr, arrays)
        if op in _ELEMENTWISE:
            return self._elementwise(instr, arrays)
        raise UnsupportedOpError(f"the oracle does not interpret {op}", instr.span)

    def _elementwise(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        dims = instr.shape.dims
        # clamp and select admit scalar operands that broadcast
        values = [np.broadcast_to(o.values, dims) for o in ops]
        prov = _union(*[np.broadcast_to(o.provenance, dims) for o in ops])
        known = all(o.known for o in ops) and instr.opcode not in ("map", "bitcast-convert")
        computed = _elementwise_values(instr, values) if known else None
        if computed is None:
            return Tensor(np.zeros(dims, dtype=_dtype(instr.shape)), prov, known=False)
        return Tensor(np.asarray(computed).reshape(dims), prov)

    # -- leaves ---------------------------------------------------------------
    def _constant(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        values = _literal_values(instr)
        dims = instr.shape.dims
        if values is None:
            return Tensor(
                np.zeros(dims, dtype=_dtype(instr.shape)), _empty_provenance(dims), known=False
            )
        return Tensor(values, _empty_provenance(dims))

    def _iota(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        dims = instr.shape.dims
        axis = instr.iota_dimension or 0
        values = np.indices(dims, dtype=np.int64)[axis] if dims else np.zeros((), np.int64)
        return Tensor(values.astype(_dtype(instr.shape)), _empty_provenance(dims))

    # -- data movement --------------------------------------------------------
    def _move(self, ops: Tensor, fn: Any) -> Tensor:
        return Tensor(
            np.asarray(fn(ops.values)).copy(),
            np.asarray(fn(ops.provenance), dtype=object).copy(),
            ops.known,
        )

    def _broadcast(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        dims = instr.shape.dims
        mapping = list(instr.dimensions or ())
        order = sorted(range(len(mapping)), key=lambda i: mapping[i])
        expanded = [1] * len(dims)
        for i in order:
            expanded[mapping[i]] = ops[0].shape[i]

        def fn(a: np.ndarray) -> np.ndarray:
            return np.broadcast_to(np.transpose(a, order).reshape(expanded), dims).copy()

        return self._move(ops[0], fn)

    def _reshape(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        return self._move(ops[0], lambda a: a.reshape(instr.shape.dims))

    def _bitcast(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        source = instr.operands[0].shape
        return self._move(ops[0], lambda a: _bitcast(a, source, instr.shape))

    def _transpose(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        return self._move(ops[0], lambda a: np.transpose(a, instr.dimensions))

    def _copy(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        return self._move(ops[0], lambda a: a)

    def _reverse(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        return self._move(ops[0], lambda a: np.flip(a, instr.dimensions or ()))

    def _slice(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        window = tuple(slice(s.start, s.limit, s.stride) for s in instr.slice or ())
        return self._move(ops[0], lambda a: a[window])

    def _concatenate(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        axis = (instr.dimensions or (0,))[0]
        return Tensor(
            np.concatenate([o.values for o in ops], axis),
            np.concatenate([o.provenance for o in ops], axis),
            all(o.known for o in ops),
        )

    def _pad(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        operand, pad_value = ops
        dims = instr.shape.dims
        values = np.full(dims, pad_value.values[()], dtype=operand.values.dtype)
        prov = np.empty(dims, dtype=object)
        prov.fill(pad_value.provenance[()])
        source: list[np.ndarray] = []
        target: list[np.ndarray] = []
        for d, p in enumerate(instr.padding or ()):
            positions = p.low + np.arange(operand.shape[d]) * (p.interior + 1)
            inside = (positions >= 0) & (positions < dims[d])
            source.append(np.nonzero(inside)[0])
            target.append(positions[inside])
        values[np.ix_(*target)] = operand.values[np.ix_(*source)]
        prov[np.ix_(*target)] = operand.provenance[np.ix_(*source)]
        return Tensor(values, prov, operand.known and pad_value.known)

    # -- data-dependent movement ------------------------------------------------
    @staticmethod
    def _index_values(instr: Instruction, tensor: Tensor) -> np.ndarray:
        if not tensor.known:
            raise UnsupportedOpError(
                f"the oracle cannot evaluate {instr.name}: its indices come from values it does "
                "not compute",
                instr.span,
            )
        return tensor.values.astype(np.int64)

    def _starts(
        self, instr: Instruction, scalars: list[Tensor], limits: Sequence[int]
    ) -> list[int]:
        if len(scalars) == 1 and scalars[0].values.ndim == 1:  # one rank-1 start-index operand
            values = [int(v) for v in self._index_values(instr, scalars[0]).reshape(-1)]
        else:
            values = [int(self._index_values(instr, s).reshape(-1)[0]) for s in scalars]
        if len(values) != len(limits):
            raise UnsupportedOpError(f"{instr.name}: one start index per dimension", instr.span)
        return [min(max(v, 0), hi) for v, hi in zip(values, limits, strict=True)]

    def _dynamic_slice(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        operand, scalars = ops[0], ops[1:]
        sizes = instr.dynamic_slice_sizes or instr.shape.dims
        starts = self._starts(
            instr, scalars, [n - s for n, s in zip(operand.shape, sizes, strict=True)]
        )
        window = tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True))
        index_reads = _union_all(p for s in scalars for p in s.provenance.reshape(-1))
        prov = _union2(operand.provenance[window], np.full((), index_reads, dtype=object))
        return Tensor(
            operand.values[window].copy(),
            np.asarray(prov, dtype=object).reshape(instr.shape.dims),
            operand.known,
        )

    def _dynamic_update_slice(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        operand, update, scalars = ops[0], ops[1], ops[2:]
        starts = self._starts(
            instr, scalars, [n - u for n, u in zip(operand.shape, update.shape, strict=True)]
        )
        window = tuple(slice(s, s + n) for s, n in zip(starts, update.shape, strict=True))
        values = operand.values.copy()
        values[window] = update.values
        prov = operand.provenance.copy()
        prov[window] = update.provenance
        index_reads = np.full(
            (), _union_all(p for s in scalars for p in s.provenance.reshape(-1)), dtype=object
        )
        prov = np.asarray(_union2(prov, index_reads), dtype=object).reshape(operand.shape)
        return Tensor(values, prov, operand.known and update.known)

    # -- combining ops ------------------------------------------------------------
    def _reduce(self, instr: Instruction, ops: list[Tensor]) -> Value:
        n = len(ops) // 2
        inputs, inits = ops[:n], ops[n:]
        axes = tuple(instr.dimensions or ())
        kept = [d for d in range(inputs[0].values.ndim) if d not in axes]
        out_dims = tuple(inputs[0].shape[d] for d in kept)
        init_reads = _union_all(i.provenance[()] for i in inits)
        moved = [
            np.transpose(x.provenance, kept + list(axes)).reshape(*out_dims, -1) for x in inputs
        ]
        prov = np.empty(out_dims, dtype=object)
        for out in np.ndindex(*out_dims):
            prov[out] = _union_all(itertools.chain((init_reads,), *(m[out] for m in moved)))
        outputs = []
        reducer = self._simple_reducer(instr)
        for k in range(n):
            shape = instr.shape.tuple_shapes[k] if instr.shape.is_tuple else instr.shape
            if reducer is not None and n == 1 and inputs[0].known and inits[0].known:
                values = reducer.reduce(
                    np.concatenate(
                        [
                            np.transpose(inputs[0].values, kept + list(axes)).reshape(
                                *out_dims, -1
                            ),
                            np.broadcast_to(inits[0].values, (*out_dims, 1)),
                        ],
                        axis=-1,
                    ),
                    axis=-1,
                )
                outputs.append(Tensor(np.asarray(values).astype(_dtype(shape)), prov))
            else:
                outputs.append(
                    Tensor(np.zeros(out_dims, dtype=_dtype(shape)), prov.copy(), known=False)
                )
        return tuple(outputs) if instr.shape.is_tuple else outputs[0]

    def _simple_reducer(self, instr: Instruction) -> Any:
        comps = instr.called_computations.get("to_apply")
        root = comps[0].root if comps else None
        if root is None or root.opcode not in ("add", "maximum", "minimum", "multiply"):
            return None
        if any(o.opcode != "parameter" for o in root.operands):
            return None
        return {
            "add": np.add,
            "maximum": np.maximum,
            "minimum": np.minimum,
            "multiply": np.multiply,
        }[root.opcode]

    def _reduce_window(self, instr: Instruction, ops: list[Tensor]) -> Value:
        n = len(ops) // 2
        inputs, inits = ops[:n], ops[n:]
        window = instr.window or ()
        in_dims = inputs[0].shape
        out_dims = instr.shape.tuple_shapes[0].dims if instr.shape.is_tuple else instr.shape.dims
        init_reads = _union_all(i.provenance[()] for i in inits)
        # per dimension: for each output position, the input positions its window covers
        covered: list[list[list[int]]] = []
        for d, w in enumerate(window):
            rows = []
            for o in range(out_dims[d]):
                positions = []
                for k in range(w.size):
                    pos = o * w.stride + k * w.window_dilation - w.pad_low
                    if (
                        pos >= 0
                        and pos % w.base_dilation == 0
                        and pos // w.base_dilation < in_dims[d]
                    ):
                        positions.append(pos // w.base_dilation)
                rows.append(positions)
            covered.append(rows)
        prov = np.empty(out_dims, dtype=object)
        for out in np.ndindex(*out_dims):
            reads = set(init_reads)
            for source in itertools.product(*(covered[d][o] for d, o in enumerate(out))):
                for x in inputs:
                    reads |= x.provenance[source]
            prov[out] = frozenset(reads)
        outputs = [
            Tensor(np.zeros(out_dims, dtype=_dtype(s)), prov.copy(), known=False)
            for s in (instr.shape.tuple_shapes if instr.shape.is_tuple else (instr.shape,))
        ]
        return tuple(outputs) if instr.shape.is_tuple else outputs[0]

    def _dot(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        lhs, rhs = ops[0], ops[1]
        dn = instr.dot_dimension_numbers
        lhs_free = [d for d in range(lhs.values.ndim) if d not in dn.lhs_batch + dn.lhs_contracting]
        rhs_free = [d for d in range(rhs.values.ndim) if d not in dn.rhs_batch + dn.rhs_contracting]
        contracting = [range(lhs.shape[d]) for d in dn.lhs_contracting]
        out_dims = instr.shape.dims
        prov = np.empty(out_dims, dtype=object)
        nb, nl = len(dn.lhs_batch), len(lhs_free)
        for out in np.ndindex(*out_dims):
            li = [0] * lhs.values.ndim
            ri = [0] * rhs.values.ndim
            for k, (a, b) in enumerate(zip(dn.lhs_batch, dn.rhs_batch, strict=True)):
                li[a] = ri[b] = out[k]
            for k, a in enumerate(lhs_free):
                li[a] = out[nb + k]
            for k, b in enumerate(rhs_free):
                ri[b] = out[nb + nl + k]
            reads: set[Tag] = set()
            for c in itertools.product(*contracting):
                for k, (a, b) in enumerate(
                    zip(dn.lhs_contracting, dn.rhs_contracting, strict=True)
                ):
                    li[a] = ri[b] = c[k]
                reads |= lhs.provenance[tuple(li)] | rhs.provenance[tuple(ri)]
            for extra in ops[2:]:  # scaled dot: scales read like their operands (over-approximated)
                reads |= _union_all(extra.provenance.reshape(-1))
            prov[out] = frozenset(reads)
        return Tensor(np.zeros(out_dims, dtype=_dtype(instr.shape)), prov, known=False)

    def _sort(self, instr: Instruction, ops: list[Tensor]) -> Value:
        # Output j is operand j permuted along the axis; the permutation depends on the
        # operands the comparator looks at (its parameters 2i and 2i + 1 are operand i).
        axis = (instr.dimensions or (0,))[0]
        comparator = self._body(instr, "to_apply")
        compared = {p.parameter_number // 2 for p in _reached_parameters(comparator)}

        def along(prov: np.ndarray) -> np.ndarray:
            if not prov.size:
                return prov
            return np.apply_along_axis(
                lambda row: np.full(len(row), _union_all(row), dtype=object), axis, prov
            )

        outputs = []
        for j, o in enumerate(ops):
            used = [ops[i].provenance for i in sorted(compared | {j})]
            outputs.append(
                Tensor(np.zeros(o.shape, dtype=o.values.dtype), along(_union(*used)), known=False)
            )
        return tuple(outputs) if instr.shape.is_tuple else outputs[0]

    # -- control flow ----------------------------------------------------------------
    def _conditional(self, instr: Instruction, ops: list[Value]) -> Value:
        selector = ops[0]
        if not isinstance(selector, Tensor) or not selector.known:
            raise UnsupportedOpError(
                f"the oracle cannot choose a branch of {instr.name}", instr.span
            )
        called = instr.called_computations
        branches = called.get("branch_computations") or (
            called.get("true_computation", []) + called.get("false_computation", [])
        )
        value = int(selector.values.reshape(-1)[0])
        if "branch_computations" in called:
            k = value if 0 <= value < len(branches) else len(branches) - 1
        else:
            k = 0 if value else 1
        result = self.run(branches[k], [ops[k + 1]])
        return _add_reads(result, selector.provenance[()])

    def _while(self, instr: Instruction, ops: list[Value]) -> Value:
        condition = self._body(instr, "condition")
        body = self._body(instr, "body")
        state = ops[0]
        for _ in range(MAX_WHILE_ITERATIONS):
            predicate = self.run(condition, [state])
            if not isinstance(predicate, Tensor) or not predicate.known:
                raise UnsupportedOpError(
                    f"the oracle cannot decide the condition of {instr.name}", instr.span
                )
            if not int(predicate.values.reshape(-1)[0]):
                return state
            state = self.run(body, [state])
        raise UnsupportedOpError(
            f"the oracle stopped {instr.name} after {MAX_WHILE_ITERATIONS} iterations", instr.span
        )


def _add_reads(value: Value, reads: frozenset[Tag]) -> Value:
    if isinstance(value, tuple):
        return tuple(_add_reads(v, reads) for v in value)
    extra = np.full((), reads, dtype=object)
    prov = np.asarray(_union2(value.provenance, extra), dtype=object).reshape(value.shape)
    return Tensor(value.values, prov, value.known)


def _operand_data(
    instr: Instruction, given: Mapping[int, Any] | None, seed: int, limit: int
) -> tuple[Value, ...]:
    rng = np.random.default_rng(seed)
    shapes = [s for o in instr.operands for s in o.shape.leaves()] + instr.shape.leaves()
    index_high = max((max(s.dims) for s in shapes if s.is_array and s.dims), default=1)
    out: list[Value] = []
    for j, operand in enumerate(instr.operands):
        leaves = operand.shape.leaves()
        for leaf in leaves:
            _check_size(operand, leaf.dims, limit)
        provided = given.get(j) if given else None
        if provided is None and operand.shape.is_array and _constant_cone(operand):
            try:
                real = _run_instruction(_Interpreter(limit), operand)
            except HloidxError:
                real = None
            if isinstance(real, Tensor) and real.known:
                provided = real.values
        arrays = []
        for k, leaf in enumerate(leaves):
            data = provided[k] if isinstance(provided, (list, tuple)) else provided
            if data is None:
                data = _default_data(operand, leaf, rng, index_high, limit)
            arrays.append(
                _leaf_tensor(np.asarray(data, dtype=_dtype(leaf)).reshape(leaf.dims), j, k)
            )
        out.append(_regroup(operand.shape, iter(arrays)) if operand.shape.is_tuple else arrays[0])
    return tuple(out)


def _run_instruction(self: _Interpreter, instr: Instruction) -> Value:
    """Evaluate a parameter-free instruction with its real operands (constants, iotas, ...)."""
    env: dict[int, Value] = {}
    for node in _post_order(instr):
        env[id(node)] = self.evaluate(node, [env[id(o)] for o in node.operands])
    return env[id(instr)]


def _flatten(value: Value) -> list[Tensor]:
    if isinstance(value, tuple):
        return [t for v in value for t in _flatten(v)]
    return [value]


def _resolve(where: Any, instruction: Instruction | str | None) -> Instruction:
    from ..hlo.ir import Computation, HloModule, Instruction

    if isinstance(where, Instruction):
        return where
    if isinstance(instruction, Instruction):
        return instruction
    if isinstance(where, HloModule):
        if instruction is None:
            if where.entry is None or where.entry.root is None:
                raise HloidxError("the module has no entry root to interpret")
            return where.entry.root
        for instr in where.instructions():
            if instr.name == instruction:
                return instr
    if isinstance(where, Computation):
        if instruction is None and where.root is not None:
            return where.root
        if instruction in where.by_name:
            return where.by_name[instruction]
    raise HloidxError(f"no instruction named {instruction}")


def reads(
    where: HloModule | Computation | Instruction,
    instruction: Instruction | str | None = None,
    *,
    operand_values: Mapping[int, Any] | None = None,
    seed: int = 0,
    limit: int = DEFAULT_LIMIT,
) -> Reads:
    """Interpret ``instruction`` (by object or name; default: the entry root) on concrete data.

    Its operands become leaves tagged ``(operand_number, tuple_leaf, index)``. Operand data:
    ``operand_values[j]`` when given (an array, or a list of arrays for a tuple operand);
    else the operand's real value when it depends on no parameter (constants, iotas); else
    seeded random integers in ``[-1, largest dimension]`` (exercising index clamping),
    index-coded floats, or random predicates.
    """
    instr = _resolve(where, instruction)
    data = _operand_data(instr, operand_values, seed, limit)
    interpreter = _Interpreter(limit)
    result = interpreter.evaluate(instr, list(data))
    return Reads(instr, tuple(_flatten(result)), data, interpreter.inner)


def oracle_relation(
    instr: Instruction,
    operand_index: int,
    output_id: int = 0,
    runtime_values: Mapping[int, Any] | None = None,
    *,
    operand_leaf: int | None = None,
    seed: int = 0,
    limit: int = DEFAULT_LIMIT,
    evaluation: Reads | None = None,
) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``{(output index, operand index)}``: what output ``output_id`` reads of one operand.

    ``runtime_values`` is the operand data (see :func:`reads`); pass ``evaluation`` to reuse
    an interpretation. For a tuple-shaped operand, ``operand_leaf`` selects one leaf.
    """
    if evaluation is None:
        evaluation = reads(instr, operand_values=runtime_values, seed=seed, limit=limit)
    out: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    prov = evaluation.outputs[output_id].provenance
    for index in np.ndindex(*prov.shape):
        for operand, leaf, source in prov[index]:
            if operand == operand_index and (operand_leaf is None or leaf == operand_leaf):
                out.add((tuple(int(i) for i in index), source))
    return out


def _reached_parameters(comp: Computation) -> list[Instruction]:
    """The parameters the root of ``comp`` depends on."""
    from ..hlo.fusion import parameters_reached

    return parameters_reached(comp.root) if comp.root is not None else []
