"""Per-instruction indexing analysis of a module: maps, simplification, verdicts, utilization.

For each instruction and each operand, both directions are computed by the op rules
(:mod:`hloidx.hlo.op_rules`) or, for fusions and calls, by composition
(:mod:`hloidx.hlo.fusion`); every map is simplified and the simplification verified.
An error in one instruction is recorded on it and never stops the others.

Work is shared by structure: instructions with the same opcode, shapes and attributes reuse one
rule evaluation (their runtime variables are re-pointed at their own operands), and
simplification and verification are memoised by map.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..caches import memo
from ..errors import HloidxError, UnsupportedOpError
from ..maps.expr import Var, replace_vars, rt_var, variables
from ..maps.indexing_map import IndexingMap, MapState
from ..maps.utilization import UNKNOWN, Utilization, utilization
from .ir import Computation, HloModule, Instruction, Shape
from .op_rules import IndexingTable, OperandIndexing, RuntimeVar
from .sharing import op_table, structural_key
from .sparse_rows import row_cells, table_columns


@dataclass(slots=True)  # tens of thousands live at once (`hloidx summary`)
class OperandAnalysis:
    index: int
    name: str
    shape: str
    output_to_input: list[IndexingMap] = field(default_factory=list)
    input_to_output: list[IndexingMap] = field(default_factory=list)
    exact: bool | None = None
    utilization: Utilization | None = None
    #: (name, producer name, map from the output index to the producer's, producer as text)
    runtime_vars: list[tuple[str, str, IndexingMap, str]] = field(default_factory=list)
    #: for a tuple-shaped operand: the element its maps index
    element: int | None = None
    #: why a map is UNDEFINED or inexact (e.g. "through cc: no output-to-input rule ...")
    notes: list[str] = field(default_factory=list)
    #: one verdict per printed map (None for UNDEFINED / KNOWN EMPTY: nothing was simplified)
    output_to_input_verdicts: list[Any] = field(default_factory=list)
    input_to_output_verdicts: list[Any] = field(default_factory=list)
    #: the operand of a structurally identical instruction whose analysis this one reuses
    #: (everything above but index, name and shape is that operand's): the report prints it once
    shared_from: OperandAnalysis | None = field(default=None, repr=False, compare=False)
    #: ``--names roles``: the names and roles of each printed map's variables (output-to-input
    #: list, input-to-output list; hloidx.maps.var_names.VarNames); None for plain names
    map_names: tuple[list[Any], list[Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def verdicts(self) -> list[Any]:
        """Every verdict of this operand's maps (equivalence.Verdict), in print order."""
        return [
            v
            for v in (*self.output_to_input_verdicts, *self.input_to_output_verdicts)
            if v is not None
        ]

    @property
    def is_undefined(self) -> bool:
        # plain loops: the summary asks every operand of a module, several times
        for m in self.output_to_input:
            if m.is_undefined:
                return True
        for m in self.input_to_output:  # noqa: SIM110
            if m.is_undefined:
                return True
        return False

    @property
    def is_known_empty(self) -> bool:
        maps = self.output_to_input or self.input_to_output
        if not maps:
            return False
        for m in maps:  # noqa: SIM110
            if not m.is_known_empty:
                return False
        return True

    @property
    def status(self) -> str:
        """``unknown`` (a map is UNDEFINED), ``never read`` (KNOWN EMPTY), ``exact`` or
        ``over-approximation``; None before any rule ran."""
        if self.is_undefined:
            return "unknown"
        if self.exact is None:
            return ""
        if self.is_known_empty:
            return "never read"
        return "exact" if self.exact else "over-approximation"


@dataclass(slots=True)  # tens of thousands live at once (`hloidx summary`)
class InstructionAnalysis:
    """One instruction's analysis; read-only once :func:`analyze_each` has yielded it (the
    analyses of structurally identical instructions share their lists)."""

    computation: str
    name: str
    opcode: str
    shape: str
    operands: list[OperandAnalysis] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    instruction: Instruction | None = field(default=None, repr=False)

    @property
    def has_refuted(self) -> bool:
        # plain loops over the verdict lists: asked of every instruction of a module
        for o in self.operands:
            for v in o.output_to_input_verdicts:
                if getattr(v, "is_refuted", False):
                    return True
            for v in o.input_to_output_verdicts:
                if getattr(v, "is_refuted", False):
                    return True
        return False


@dataclass
class ModuleAnalysis:
    module: str
    instructions: list[InstructionAnalysis] = field(default_factory=list)
    errors: list[HloidxError] = field(default_factory=list)
    direction: str = "both"  # the maps that were asked for: "o2i" | "i2o" | "both"


@dataclass(frozen=True)
class AnalysisOptions:
    simplify: bool = True
    verify: bool = True
    direction: str = "both"  # "o2i" | "i2o" | "both"
    utilization: bool = True


# ---------------------------------------------------------------------------
# Simplification and verification, memoised by map
# ---------------------------------------------------------------------------


@memo(65536)
def simplify_map(m: IndexingMap) -> IndexingMap:
    """Simplified, without unused range variables; runtime variables keep their numbering."""
    from ..maps.simplify import simplify

    return simplify(m).remove_unused_symbols(runtime=False)


def drop_unused_runtime_vars(
    m: IndexingMap, described: tuple[RuntimeVar, ...]
) -> tuple[IndexingMap, tuple[RuntimeVar, ...]]:
    """Remove runtime variables the map no longer uses, and their descriptions with them."""
    if not m.rt_vars or m.state is not MapState.NORMAL:
        return m, described
    mentioned: frozenset[Var] = m.used_vars()
    for expr, _ in m.constraints:
        mentioned |= variables(expr)
    keep = [i for i in range(m.num_rt_vars) if rt_var(i) in mentioned]
    if len(keep) == m.num_rt_vars:
        return m, described
    renumber = {rt_var(old): rt_var(new) for new, old in enumerate(keep) if old != new}
    trimmed = IndexingMap(
        tuple(replace_vars(r, renumber) for r in m.results),
        m.dim_vars,
        m.range_vars,
        tuple(m.rt_vars[i] for i in keep),
        tuple((replace_vars(e, renumber), b) for e, b in m.constraints),
    )
    kept = tuple(described[i] for i in keep if i < len(described))
    return trimmed, kept


@memo(65536)
def verify_maps(original: IndexingMap, simplified: IndexingMap) -> Any:
    from ..maps.equivalence import verify

    return verify(original, simplified)


# ---------------------------------------------------------------------------
# Rule evaluation, shared between structurally identical instructions
# ---------------------------------------------------------------------------


@memo(16384)
def shape_text(shape: Shape) -> str:
    """``str(shape)``, memoised (the report prints the same few shapes thousands of times)."""
    return str(shape)


def _table(
    instr: Instruction, direction: str, compute: Callable[[Instruction], IndexingTable]
) -> IndexingTable:
    """An instruction's rule table. An op's is shared by structure (:func:`.sharing.op_table`,
    which the fused bodies use too); a fusion's or call's body is cached by composition, and a
    conditional or while is composed for itself."""
    if instr.opcode in ("fusion", "call", "conditional", "while"):
        return compute(instr)
    return op_table(instr, direction, compute)


# ---------------------------------------------------------------------------
# Whole analyses, shared between structurally identical instructions
# ---------------------------------------------------------------------------


def analysis_key(instr: Instruction) -> tuple[Any, ...] | None:
    """Everything an instruction's analysis depends on, without its name, its computation's
    name and its operands' names; None for an instruction whose analysis is not shared.

    An op is keyed as its rule tables are (:func:`structural_key`); a fusion or call by its
    body's structure (:func:`.sharing.structure_key`, the key of the composed tables) and its
    operands' shapes (utilization counts over them, the report prints them).
    """
    opcode = instr.opcode
    if opcode in ("conditional", "while"):
        return None  # composed per instruction, never shared
    if opcode in ("fusion", "call"):
        from .fusion import body_of
        from .sharing import structure_key

        try:
            return (
                "composed",
                opcode,
                tuple(o.shape for o in instr.operands),
                structure_key(body_of(instr)),
            )
        except Exception:
            # a malformed called computation: not shared, and the analysis itself reports the
            # error on this instruction, as it always did
            return None
    return structural_key(instr)


def _shareable(result: InstructionAnalysis) -> bool:
    """Whether every instruction with the same key gets this very analysis: nothing in it names
    an instruction. Runtime variables name their producers; the instruction's notes are errors,
    whose messages name it; a fusion's or call's operand notes name instructions of its body
    (`through add.3: ...`). So only analyses without these are shared; the others are analysed
    anew, each under its names.

    An op's operand notes are another matter: without an instruction note (an op without a rule
    notes that on the instruction too), they are its rule cells' notes ("out-of-bounds scatter
    updates are skipped ..."), which :func:`.sharing.op_table` already serves to every op of the
    same structural key, the key its analysis is shared by."""
    if result.notes:
        return False
    composed = result.opcode in ("fusion", "call", "conditional", "while")
    for operand in result.operands:
        if operand.runtime_vars or (composed and operand.notes):
            return False
    return True


def _reuse(shared: InstructionAnalysis, instr: Instruction) -> InstructionAnalysis:
    """``shared`` (the analysis of a structurally identical instruction) under ``instr``'s own
    names. Its lists are ``shared``'s own, not copies (an analysis is read-only once yielded):
    a module repeats the same op tens of thousands of times, and `hloidx summary` holds every
    analysis at once."""
    result = InstructionAnalysis(
        instr.computation.name if instr.computation else "",
        instr.name,
        instr.opcode,
        shape_text(instr.shape),  # a fusion's key holds its body's root shape, not its own
        notes=shared.notes,
        instruction=instr,
    )
    result.operands = [
        OperandAnalysis(
            op.index,
            producer.name,
            op.shape,
            op.output_to_input,
            op.input_to_output,
            op.exact,
            op.utilization,
            op.runtime_vars,  # empty: an analysis with runtime variables is never shared
            _own_element(op, producer, shared),
            op.notes,
            op.output_to_input_verdicts,
            op.input_to_output_verdicts,
            op,
        )
        for op, producer in zip(shared.operands, instr.operands, strict=True)
    ]
    return result


def _own_element(op: OperandAnalysis, producer: Instruction, shared: InstructionAnalysis) -> Any:
    """The reused operand's element: that of the element operand ``t#i`` it reads (element i),
    else that of the shared analysis unless the shared one came from its own ``t#i``."""
    implied = producer.implied_element
    if implied is not None:
        return implied
    source = shared.instruction
    if source is not None and source.operands[op.index].implied_element is not None:
        return None
    return op.element


# ---------------------------------------------------------------------------
# The analysis
# ---------------------------------------------------------------------------


def _rules_for(
    instr: Instruction,
) -> tuple[Callable[[Instruction], IndexingTable], Callable[[Instruction], IndexingTable]]:
    from . import op_rules

    if instr.opcode in ("fusion", "call", "conditional", "while"):
        try:
            from . import fusion
        except ImportError:  # composition not available in this build
            return op_rules.output_to_input, op_rules.input_to_output
        return fusion.output_to_input, fusion.input_to_output
    return op_rules.output_to_input, op_rules.input_to_output


def _operand_shape_dims(instr: Instruction, operand_index: int) -> tuple[int, ...] | None:
    shape = instr.operands[operand_index].shape
    return shape.dims if shape.is_array else None


def _cell_maps(
    cells: Iterable[OperandIndexing],
) -> list[tuple[IndexingMap, tuple[RuntimeVar, ...]]]:
    """Every map of the cells with the descriptions of its own runtime variables."""
    out = []
    for cell in cells:
        per_map = getattr(cell, "per_map_runtime_vars", ()) or (cell.runtime_vars,) * len(cell.maps)
        out.extend(zip(cell.maps, per_map, strict=False))
    return out


_VERDICT_RANK = {"refuted": 3, "sampled": 2, "exhaustive": 1, "proved": 0}


def _worst(a: Any, b: Any) -> Any:
    """Of two verdicts for one printed map, the weaker claim (refuted beats everything)."""
    if a is None:
        return b
    rank = _VERDICT_RANK.get
    return b if rank(getattr(b, "kind", ""), 0) > rank(getattr(a, "kind", ""), 0) else a


def _process(
    items: list[tuple[IndexingMap, tuple[RuntimeVar, ...]]],
    options: AnalysisOptions,
    verdicts: list[Any],
) -> tuple[list[IndexingMap], list[tuple[RuntimeVar, ...]]]:
    """Simplify and verify each map; returns the distinct results and their runtime variables,
    and fills ``verdicts`` with one verdict per distinct result (None where nothing was
    simplified: UNDEFINED and KNOWN EMPTY maps, or --no-verify)."""
    if not options.simplify:
        verdicts.extend(None for _ in items)
        return [m for m, _ in items], [rts for _, rts in items]
    out: list[IndexingMap] = []
    described: list[tuple[RuntimeVar, ...]] = []
    position: dict[IndexingMap, int] = {}
    for m, rts in items:
        if m.is_undefined or m.is_known_empty:
            s, verdict = m, None
        else:
            s, rts = drop_unused_runtime_vars(simplify_map(m), rts)
            verdict = verify_maps(m, s) if options.verify else None
        if s in position:
            k = position[s]
            verdicts[k] = _worst(verdicts[k], verdict)
            continue
        position[s] = len(out)
        out.append(s)
        described.append(rts)
        verdicts.append(verdict)
    return out, described


def _mark_unknown(operand: OperandAnalysis, why: str, direction: str, instr: Instruction) -> None:
    """An operand of an op without a rule: read somehow, but hloidx cannot say how."""
    getattr(operand, direction).append(IndexingMap.undefined())
    getattr(operand, f"{direction}_verdicts").append(None)
    operand.exact = False
    if why not in operand.notes:
        operand.notes.append(why)
    if direction == "output_to_input" and instr.operands[operand.index].shape.is_array:
        operand.utilization = UNKNOWN


def analyze_instruction(
    instr: Instruction, options: AnalysisOptions = AnalysisOptions()
) -> InstructionAnalysis:
    comp = instr.computation.name if instr.computation else ""
    result = InstructionAnalysis(
        comp, instr.name, instr.opcode, shape_text(instr.shape), instruction=instr
    )
    result.operands = [
        OperandAnalysis(i, o.name, shape_text(o.shape), element=o.implied_element)
        for i, o in enumerate(instr.operands)
    ]
    if not instr.operands:
        return result
    o2i_rule, i2o_rule = _rules_for(instr)

    o2i: IndexingTable | None = None
    no_rule: str | None = None  # the op has no rule: its operands are UNDEFINED
    # utilization is a property of the output-to-input maps: with --direction i2o they are
    # still built (not shown) so that the figures do not disappear
    o2i_for_utilization_only = options.direction == "i2o" and options.utilization
    if options.direction in ("o2i", "both"):
        try:
            o2i = _table(instr, "o2i", o2i_rule)
        except UnsupportedOpError as error:
            result.notes.append(error.message)
            no_rule = error.message
        except HloidxError as error:
            result.notes.append(f"error: {error.message}")
        except Exception as error:
            result.notes.append(
                f"internal error in the {instr.opcode} rule: {type(error).__name__}: {error}"
            )
    elif o2i_for_utilization_only:
        try:
            o2i = _table(instr, "o2i", o2i_rule)
        except Exception:  # the figures say unknown; the i2o rule reports the error
            o2i = None
    i2o: IndexingTable | None = None
    if options.direction in ("i2o", "both"):
        try:
            i2o = _table(instr, "i2o", i2o_rule)
        except UnsupportedOpError as error:
            if o2i is not None or options.direction == "i2o":
                result.notes.append(error.message)
            no_rule = no_rule or error.message
        except HloidxError as error:
            result.notes.append(f"error: {error.message}")
        except Exception as error:
            result.notes.append(
                f"internal error in the {instr.opcode} input-to-output rule: "
                f"{type(error).__name__}: {error}"
            )

    # each operand's cells of the output-to-input table, read once for all operands (a tuple's
    # table is sparse: walking its full columns would cost operands x outputs)
    o2i_columns = table_columns(o2i, len(instr.operands)) if o2i is not None else None
    for operand in result.operands:
        i = operand.index
        if o2i is None and options.direction in ("o2i", "both") and no_rule is not None:
            _mark_unknown(operand, no_rule, "output_to_input", instr)
        if i2o is None and options.direction in ("i2o", "both") and no_rule is not None:
            _mark_unknown(operand, no_rule, "input_to_output", instr)
        if o2i is None and o2i_for_utilization_only and instr.operands[i].shape.is_array:
            operand.utilization = UNKNOWN
        try:
            if o2i_columns is not None and o2i_for_utilization_only:
                cells = o2i_columns[i]
                maps, _ = _process(_cell_maps(cells), replace(options, verify=False), [])
                dims = _operand_shape_dims(instr, i)
                if dims is not None:
                    operand.utilization = utilization(maps, dims)
            elif o2i_columns is not None:
                cells = o2i_columns[i]
                operand.exact = all(c.exact for c in cells)
                maps, described = _process(
                    _cell_maps(cells), options, operand.output_to_input_verdicts
                )
                if any(m.is_undefined for m in maps):
                    operand.exact = False
                noted = set(operand.notes)  # a while's state: one note per element
                for cell in cells:
                    for note in cell.notes:
                        if note not in noted:
                            noted.add(note)
                            operand.notes.append(note)
                    if cell.element is not None:
                        operand.element = cell.element
                operand.output_to_input = maps
                # One list per operand: that of the first map with runtime variables (the maps
                # of one op share them; composed maps each list their own in --tree).
                first = next((rts for rts in described if rts), ())
                operand.runtime_vars = [
                    (f"rt{k}", rv.producer.name, rv.map, rv.producer_text())
                    for k, rv in enumerate(first)
                ]
                dims = _operand_shape_dims(instr, i)
                if options.utilization and dims is not None:
                    operand.utilization = utilization(maps, dims)
            if i2o is not None and i < len(i2o):
                cells = row_cells(i2o[i])
                operand.input_to_output, _ = _process(
                    _cell_maps(cells), options, operand.input_to_output_verdicts
                )
                if o2i is None:
                    operand.exact = all(c.exact for c in cells)
                if any(m.is_undefined for m in operand.input_to_output):
                    operand.exact = False
        except HloidxError as error:
            result.notes.append(f"operand {i}: error: {error.message}")
        except Exception as error:
            result.notes.append(f"operand {i}: internal error: {type(error).__name__}: {error}")
    return result


def analyze(
    module: HloModule,
    *,
    simplify: bool = True,
    verify: bool = True,
    direction: str = "both",
    instructions: Iterable[str] | None = None,
    computations: Iterable[str] | None = None,
    with_utilization: bool = True,
    progress: Callable[[int, int], None] | None = None,
    only: Iterable[Instruction] | None = None,
    share: bool = True,
) -> ModuleAnalysis:
    """Analyse the selected instructions of ``module`` (all of them by default; ``only``: these
    instructions, in this order).

    With ``share`` (the default), an instruction structurally identical to one already analysed
    (:func:`analysis_key`) takes that analysis under its own names: real modules repeat the
    same op on the same shapes thousands of times. ``share=False`` analyses each one anew (the
    tests compare the two)."""
    out = ModuleAnalysis(module.name, direction=direction)
    out.instructions = list(
        analyze_each(
            module,
            simplify=simplify,
            verify=verify,
            direction=direction,
            instructions=instructions,
            computations=computations,
            with_utilization=with_utilization,
            progress=progress,
            only=only,
            share=share,
        )
    )
    return out


def analyze_each(
    module: HloModule,
    *,
    simplify: bool = True,
    verify: bool = True,
    direction: str = "both",
    instructions: Iterable[str] | None = None,
    computations: Iterable[str] | None = None,
    with_utilization: bool = True,
    progress: Callable[[int, int], None] | None = None,
    only: Iterable[Instruction] | None = None,
    share: bool = True,
) -> Iterator[InstructionAnalysis]:
    """:func:`analyze`, one instruction at a time: a report written as it goes need not hold
    every analysis at once."""
    options = AnalysisOptions(
        simplify=simplify,
        verify=verify and simplify,
        direction=direction,
        utilization=with_utilization,
    )
    wanted_instr = set(instructions) if instructions else None
    wanted_comp = set(computations) if computations else None
    selected: list[tuple[Computation, Instruction]] = []
    if only is not None:
        selected = [(i.computation, i) for i in only if i.computation is not None]
    for comp in module.computations.values() if only is None else ():
        if wanted_comp is not None and comp.name not in wanted_comp:
            continue
        for instr in comp.instructions:
            if wanted_instr is not None and instr.name not in wanted_instr:
                continue
            selected.append((comp, instr))
    shared: dict[tuple[Any, ...], InstructionAnalysis] = {}
    for n, (_, instr) in enumerate(selected, 1):
        key = analysis_key(instr) if share and instr.operands else None
        hit = shared.get(key) if key is not None else None
        if hit is not None:
            yield _reuse(hit, instr)
        else:
            result = analyze_instruction(instr, options)
            if key is not None and _shareable(result):
                shared[key] = result
            yield result
        if progress is not None:
            progress(n, len(selected))
