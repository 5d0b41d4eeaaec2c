"""The fused module as HLO text: every simulated kernel a ``fusion`` instruction calling a
fused computation that holds its instructions (kind ``kInput`` for a reduction or scatter
hero, ``kLoop`` otherwise), dots as cuBLAS custom-calls, calls inlined; the text parses with
hloidx's own parser and is costed exactly as an optimized module is."""

from __future__ import annotations

from dataclasses import dataclass

from ..hlo.ir import Computation, HloModule, Instruction
from ..hlo.printer import format_computation, format_shape
from .async_collectives import ASYNC_KINDS, schedule_collectives
from .gemm import rewrite_gemms
from .grouping import Group, fuse, topological
from .inline import Flattener
from .ops import FREE_ALONE
from .tree_reduction import split_large_reductions

#: attributes the fused module does not keep (annotations for passes already simulated)
_DROPPED = frozenset({"sharding", "metadata", "frontend_attributes"})
_NESTED_KEYS = ("body", "condition", "branch_computations", "true_computation", "false_computation")


@dataclass(frozen=True)
class SimulatedKernel:
    """One kernel of the simulation: its fusion's name, kind and the instructions it holds
    (names as in the module before optimization)."""

    name: str
    computation: str
    kind: str
    roots: tuple[str, ...]
    holds: tuple[str, ...]


class Emitter:
    def __init__(
        self,
        module: HloModule,
        reshape_shape=None,
        multi_output: bool = True,
        asynchronous: bool = True,
    ) -> None:
        self.multi_output = multi_output
        #: collectives combined and made start/done pairs (:mod:`.async_collectives`)
        self.asynchronous = asynchronous
        self.collectives: dict[str, tuple[Instruction, list[str]]] = {}
        self.module = module
        self.flattener = Flattener()
        self.blocks: list[str] = []
        self.done: set[str] = set()
        self.kernels: list[SimulatedKernel] = []
        self.fusion_count = 0
        #: a hook the partitioner sets: new shape of a flattened instruction, or None
        self.reshape_shape = reshape_shape

    # computations called by kept instructions (reducers, comparators) are copied verbatim
    def _require(self, ins: Instruction) -> None:
        for key, comps in ins.called_computations.items():
            for comp in comps:
                if comp.name in self.done:
                    continue
                if key in _NESTED_KEYS:
                    self.emit_computation(comp)
                else:
                    self.done.add(comp.name)
                    for inner in comp.instructions:
                        self._require(inner)
                    self.blocks.append(format_computation(comp).replace("ENTRY ", ""))

    def emit_computation(self, comp: Computation) -> None:
        self.done.add(comp.name)
        instrs, root = self.flattener.flatten(comp)
        if self.reshape_shape is not None:
            instrs = self.reshape_shape(instrs, self.flattener.annotations)
            root = self.reshape_shape.last[id(root)]
        instrs, split = split_large_reductions(_live(instrs, root))
        root = split.get(id(root), root)
        outputs = {id(root)} | ({id(o) for o in root.operands} if root.opcode == "tuple" else set())
        instrs, replaced = rewrite_gemms(instrs, outputs)
        root = replaced.get(id(root), root)
        if root.opcode == "tuple":
            outputs |= {id(o) for o in root.operands}
        outputs.add(id(root))
        groups = [g for g in fuse(instrs, outputs, self.multi_output) if not _free_alone(g)]
        lines = self._lines(comp, instrs, root, groups)
        head = ("ENTRY " if comp.is_entry else "") + comp.name + " {\n"
        self.blocks.append(head + "".join(f"  {line}\n" for line in lines) + "}\n")

    def _lines(self, comp, instrs, root, groups: list[Group]) -> list[str]:
        outer, self.collectives = self.collectives, {}  # a loop body is emitted on the way
        try:
            return self._ordered_lines(comp, instrs, root, groups)
        finally:
            self.collectives = outer

    def _ordered_lines(self, comp, instrs, root, groups: list[Group]) -> list[str]:
        grouped: dict[int, Group] = {}
        node_of: dict[int, object] = {}
        for g in groups:
            for m in g.members:
                grouped[id(m)] = g
            for r in g.roots:
                node_of[id(r)] = g
        order = topological(instrs)
        position = {id(i): n for n, i in enumerate(order)}
        # emission order: each group where its last root is, ungrouped instructions in place,
        # then a topological sort of those nodes (a sibling's users may sit between its roots)
        nodes: list[object] = []
        placed: set[int] = set()
        for ins in order:
            g = node_of.get(id(ins))
            if g is not None:
                if id(g) not in placed and position[id(ins)] == max(
                    position[id(r)] for r in g.roots
                ):
                    placed.add(id(g))
                    nodes.append(g)
            elif id(ins) not in grouped:
                nodes.append(ins)

        def deps(node) -> list[object]:
            if isinstance(node, Group):
                # in text order: a set of instructions iterates in memory order, which would
                # make the emitted order (and the kernels' numbers) change from run to run
                members = sorted(node.members, key=lambda m: position[id(m)])
                values = [o for m in members for o in m.operands if o not in node.members]
            else:
                values = node.operands
            return [node_of.get(id(v), v) for v in values]

        names: dict[int, str] = {}
        lines: list[str] = []
        emitted: set[int] = set()
        for start in nodes:
            stack = [(start, False)]
            while stack:
                node, ready = stack.pop()
                if ready:
                    lines.extend(self._node_lines(comp, node, names, position))
                    continue
                if id(node) in emitted:
                    continue
                emitted.add(id(node))
                stack.append((node, True))
                stack.extend((d, False) for d in reversed(deps(node)) if id(d) not in emitted)
        target = names[id(root)]
        for n, line in enumerate(lines):
            if line.startswith(target + " = "):
                lines[n] = "ROOT " + line
                break
        if self.asynchronous:
            lines = schedule_collectives(lines, self.collectives, blocks=self.blocks)
        return lines

    def _node_lines(self, comp, node, names: dict[int, str], position) -> list[str]:
        if not isinstance(node, Group):
            self._require(node)
            names[id(node)] = node.name
            line = _line(node.name, node, [names[id(o)] for o in node.operands])
            if node.opcode in ASYNC_KINDS:
                self.collectives[node.name] = (node, [names[id(o)] for o in node.operands])
            if node.opcode == "while" and "backend_config" not in node.attributes:
                line += _trip_count_config(node)
            if node.opcode == "reshape":  # layout assignment makes a lone reshape a bitcast
                line = line.replace(" reshape(", " bitcast(", 1)
            return [line]
        self.fusion_count += 1
        k = self.fusion_count
        members = sorted(node.members, key=lambda m: position[id(m)])
        inputs: dict[int, Instruction] = {}
        for m in members:
            for o in m.operands:
                if o not in node.members:
                    inputs.setdefault(id(o), o)
        hero = next((m for m in members if m.opcode in ("reduce", "scatter")), node.hero)
        kind = "kInput" if hero.opcode in ("reduce", "scatter") else "kLoop"
        prefix = "input" if kind == "kInput" else "loop"
        fname = f"{prefix}_{hero.opcode.replace('-', '_')}_fusion.{k}"
        body = []
        inner: dict[int, str] = {}
        for j, value in enumerate(inputs.values()):
            pname = f"param_{j}.{k}"
            inner[id(value)] = pname
            body.append(f"  {pname} = {format_shape(value.shape)} parameter({j})\n")
        for m in members:
            self._require(m)
            inner[id(m)] = m.name
            prefix_root = "ROOT " if len(node.roots) == 1 and m is node.roots[0] else ""
            body.append(f"  {prefix_root}{_line(m.name, m, [inner[id(o)] for o in m.operands])}\n")
        if len(node.roots) > 1:
            shape = "(" + ", ".join(format_shape(r.shape) for r in node.roots) + ")"
            body.append(
                f"  ROOT tuple.{k} = {shape} tuple({', '.join(inner[id(r)] for r in node.roots)})\n"
            )
        else:
            shape = format_shape(node.roots[0].shape)
        self.blocks.append(f"fused_computation.{k} {{\n{''.join(body)}}}\n")
        operands = ", ".join(names[id(v)] for v in inputs.values())
        out = [f"{fname} = {shape} fusion({operands}), kind={kind}, calls=fused_computation.{k}"]
        if len(node.roots) == 1:
            names[id(node.roots[0])] = fname
        else:
            for j, r in enumerate(node.roots):
                gte = f"get-tuple-element.{k}.{j}"
                names[id(r)] = gte
                out.append(f"{gte} = {format_shape(r.shape)} get-tuple-element({fname}), index={j}")
        self.kernels.append(
            SimulatedKernel(
                fname,
                comp.name,
                kind,
                tuple(r.name for r in node.roots),
                tuple(m.name for m in members),
            )
        )
        return out


_SIDE_EFFECTS = ("outfeed", "send", "send-done", "infeed", "recv", "recv-done", "after-all")


def _live(instrs: list[Instruction], root: Instruction) -> list[Instruction]:
    """XLA's dead-code elimination: what the root needs, plus side effects (a value the
    partitioner recomputed locally leaves its replicated original unused)."""
    keep: set[int] = set()
    stack = [root] + [i for i in instrs if i.opcode in _SIDE_EFFECTS or i.opcode == "parameter"]
    while stack:
        node = stack.pop()
        if id(node) in keep:
            continue
        keep.add(id(node))
        stack.extend(node.operands)
    return [i for i in instrs if id(i) in keep]


def _free_alone(group: Group) -> bool:
    """A lone op that launches nothing (a constant, a bitcast, a reshape that is one)."""
    if len(group.members) != 1:
        return False
    op = group.hero.opcode
    return op in FREE_ALONE or op == "reshape"


def _trip_count_config(while_op: Instruction) -> str:
    """XLA's ``WhileLoopTripCountAnnotator``: the count it finds, written as it writes it."""
    from ..perf.trip_count import trip_count

    try:
        found = trip_count(while_op).value
    except Exception:  # the analysis is best effort on text it does not understand
        return ""
    if found is None:
        return ""
    return ', backend_config={"known_trip_count":{"n":"' + str(found) + '"}}'


def _line(name: str, ins: Instruction, operands: list[str]) -> str:
    inside = ins.literal if ins.literal is not None else ", ".join(operands)
    text = f"{name} = {format_shape(ins.shape)} {ins.opcode}({inside})"
    for key, value in ins.attributes.items():
        if key not in _DROPPED:
            text += f", {key}={value}"
    return text


def emit_module(
    module: HloModule, devices: int = 1, multi_output: bool = True, asynchronous: bool = True
) -> tuple[str, list[SimulatedKernel]]:
    """The fused module's text and its kernels; with ``devices > 1`` at per-device shapes
    (:mod:`.sharding`), with the partitioner's collectives."""
    from .sharding import Partitioner

    partitioner = Partitioner(devices) if devices > 1 else None
    emitter = Emitter(module, partitioner, multi_output, asynchronous)
    if module.entry is None:
        raise ValueError("the module has no entry computation")
    emitter.emit_computation(module.entry)
    header = "HloModule " + module.name
    for key, value in module.attributes.items():
        if partitioner is not None and key in ("entry_computation_layout", "num_partitions"):
            continue
        header += f", {key}={value}"
    blocks = emitter.blocks
    if partitioner is not None:
        header += f", num_partitions={devices}"
        blocks = partitioner.reducer_text() + blocks
    return header + "\n\n" + "\n".join(blocks), emitter.kernels
