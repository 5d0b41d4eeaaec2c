"""One open file, analysed: its module, every error located, the name index, and the answers
the language server gives (hover text, definitions, references, outline, hints, lenses) as
plain data with character offsets. Nothing here knows the protocol (:mod:`.server` does).

A :class:`FileAnalysis` is made from a text once and never changes; the server keeps one per
content hash. The instruction analyses (maps, statuses, utilization) and cost estimates it
computes are kept in it, so that a second request for the same instruction answers at once.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .index import HloIndex, InstructionInfo, Occurrence, scan
from .text import cost_text, one_line, utilization_label, utilization_text

__all__ = ["Diagnostic", "FileAnalysis", "Symbol", "analyse_text"]

#: ``--device`` of ``hloidx cost`` (the server's default when the client sets none)
DEFAULT_DEVICE = "rtx-a6000"
_HOVER_LINE = 240
_TOKEN = re.compile(
    r"[%@]?[A-Za-z_][\w.\-$]*"
)  # the instruction's text shown in a hover is cut at this width


@dataclass(frozen=True, slots=True)
class Diagnostic:
    start: int
    end: int
    message: str
    severity: str  # "error" | "warning"


@dataclass(slots=True)
class Symbol:
    name: str
    kind: str  # "computation" | "instruction"
    detail: str
    start: int
    end: int
    selection_start: int
    selection_end: int
    children: list[Symbol] = field(default_factory=list)


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def is_mlir(name: str, text: str) -> bool:
    return name.endswith(".mlir") or (
        "func.func" in text[:20000] and "HloModule" not in text[:2000]
    )


def analyse_text(text: str, name: str = "<string>") -> FileAnalysis:
    """Parse, verify and index ``text``; never raises (an internal failure becomes a
    diagnostic at the start of the text)."""
    analysis = FileAnalysis(name, text)
    analysis.parse()
    analysis.finish()
    return analysis


class FileAnalysis:
    #: how hovers name map variables: "plain" (d0, s0) or "roles" (setting ``hloidx.names``)
    names = "plain"

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text
        self.digest = content_hash(text)
        self.module: Any = None
        self.index: HloIndex = HloIndex("")
        self.diagnostics: list[Diagnostic] = []
        self.is_mlir = is_mlir(name, text)
        #: (computation, instruction) -> InstructionAnalysis, filled as they are asked for
        self.analyses: dict[tuple[str, str], Any] = {}
        #: (device, computation, instruction) -> KernelCost | str (why there is none)
        self.costs: dict[tuple[str, str, str], Any] = {}
        self.fully_analysed = False
        self._kernel_computations: set[str] | None = None
        self._lock = threading.RLock()

    # -- building -----------------------------------------------------------------------------
    def parse(self) -> None:
        """The module and every parse and verifier error (the first diagnostics); never
        raises."""
        try:
            self._parse()
        except Exception as error:  # a bug must not silence the server: say so, located
            self._internal(error)
        self.diagnostics.sort(key=lambda d: (d.start, d.end))

    def finish(self) -> None:
        """The name index and the warnings it finds (after :meth:`parse`); never raises."""
        if self.is_mlir:
            return
        try:
            self._index()
        except Exception as error:
            self._internal(error)
        self.diagnostics.sort(key=lambda d: (d.start, d.end))

    def _internal(self, error: Exception) -> None:
        message = f"internal error in hloidx: {type(error).__name__}: {error}"
        self.diagnostics.append(Diagnostic(0, 0, message, "error"))

    def _parse(self) -> None:
        if self.is_mlir:
            self._build_mlir()
            return
        from ..hlo.syntax import parse_hlo_lenient

        module, errors = parse_hlo_lenient(self.text, self.name)
        self.module = module
        for error in errors:
            self.diagnostics.append(self._diagnostic(error))
        if module is None and not errors and self.text.strip():
            self.diagnostics.append(Diagnostic(0, 0, "no HLO module found in this text", "error"))

    def _index(self) -> None:
        self.index = scan(self.text)
        for start, end, key in self.index.unknown_attributes:
            self.diagnostics.append(
                Diagnostic(
                    start,
                    end,
                    f"unknown attribute {key!r}: not one XLA's HLO parser reads (it would "
                    "reject the module); hloidx ignores it",
                    "warning",
                )
            )

    def _build_mlir(self) -> None:
        from ..errors import HloidxError
        from ..stablehlo import parse_stablehlo

        try:
            self.module = parse_stablehlo(self.text, self.name)
        except HloidxError as error:
            self.diagnostics.append(self._diagnostic(error))

    def _diagnostic(self, error: Any) -> Diagnostic:
        span = error.span
        start = span.start if span is not None else 0
        end = span.end if span is not None else 0
        name = _TOKEN.match(self.text, start) if end - start <= 1 else None
        if name is not None:  # a point on a name (`%arg9`): mark the whole name
            end = name.end()
        if end <= start:  # a point: mark the token there
            end = start
            while end < len(self.text) and end - start < 80 and not self.text[end].isspace():
                end += 1
            end = max(end, min(start + 1, len(self.text)))
        message = error.message
        severity = "warning" if message.startswith("unknown opcode") else "error"
        return Diagnostic(start, end, message, severity)

    # -- the module's objects -----------------------------------------------------------------
    def instruction(self, computation: str, name: str) -> Any:
        module = self.module
        if module is None or self.is_mlir:
            return None
        comp = module.computations.get(computation)
        if comp is None:
            return None
        return comp.by_name.get(name)

    def analysis(self, computation: str, name: str) -> Any:
        """The instruction's :class:`~hloidx.hlo.analysis.InstructionAnalysis` (computed on
        first use, then kept), or None when the module does not hold it."""
        key = (computation, name)
        found = self.analyses.get(key)
        if found is not None:
            return found
        instr = self.instruction(computation, name)
        if instr is None:
            return None
        from ..hlo.analysis import analyze_instruction

        with self._lock:
            result = analyze_instruction(instr)
            self.analyses[key] = result
        return result

    def analyse_all(self, chunk: int = 200) -> Iterator[int]:
        """Analyse every instruction, ``chunk`` at a time (yields the count so far), sharing
        work between identical instructions as ``hloidx maps`` does."""
        if self.module is None or self.is_mlir:
            self.fully_analysed = True
            return
        from ..hlo.analysis import analyze_each

        done = 0
        with self._lock:
            results = analyze_each(self.module)
        while True:
            with self._lock:
                for _ in range(chunk):
                    try:
                        result = next(results)
                    except StopIteration:
                        self.fully_analysed = True
                        return
                    self.analyses.setdefault((result.computation, result.name), result)
                    done += 1
            yield done

    def kernel_computations(self) -> set[str]:
        """The entry computation and what it runs as control flow (while bodies, calls):
        the computations whose instructions launch kernels."""
        if self._kernel_computations is not None:
            return self._kernel_computations
        found: set[str] = set()
        module = self.module
        if module is not None and module.entry is not None and not self.is_mlir:
            todo = [module.entry]
            while todo:
                comp = todo.pop()
                if comp.name in found:
                    continue
                found.add(comp.name)
                for instr in comp.instructions:
                    if instr.opcode in ("while", "call", "conditional"):
                        for called in instr.called_computations.values():
                            todo.extend(called)
        self._kernel_computations = found
        return found

    def cost(self, computation: str, name: str, device: str) -> Any:
        """The estimated cost (a ``KernelCost``) of the kernel the instruction launches, a
        sentence saying why it has none, or None when it is not in a kernel computation."""
        key = (device, computation, name)
        if key in self.costs:
            return self.costs[key]
        if computation not in self.kernel_computations():
            return None
        instr = self.instruction(computation, name)
        if instr is None:
            return None
        with self._lock:
            self.costs[key] = self._estimate(instr, device)
        return self.costs[key]

    def _estimate(self, instr: Any, device: str) -> Any:
        from ..errors import HloidxError
        from ..hlo.ir import Computation, HloModule
        from ..perf.devices import cost_device
        from ..perf.kernels import FREE, find_kernels
        from ..perf.report import estimate_kernel

        if instr.opcode in ("while", "call", "conditional"):
            return "control flow: the kernels of its computations have their own rows"
        if instr.opcode in FREE:
            return "launches no kernel (cost 0)"
        module = self.module
        holder = Computation(f"{instr.name}.__hover", [instr], is_entry=True)
        shell = HloModule(module.name, module.attributes, module.computations, holder, None)
        try:
            profile = cost_device(device)
            kernels, skipped = find_kernels(shell)
            if not kernels:
                return skipped[0].reason if skipped else "launches no kernel"
            return estimate_kernel(kernels[0], profile)
        except HloidxError as error:
            return f"not estimated: {error.message}"
        except Exception as error:
            return f"not estimated (internal error: {type(error).__name__}: {error})"

    # -- navigation ---------------------------------------------------------------------------
    def occurrence_at(self, offset: int) -> Occurrence | None:
        return self.index.at(offset)

    def definition(self, offset: int) -> list[tuple[int, int]]:
        """Where the name at ``offset`` is defined. On a parameter's own definition in a
        called computation: the operands that feed it in each caller (``calls=``, a while's
        ``body=``/``condition=``)."""
        found = self.index.at(offset)
        if found is None:
            return []
        if found.is_definition and found.kind == "instruction":
            fed = self.feeding_operands(found.scope, found.name)
            if fed:
                return [(o.start, o.end) for o in fed]
        target = self.index.definitions.get(found.key)
        if target is None:
            return []
        if found.kind == "computation":
            comp = self.index.computation(found.name)
            if comp is not None:
                return [(comp.name_start, comp.name_end)]
        return [(target.start, target.end)]

    def feeding_operands(self, computation: str, name: str) -> list[Occurrence]:
        """The operands of the callers that feed parameter ``name`` of ``computation``."""
        info = self.index.instructions.get((computation, name))
        if info is None or info.opcode != "parameter" or info.parameter_number is None:
            return []
        out = []
        for call in self.index.callers(computation):
            user = call.user
            if user is None:
                continue
            if call.attribute == "calls":
                wanted = info.parameter_number
            elif call.attribute in ("body", "condition") and user.opcode == "while":
                wanted = 0
            else:
                continue
            out.extend(o for o in user.operands if o.operand_index == wanted)
        return out

    def references(self, offset: int, include_declaration: bool = True) -> list[Occurrence]:
        found = self.index.at(offset)
        if found is None:
            return []
        refs = self.index.references.get(found.key, [])
        return [r for r in refs if include_declaration or not r.is_definition]

    # -- outline ------------------------------------------------------------------------------
    def symbols(self) -> list[Symbol]:
        """Computations (the entry first, then in text order), each with its instructions."""
        out = []
        comps = sorted(self.index.computations, key=lambda c: not c.is_entry)
        for comp in comps:
            children = [
                Symbol(
                    i.name,
                    "instruction",
                    one_line(self.text, i.name_end, i.end, 80).lstrip(" =\t"),
                    i.start,
                    i.end,
                    i.name_start,
                    i.name_end,
                )
                for i in comp.instructions
            ]
            detail = "ENTRY" if comp.is_entry else f"{len(comp.instructions)} instructions"
            if comp.is_entry:
                detail += f", {len(comp.instructions)} instructions"
            out.append(
                Symbol(
                    comp.name,
                    "computation",
                    detail,
                    comp.start,
                    comp.end,
                    comp.name_start,
                    comp.name_end,
                    children,
                )
            )
        return out

    # -- hover --------------------------------------------------------------------------------
    def hover(self, offset: int, device: str = DEFAULT_DEVICE) -> tuple[str, int, int] | None:
        """Markdown for the name (or metadata) at ``offset``, and the range it covers."""
        found = self.index.at(offset)
        if found is not None:
            if found.kind == "computation":
                return self._hover_computation(found), found.start, found.end
            return self._hover_instruction(found, device), found.start, found.end
        meta = self.index.metadata_at(offset)
        if meta is not None:
            return self._hover_metadata(meta), meta.start, meta.end
        return None

    def _hover_computation(self, found: Occurrence) -> str:
        comp = self.index.computation(found.name)
        lines = [
            f"**computation `%{found.name}`**" + (" (ENTRY)" if comp and comp.is_entry else "")
        ]
        if comp is not None:
            root = next((i for i in comp.instructions if i.is_root), None)
            root = root or (comp.instructions[-1] if comp.instructions else None)
            lines.append(f"{len(comp.instructions)} instructions")
            if root is not None:
                lines.append("root: `" + one_line(self.text, root.name_start, root.end, 160) + "`")
        callers = self.index.callers(found.name)
        if callers:
            lines.append("")
            lines.append(f"called by {len(callers)}:")
            for call in callers[:20]:
                user = call.user
                if user is not None:
                    where = f"`{call.attribute}=`) in `%{user.computation}`"
                    lines.append(f"- `%{user.name}` ({user.opcode}, {where}")
            if len(callers) > 20:
                lines.append(f"- … and {len(callers) - 20} more")
        elif comp is not None and not comp.is_entry:
            lines.append("")
            lines.append("called by nothing in this module")
        return "\n".join(lines)

    def _hover_instruction(self, found: Occurrence, device: str) -> str:
        info = self.index.instructions.get((found.scope, found.name))
        lines: list[str] = []
        if info is not None:
            lines.append(
                "```hlo\n" + one_line(self.text, info.start, info.end, _HOVER_LINE) + "\n```"
            )
        else:
            lines.append(f"`%{found.name}`")
        instr = self.instruction(found.scope, found.name)
        if found.element and instr is not None:
            shape = instr.shape
            for k in found.element:
                if shape.tuple_shapes is None or not 0 <= k < len(shape.tuple_shapes):
                    shape = None
                    break
                shape = shape.tuple_shapes[k]
            where = "#".join(str(k) for k in found.element)
            lines.append(
                f"tuple element `#{where}` of `%{found.name}`: "
                + (f"`{shape}`" if shape is not None else "no such element")
            )
        if found.user is not None and found.operand_index is not None:
            lines.extend(self._operand_section(found.user, found.operand_index, "read by"))
        if info is not None and info.opcode == "parameter":
            for fed in self.feeding_operands(found.scope, found.name):
                if fed.user is not None and fed.operand_index is not None:
                    lines.extend(
                        self._operand_section(
                            fed.user, fed.operand_index, f"parameter of `%{found.scope}`, fed by"
                        )
                    )
        if found.user is None:
            lines.extend(self._instruction_section(found.scope, found.name, device))
        elif instr is None and info is None:
            lines.append("(not in the parsed module)")
        return "\n".join(lines)

    def _operand_section(self, user: InstructionInfo, index: int, how: str) -> list[str]:
        result = self.analysis(user.computation, user.name)
        head = (
            f"**{how} `%{user.name}`** ({user.opcode}, in `%{user.computation}`) as operand {index}"
        )
        if result is None or index >= len(result.operands):
            return ["", head + ": no analysis (the instruction is not in the parsed module)"]
        return ["", head + ":", *self._operand_lines(result, index)]

    def _operand_lines(self, result: Any, index: int) -> list[str]:
        from ..maps.printer import format_map

        if self.names == "roles":
            from ..hlo.role_names import name_instruction

            result = name_instruction(result)
        operand = result.operands[index]
        status = operand.status or "not analysed"
        lines = [f"status: {status} · utilization: {utilization_text(operand.utilization)}"]
        maps = operand.output_to_input
        if maps:
            lines.append("output→input:")
            lines.append("```")
            lines.extend(format_map(m) for m in maps)
            lines.append("```")
        for rt_name, producer, _, producer_text in operand.runtime_vars:
            lines.append(f"runtime variable {rt_name}: `%{producer}` ({producer_text})")
        lines.extend(f"note: {note}" for note in operand.notes[:5])
        return lines

    def _instruction_section(self, computation: str, name: str, device: str) -> list[str]:
        lines: list[str] = []
        instr = self.instruction(computation, name)
        if instr is None:
            lines.append("")
            lines.append("not in the parsed module (an error above drops it, or what it reads)")
            return lines
        lines.append(f"in `%{computation}`" + (" · ROOT" if instr.is_root else ""))
        result = self.analysis(computation, name)
        if result is not None:
            for k, operand in enumerate(result.operands):
                lines.append("")
                lines.append(f"**operand {k}** `%{operand.name}` `{operand.shape}`")
                lines.extend(self._operand_lines(result, k))
            lines.extend(f"note: {note}" for note in result.notes[:5])
        cost = self.cost(computation, name, device)
        if cost is not None:
            lines.append("")
            lines.append(cost_text(cost, device))
        return lines

    def _hover_metadata(self, meta: Any) -> str:
        lines = [f"**source of `%{meta.instruction.name}`**"]
        if meta.source_file is not None:
            line = f":{meta.source_line}" if meta.source_line is not None else ""
            lines.append(f"- `{meta.source_file}{line}`")
        if meta.stack_frame is not None:
            stack = self.index.frame(meta.stack_frame)
            if not stack:
                lines.append(
                    f"stack frame {meta.stack_frame}: not in the module's StackFrames table"
                )
            else:
                lines.append(f"stack frame {meta.stack_frame} (innermost first):")
                for file, line_no, function in stack:
                    where = f"{file}:{line_no}" if line_no is not None else file
                    lines.append(f"- `{function}` at `{where}`")
        if len(lines) == 1:
            lines.append("no source location in this metadata")
        return "\n".join(lines)

    # -- hints and lenses ---------------------------------------------------------------------
    def inlay_hints(self, start: int, end: int, limit: int = 5000) -> list[tuple[int, str, str]]:
        """(offset, label, tooltip) after each operand in ``[start, end)`` that is not read
        exactly once (every element once: distinct 1, reads 1)."""
        out: list[tuple[int, str, str]] = []
        for comp in self.index.computations:
            if comp.end < start or comp.start > end:
                continue
            for info in comp.instructions:
                if info.end < start or info.start > end or not info.operands:
                    continue
                result = self.analysis(info.computation, info.name)
                if result is None:
                    continue
                for use in info.operands:
                    if use.operand_index is None or use.operand_index >= len(result.operands):
                        continue
                    u = result.operands[use.operand_index].utilization
                    label = utilization_label(u)
                    if label:
                        tip = (
                            f"operand {use.operand_index} of %{info.name}: "
                            + utilization_text(u)
                            + " (distinct: share of its elements read; ×: reads per element read)"
                        )
                        out.append((use.end, label, tip))
                        if len(out) >= limit:
                            return out
        return out

    def fusions(self) -> list[InstructionInfo]:
        """The fusions of the kernel computations (where code lenses go)."""
        kernels = self.kernel_computations()
        return [
            i
            for comp in self.index.computations
            if comp.name in kernels
            for i in comp.instructions
            if i.opcode == "fusion"
        ]

    def kernel_instructions(self) -> list[InstructionInfo]:
        """Every instruction of the kernel computations, the fusions first: those whose
        hover shows a cost row (what the background estimates)."""
        kernels = self.kernel_computations()
        rest = [
            i
            for comp in self.index.computations
            if comp.name in kernels
            for i in comp.instructions
            if i.opcode != "fusion"
        ]
        return self.fusions() + rest

    def lens_title(self, computation: str, name: str, device: str) -> str:
        cost = self.cost(computation, name, device)
        if cost is None:
            return "cost: not a kernel"
        if isinstance(cost, str):
            return "cost: " + cost
        from ..perf.text import human_time

        bound = cost.bound
        bound = f"{bound}-bound" if bound in ("memory", "compute") else bound
        return f"≈ {human_time(cost.exec_time_ns)} · {bound} (estimate, {device})"
