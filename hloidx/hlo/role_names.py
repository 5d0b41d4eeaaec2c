"""``--names roles``: an analysis whose printed maps name their variables by what they index.

The analysis itself is never touched: :func:`name_instruction` returns a copy whose maps are
the same relations with named variables (:func:`hloidx.maps.var_names.named`), and whose
operands carry the names and roles (``OperandAnalysis.map_names``) for the JSON.

How a map gets its names: dimension variables index the instruction's output (output-to-input)
or the operand (input-to-output), so they take those dims' names (:mod:`.roles`) directly.
Range and runtime variables are named by the rules that introduce them and carried through
composition: the op's maps (or, for a fusion, the walk through its body) are built once more
with named symbols and simplified as the analysis simplifies; a named result is used only when
renamed back by position it equals the analysis' own map, so a name is never guessed. A map
with no such twin keeps plain symbols (its dimensions are still named).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from ..errors import HloidxError
from ..maps.indexing_map import IndexingMap
from ..maps.var_names import VarNames, named, plain
from .analysis import InstructionAnalysis, ModuleAnalysis, drop_unused_runtime_vars, simplify_map
from .ir import Computation, Instruction
from .roles import (
    Named,
    attention_operand_names,
    attention_output_names,
    convolution_output_names,
    dot_output_names,
    gather_output_names,
    i2o_range_names,
    names_through,
    range_names,
    runtime_names,
    with_symbol_names,
)
from .sparse_rows import SparseRow


def _table(instr: Instruction) -> Any:
    """The output-to-input table the analysis uses for ``instr``."""
    from . import fusion

    return fusion.output_to_input(instr)


def _cell_of(table: Any, out_id: int, operand_id: int) -> Any:
    if not table:
        return None
    row = table[out_id] if out_id < len(table) else table[0]
    return row[operand_id] if operand_id < len(row) else None


def _outputs(instr: Instruction) -> int:
    shape = instr.shape
    return len(shape.tuple_shapes or ()) if shape.is_tuple else 1


class Namer:
    """Output dim names of the instructions of one computation (memoised); a fused
    computation's parameters take the names of the fusion's operands (``bound``)."""

    def __init__(self, bound: dict[int, tuple[Named, ...]] | None = None) -> None:
        self.bound = bound or {}
        self.known: dict[tuple[int, int], tuple[Named, ...]] = {}
        self.keep: list[Any] = []  # the ids above stay theirs
        self._candidates: dict[int, tuple[Instruction, Candidates, dict[str, str]]] = {}
        #: an operand analysis shared by structurally equal instructions -> its matched twins
        self.twins: dict[int, tuple[Any, dict[IndexingMap, tuple[int, IndexingMap]], dict]] = {}

    def candidates(self, instr: Instruction) -> tuple[Candidates, dict[str, str]]:
        """Every operand's named candidate maps of ``instr`` and the roles of their names (the
        instruction's table named, or its body walked, once)."""
        hit = self._candidates.get(id(instr))
        if hit is not None and hit[0] is instr:
            return hit[1], hit[2]
        if len(self._candidates) > 64:  # analyses come in order: keep only the latest few
            self._candidates.clear()
        tables = _NamedTables(fused=instr.opcode in ("fusion", "call"))
        found = _candidates(instr, tables)
        self._candidates[id(instr)] = (instr, found, tables.roles)
        return found, tables.roles

    def output_names(self, instr: Instruction, out_id: int = 0) -> tuple[Named, ...]:
        key = (id(instr), out_id)
        found = self.known.get(key)
        if found is not None:
            return found
        # operands first, without recursion (chains of thousands of ops)
        stack = [instr]
        on_stack = {id(instr)}
        while stack:
            top = stack[-1]
            pending = [
                o for o in top.operands if (id(o), 0) not in self.known and id(o) not in on_stack
            ]
            if pending:
                stack.extend(pending)
                on_stack.update(id(o) for o in pending)
                continue
            stack.pop()
            on_stack.discard(id(top))
            for k in range(max(1, _outputs(top))):
                if (id(top), k) not in self.known:
                    self.known[(id(top), k)] = self._compute(top, k)
                    self.keep.append(top)
        return self.known.get(key) or ()

    def _compute(self, instr: Instruction, out_id: int) -> tuple[Named, ...]:
        shape = instr.shape
        if shape.is_tuple:
            shapes = shape.tuple_shapes or ()
            if out_id >= len(shapes) or shapes[out_id].is_tuple:
                return ()
            rank = len(shapes[out_id].dims)
        else:
            rank = len(shape.dims)
        blank: tuple[Named, ...] = (("", ""),) * rank
        try:
            return self._semantic(instr, out_id, rank) or blank
        except HloidxError:
            return blank
        except Exception:  # names are a reading aid: an op they cannot read stays plain
            return blank

    def _semantic(self, instr: Instruction, out_id: int, rank: int) -> tuple[Named, ...] | None:
        op = instr.opcode
        if op == "parameter":
            return self.bound.get(id(instr))
        if op == "dot":
            return dot_output_names(instr)
        if op == "convolution":
            return convolution_output_names(instr)
        if op == "custom-call":
            found = attention_output_names(instr, out_id)
            if found is not None and len(found) == rank:
                return found
        if op in ("fusion", "call"):
            from .fusion import body_of, computation_outputs

            body = body_of(instr)
            inner = Namer(_parameter_names(body, instr, self))
            outs = computation_outputs(body)
            return inner.output_names(outs[out_id]) if out_id < len(outs) else None
        if not instr.operands:
            return None
        if op == "tuple":
            return (
                self.output_names(instr.operands[out_id]) if out_id < len(instr.operands) else None
            )
        if op == "get-tuple-element":
            return self.output_names(instr.operands[0], instr.tuple_index or 0)
        table = _table(instr)
        if not table:
            return None
        row = table[out_id] if out_id < len(table) else table[0]
        cells = row.stored() if isinstance(row, SparseRow) else enumerate(row)
        out = [("", "")] * rank
        for j, cell in cells:
            if j >= len(instr.operands) or not cell.maps:
                continue
            operand = instr.operands[j]
            if not operand.shape.is_array:
                continue
            m = cell.maps[0]
            if m.is_undefined or m.is_known_empty or m.num_dims != rank:
                continue
            through = names_through(m, self.output_names(operand))
            out = [o if o[0] else t for o, t in zip(out, through, strict=True)]
        if op == "gather":
            return gather_output_names(instr, out)
        return tuple(out)


def _parameter_names(body: Computation, caller: Instruction, namer: Namer) -> dict[int, Any]:
    out = {}
    for p in body.parameters:
        k = p.parameter_number
        if k is not None and 0 <= k < len(caller.operands) and caller.operands[k].shape.is_array:
            out[id(p)] = namer.output_names(caller.operands[k])
    return out


# ---------------------------------------------------------------------------
# Named candidates of an operand's maps, matched with the analysis' maps
# ---------------------------------------------------------------------------


class _NamedTables:
    """Op tables with named range and runtime variables, for one walk: a name is given to one
    op's variables only (a second dot's contracting variable is ``k_2``), so that each name
    has one role (``roles``: name -> role, the op named in it)."""

    def __init__(self, fused: bool) -> None:
        self.fused = fused
        self.roles: dict[str, str] = {}
        self.owner: dict[str, int] = {}
        self.tables: dict[int, tuple[Instruction, Any]] = {}

    def _own(self, instr: Instruction, names: list[Named]) -> list[Named]:
        out = []
        for name, role in names:
            if not name:
                out.append((name, role))
                continue
            base, k = name, 2
            while self.owner.get(name, id(instr)) != id(instr):
                name = f"{base}_{k}"
                k += 1
            self.owner[name] = id(instr)
            role = f"{role} ({instr.name})" if self.fused else role
            self.roles.setdefault(name, role)
            out.append((name, role))
        return out

    def __call__(self, instr: Instruction) -> Any:
        hit = self.tables.get(id(instr))
        if hit is not None:
            return hit[1]
        table = self._name(instr)
        self.tables[id(instr)] = (instr, table)
        return table

    def _name(self, instr: Instruction) -> Any:
        from .sparse_rows import SparseRow

        table = _table(instr)
        if instr.opcode in ("fusion", "call", "conditional", "while"):
            return table

        def name_cell(j: int, cell: Any, out_id: int) -> Any:
            if not any(m.range_vars or m.rt_vars for m in cell.maps):
                return cell  # nothing to name (most cells: elementwise, tuples, shapes)
            rts = self._own(instr, runtime_names(cell.runtime_vars))
            maps = tuple(
                with_symbol_names(m, self._own(instr, range_names(instr, j, m, out_id)), rts)
                for m in cell.maps
            )
            return replace(cell, maps=maps)

        named_rows: list[Any] = []
        for out_id, row in enumerate(table):
            if isinstance(row, SparseRow):
                cells = {j: name_cell(j, cell, out_id) for j, cell in row.stored()}
                named_rows.append(SparseRow(len(row), cells, name_cell(-1, row.default, out_id)))
            else:
                named_rows.append([name_cell(j, cell, out_id) for j, cell in enumerate(row)])
        return named_rows


Candidates = dict[int, list[tuple[int, IndexingMap, Any]]]


def _candidates(instr: Instruction, tables: _NamedTables) -> Candidates:
    """operand -> (output, named map before simplification, runtime descriptions): the
    rule's maps with named symbols, or the fusion body walked once per output with them."""
    from .sparse_rows import SparseRow

    out: Candidates = {}
    if instr.opcode in ("fusion", "call"):
        from .fusion import body_of, computation_outputs, grouped_output_to_input

        body = body_of(instr)
        numbers = {id(p): p.parameter_number for p in body.parameters}
        for out_id, start in enumerate(computation_outputs(body)):
            for reached_instr, reached in grouped_output_to_input(start, rules=tables).items():
                k = numbers.get(id(reached_instr))
                if k is not None:
                    found = out.setdefault(k, [])
                    found.extend((out_id, t.map, t.runtime_vars) for t in reached.maps)
        return out
    if instr.opcode in ("conditional", "while"):
        return out
    for out_id, row in enumerate(tables(instr)):
        stored = row.stored() if isinstance(row, SparseRow) else enumerate(row)
        for j, cell in stored:
            out.setdefault(j, []).extend((out_id, m, cell.runtime_vars) for m in cell.maps)
        if isinstance(row, SparseRow):
            default = row.default
            if any(not (m.is_known_empty or m.is_undefined) for m in default.maps):
                taken = {j for j, _ in row.stored()}
                for j in range(len(row)):
                    if j not in taken:
                        out.setdefault(j, []).extend(
                            (out_id, m, default.runtime_vars) for m in default.maps
                        )
    return out


def o2i_names(instr: Instruction, operand_id: int, maps: list[IndexingMap], namer: Namer) -> list:
    """A VarNames for each of the analysis' output-to-input maps of one operand."""
    found, roles = _twins(instr, operand_id, maps, namer)
    return _names_of(instr, maps, namer, found, roles)


def _twins(instr: Instruction, operand_id: int, maps: list[IndexingMap], namer: Namer) -> Any:
    """The named twin of each map (by the map renamed back), memoised for an operand analysis
    that structurally equal instructions share (unless runtime variables name producers)."""
    key = id(maps)
    hit = namer.twins.get(key)
    if hit is not None and hit[0] is maps:
        return hit[1], hit[2]
    found: dict[IndexingMap, tuple[int, IndexingMap]] = {}
    roles: dict[str, str] = {}
    try:
        candidates, roles = namer.candidates(instr)
        for out_id, candidate, rts in candidates.get(operand_id, ()):
            if candidate.is_undefined or candidate.is_known_empty:
                continue
            simplified, _ = drop_unused_runtime_vars(simplify_map(candidate), tuple(rts))
            found.setdefault(plain(simplified, keep_gpu_names=True), (out_id, simplified))
    except HloidxError:
        found = {}
    except Exception:  # a reading aid never stops a report: plain symbols then
        found = {}
    if not any(m.rt_vars for m in maps):
        namer.twins[key] = (maps, found, roles)
    return found, roles


def _names_of(instr: Instruction, maps: list, namer: Namer, found: dict, roles: dict) -> list:
    out = []
    for m in maps:
        hit = found.get(m)
        out_id = hit[0] if hit is not None else 0
        dims = namer.output_names(instr, out_id)
        if len(dims) != m.num_dims:
            dims = ()
        if hit is None:
            out.append(_var_names(dims, (), ()))
            continue
        twin = hit[1]
        ranges = tuple((v.name, roles.get(v.name, "")) for v in twin.range_vars)
        rtn = tuple((v.name, roles.get(v.name, "")) for v in twin.rt_vars)
        out.append(_var_names(dims, ranges, rtn))
    return out


def i2o_names(
    instr: Instruction,
    operand_id: int,
    maps: list[IndexingMap],
    dims: tuple[Named, ...],
    namer: Namer | None = None,
) -> list[VarNames]:
    """A VarNames for each input-to-output map of one operand: its dims are the operand's; a
    dot's range variables, the other side's free dims, are matched as output-to-input ones."""
    found: dict[IndexingMap, IndexingMap] = {}
    roles: dict[str, str] = {}
    if any(m.range_vars or m.rt_vars for m in maps) and instr.opcode not in ("fusion", "call"):
        try:
            if instr.opcode == "dot":
                found = _dot_i2o_twins(instr, operand_id)
                role = "rhs free" if operand_id == 0 else "lhs free"
                roles = {v.name: role for t in found.values() for v in t.range_vars if v.name}
            else:
                found, roles = _i2o_twins(instr, operand_id, namer or Namer())
        except Exception:  # a reading aid: plain symbols then
            found = {}
    out = []
    for m in maps:
        named_dims = dims if len(dims) == m.num_dims else ()
        twin = found.get(m)
        ranges: tuple[Named, ...] = ()
        rts: tuple[Named, ...] = ()
        if twin is not None:
            ranges = tuple((v.name, roles.get(v.name, "")) for v in twin.range_vars)
            rts = tuple((v.name, roles.get(v.name, "")) for v in twin.rt_vars)
        out.append(_var_names(named_dims, ranges, rts))
    return out


def _i2o_twins(instr: Instruction, operand_id: int, namer: Namer) -> tuple[dict, dict[str, str]]:
    """The rule's input-to-output maps of one operand with named range variables, by the map
    renamed back (matched as the output-to-input ones are). A range variable that is a whole
    output index on its own (every output element along that dim) takes that dim's name."""
    from . import fusion

    table = fusion.input_to_output(instr)
    found: dict[IndexingMap, IndexingMap] = {}
    roles: dict[str, str] = {}
    row = table[operand_id] if operand_id < len(table) else ()
    cells = row.stored() if isinstance(row, SparseRow) else enumerate(row)
    for out_id, cell in cells:
        rts = runtime_names(cell.runtime_vars)
        for m in cell.maps:
            if m.is_undefined or m.is_known_empty or not (m.range_vars or m.rt_vars):
                continue
            names = i2o_range_names(instr, operand_id, m, out_id)
            names = _whole_dims(instr, m, names, namer, out_id)
            if not any(n for n, _ in names + rts):
                continue
            roles.update((n, r) for n, r in names + rts if n)
            simplified, _ = drop_unused_runtime_vars(
                simplify_map(with_symbol_names(m, names, rts)), tuple(cell.runtime_vars)
            )
            found.setdefault(plain(simplified), simplified)
    return found, roles


def _whole_dims(
    instr: Instruction, m: IndexingMap, names: list[Named], namer: Namer, out_id: int
) -> list[Named]:
    from ..maps.expr import Var, VarKind

    out = list(names) + [("", "")] * (m.num_range_vars - len(names))
    out_dims: tuple[Named, ...] | None = None
    for p, r in enumerate(m.results):
        if isinstance(r, Var) and r.kind == VarKind.RANGE and not out[r.index][0]:
            if out_dims is None:
                out_dims = namer.output_names(instr, out_id)
            if p < len(out_dims) and out_dims[p][0]:
                name, role = out_dims[p]
                out[r.index] = (name, f"every {role or name}")
    return out


def _dot_i2o_twins(instr: Instruction, operand_id: int) -> dict[IndexingMap, IndexingMap]:
    from . import fusion

    table = fusion.input_to_output(instr)
    names = dot_output_names(instr) or ()
    other = [n for n, role in names if role == ("rhs free" if operand_id == 0 else "lhs free")]
    found = {}
    for cell in table[operand_id] if operand_id < len(table) else ():
        for m in cell.maps:
            if m.num_range_vars != len(other):
                continue
            named_map = with_symbol_names(m, [(n, "") for n in other], [])
            simplified = simplify_map(named_map)
            found.setdefault(plain(simplified), simplified)
    return found


def _var_names(dims: Any, ranges: Any, rts: Any) -> VarNames:
    return VarNames(
        tuple(n for n, _ in dims),
        tuple(n for n, _ in ranges),
        tuple(n for n, _ in rts),
        tuple(r for _, r in dims),
        tuple(r for _, r in ranges),
        tuple(r for _, r in rts),
    )


def name_instruction(ins: InstructionAnalysis, namer: Namer | None = None) -> InstructionAnalysis:
    """A copy of ``ins`` whose maps name their variables by role (the analysis is unchanged)."""
    instr = ins.instruction
    if instr is None:
        return ins
    namer = namer or Namer()
    operands = []
    for op in ins.operands:
        source = op.shared_from or op
        o2i = o2i_names(instr, op.index, source.output_to_input, namer)
        operand_dims = ()
        if op.index < len(instr.operands) and instr.operands[op.index].shape.is_array:
            operand_dims = namer.output_names(instr.operands[op.index])
            if not any(n for n, _ in operand_dims):
                operand_dims = _operand_names(instr, op.index) or operand_dims
        i2o = i2o_names(instr, op.index, source.input_to_output, operand_dims, namer)
        operands.append(
            replace(
                source,
                index=op.index,
                name=op.name,
                shape=op.shape,
                output_to_input=[
                    named(m, n) for m, n in zip(source.output_to_input, o2i, strict=True)
                ],
                input_to_output=[
                    named(m, n) for m, n in zip(source.input_to_output, i2o, strict=True)
                ],
                shared_from=None,
                map_names=(o2i, i2o),
            )
        )
        operands[-1].runtime_vars = _renamed_runtime_vars(operands[-1])
    return replace(ins, operands=operands)


def _operand_names(instr: Instruction, operand_id: int) -> tuple[Named, ...] | None:
    """An operand's dims named by the op's rule when its producer gives them no names."""
    try:
        found = attention_operand_names(instr, operand_id)
    except Exception:  # a reading aid: plain names then
        return None
    rank = len(instr.operands[operand_id].shape.dims)
    return found if found is not None and len(found) == rank else None


def _renamed_runtime_vars(op: Any) -> list[Any]:
    """The runtime variables listed under the names the (first) map with them prints, each
    one's map (output index -> the element its value is read from) with that map's dim names."""
    listed = op.runtime_vars
    for m in op.output_to_input:
        if m.rt_vars and len(m.rt_vars) == len(listed):
            dims = VarNames(tuple(v.name for v in m.dim_vars))
            return [
                (v.name or name, producer, _dims_named(rt_map, dims), *rest)
                for v, (name, producer, rt_map, *rest) in zip(m.rt_vars, listed, strict=True)
            ]
    return listed


def _dims_named(m: IndexingMap, dims: VarNames) -> IndexingMap:
    return named(m, dims) if m.num_dims == len(dims.dims) else m


def named_steps(
    instr: Instruction,
    out_id: int,
    output: Instruction,
    reached: dict,
    namer: Namer,
    stop_at: Instruction | None = None,
) -> dict[int, tuple]:
    """``--tree`` and ``--from/--to``: each map of a walk from ``output`` (keyed by the id of
    the plain ``Tracked`` in ``reached``) as ``(named map, named steps)``: range and runtime
    variables named by the ops that introduce them (the walk made again with named tables),
    dims by ``instr``'s output ``out_id``. A map whose named walk, renamed back, is not its
    plain one is left out (it prints plain)."""
    from .fusion import grouped_output_to_input

    out: dict[int, tuple] = {}
    try:
        tables = _NamedTables(fused=True)
        again = grouped_output_to_input(output, record=True, stop_at=stop_at, rules=tables)
        dims = tuple(n for n, _ in namer.output_names(instr, out_id))
    except Exception:  # a reading aid: plain steps then
        return out

    def same(t: Any, n: Any) -> bool:
        return (
            plain(n.map) == t.map
            and len(t.steps) == len(n.steps)
            and all(plain(b.map) == a.map for a, b in zip(t.steps, n.steps, strict=True))
        )

    for reached_instr, r in reached.items():
        twin = again.get(reached_instr)
        if twin is None:
            continue
        for t in r.maps:
            # named paths that differ only in names are not merged: the first that matches
            n = next((n for n in twin.maps if same(t, n)), None)
            if n is not None:
                steps = tuple(
                    replace(b, map=named(b.map, _step_names(b.map, dims))) for b in n.steps
                )
                out[id(t)] = (named(n.map, _step_names(n.map, dims)), steps)
    return out


def _step_names(m: IndexingMap, dims: tuple[str, ...]) -> VarNames:
    return VarNames(
        dims if len(dims) == m.num_dims else (),
        tuple(v.name for v in m.range_vars),
        tuple(v.name for v in m.rt_vars),
    )


def name_each(analyses: Iterable[InstructionAnalysis]) -> Iterator[InstructionAnalysis]:
    """Each analysis named by role, as it comes (one namer for the module)."""
    namer = Namer()
    for ins in analyses:
        yield name_instruction(ins, namer)


def name_module(analysis: ModuleAnalysis) -> ModuleAnalysis:
    """A copy of a module's analysis whose maps name their variables by role."""
    return replace(analysis, instructions=list(name_each(analysis.instructions)))


__all__ = ["Namer", "name_each", "name_instruction", "name_module", "named_steps", "o2i_names"]
