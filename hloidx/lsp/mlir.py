"""StableHLO (``.mlir``) in the editor: every error of the lowering located in the MLIR, hover
on an op showing the maps of the HLO it lowers to, definitions and references of SSA values
(``%0``, ``%arg0``, ``%0#1``) and of functions (``@main``, ``call @f``), and the outline
(functions with their ops).

The MLIR is read into statements (:mod:`hloidx.stablehlo.syntax`) and lowered to HLO text,
which remembers, line by line, the MLIR statement each HLO instruction came from
(:func:`hloidx.stablehlo.stablehlo_to_hlo`): that is how a hover on an op finds its HLO. The
names are put in an :class:`~.index.HloIndex` (values as instructions scoped by their
function, functions as computations), so that definitions, references and the outline are
:class:`~.document.FileAnalysis`'s own.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from .document import DEFAULT_DEVICE, FileAnalysis, is_mlir
from .index import ComputationInfo, HloIndex, InstructionInfo, Occurrence
from .index_links import link
from .text import one_line

__all__ = ["MlirFileAnalysis", "new_analysis"]

_RESULT = re.compile(r"%[\w.$\-]+")
#: the most HLO instructions shown for one op (an op may lower to a few: reshape, broadcast)
_SHOWN = 4


def new_analysis(name: str, text: str) -> FileAnalysis:
    """The analysis for a file: StableHLO's for ``.mlir`` (or MLIR text), else HLO's."""
    return MlirFileAnalysis(name, text) if is_mlir(name, text) else FileAnalysis(name, text)


class MlirFileAnalysis(FileAnalysis):
    def __init__(self, name: str, text: str) -> None:
        super().__init__(name, text)
        self.is_mlir = True
        #: MLIR statement offset -> the HLO (computation, instruction) it lowers to, in order
        self.lowered: dict[int, list[tuple[str, str]]] = {}
        #: the MLIR ops: (start, end, op name), innermost last among those that nest
        self.ops: list[tuple[int, int, str]] = []
        self._items: list[Any] = []

    # -- building -------------------------------------------------------------------------
    def _parse(self) -> None:
        from ..errors import HloidxError
        from ..stablehlo import parse_stablehlo_mapped
        from ..stablehlo.syntax import parse_stablehlo_text

        # every op's error; the ops that lowered keep their hover
        module, errors, offsets = parse_stablehlo_mapped(self.text, self.name)
        self.module = module
        self.diagnostics.extend(self._diagnostic(error) for error in errors)
        with contextlib.suppress(HloidxError):  # already a diagnostic (the read above)
            _, self._items = parse_stablehlo_text(self.text, self.name)
        if module is not None:
            self._map_lowering(module, offsets)

    def _map_lowering(self, module: Any, offsets: list[int]) -> None:
        for comp in module.computations.values():
            for instr in comp.instructions:
                span = instr.span
                if span is None or not 0 < span.line <= len(offsets):
                    continue
                at = offsets[span.line - 1]
                if at >= 0 and instr.opcode != "parameter":
                    self.lowered.setdefault(at, []).append((comp.name, instr.name))

    def finish_steps(self) -> Iterator[None]:
        try:
            self.index = self._index_mlir()
        except Exception as error:  # a bug must not silence the server: say so, located
            self._internal(error)
        self.diagnostics.sort(key=lambda d: (d.start, d.end))
        self.indexed = True
        yield

    def _index_mlir(self) -> HloIndex:
        index = HloIndex(self.text)
        functions = [s for item in self._items for s in _statements(item) if s.kind == "func"]
        for func in functions:
            symbol = next((p for p in func.pieces if getattr(p, "type", "") == "SYMBOL"), None)
            if symbol is None:
                continue
            name = symbol.value[1:]
            end = self._line_end(_end(func))
            comp = ComputationInfo(
                name, name == "main", func.start, end, symbol.start, _token_end(symbol)
            )
            index.computations.append(comp)
            index.occurrences.append(
                Occurrence("computation", "", name, comp.name_start, comp.name_end, True)
            )
            self._index_function(func, comp, index)
        link(index, {c.name for c in index.computations})
        self.ops.sort()
        return index

    def _index_function(self, func: Any, comp: ComputationInfo, index: HloIndex) -> None:
        """The values of one function (its scope) and its ops; the first mention of a value
        (a result, an argument of the function or of a region's block) is its definition."""
        defined: set[str] = set()

        def mention(name: str, start: int, end: int, user: InstructionInfo | None) -> None:
            first = name not in defined
            defined.add(name)
            index.occurrences.append(
                Occurrence(
                    "instruction", comp.name, name, start, end, first, user=None if first else user
                )
            )

        user: InstructionInfo | None = None
        for node in _walk(func.pieces):
            if hasattr(node, "head"):  # a statement
                if node.kind != "op":
                    user = None
                    continue
                op_name = next(
                    (p.value for p in node.pieces if getattr(p, "type", "") == "BARE_ID"), "op"
                )
                end = self._line_end(_end(node))
                self.ops.append((node.start, end, op_name))
                results = list(_RESULT.finditer(node.head.value))
                first = results[0] if results else None
                name_start = node.start + (first.start() if first else 0)
                name_end = node.start + (first.end() if first else 0)
                user = InstructionInfo(
                    first.group(0) if first else op_name,
                    comp.name,
                    node.start,
                    end,
                    name_start,
                    name_end,
                    opcode=op_name,
                )
                comp.instructions.append(user)
                for match in results:
                    mention(
                        match.group(0), node.start + match.start(), node.start + match.end(), None
                    )
            elif node.type == "VALUE":
                name = node.value.split("#", 1)[0]
                mention(name, node.start, node.start + len(name), user)
            elif node.type == "SYMBOL" and user is not None:  # call @f
                index.occurrences.append(
                    Occurrence(
                        "computation",
                        "",
                        node.value[1:],
                        node.start,
                        _token_end(node),
                        attribute="call",
                    )
                )

    def _line_end(self, offset: int) -> int:
        """The end of the line holding ``offset`` (a type's closing ``>`` is no token)."""
        text = self.text
        end = text.find("\n", offset)
        end = len(text) if end < 0 else end
        while end > offset and text[end - 1] in " \t\r":
            end -= 1
        return end

    # -- answers ----------------------------------------------------------------------------
    def instruction(self, computation: str, name: str) -> Any:
        comp = None if self.module is None else self.module.computations.get(computation)
        return None if comp is None else comp.by_name.get(name)

    def hover_early(self, offset: int, device: str = DEFAULT_DEVICE) -> Any:
        return None  # small files: the index is there at once

    def hover(self, offset: int, device: str = DEFAULT_DEVICE) -> tuple[str, int, int] | None:
        """On an op (anywhere in it: its results, name or operands): the HLO it lowers to,
        each instruction with its operands' maps, status and utilization."""
        op = next((o for o in reversed(self.ops) if o[0] <= offset <= o[1]), None)
        found = self.index.at(offset)
        if op is None:
            if found is not None and found.kind == "computation":
                return self._hover_computation(found), found.start, found.end
            return None
        start, end, op_name = op
        lines = [f"**`{op_name}`** · " + one_line(self.text, start, end, 160)]
        lowered = self.lowered.get(start, [])
        if not lowered:
            lines.append("")
            lines.append("lowers to no HLO instruction hloidx analysed (an error above, or none)")
        for computation, name in lowered[:_SHOWN]:
            instr = self.instruction(computation, name)
            lines.append("")
            lines.append(f"lowers to HLO `%{name}`:")
            span = None if instr is None else instr.span
            if span is not None:
                hlo = one_line(span.source.text, span.start, span.end, 240)
                lines.append("```hlo\n" + hlo + "\n```")
            lines.extend(self._instruction_section(computation, name, device))
        if len(lowered) > _SHOWN:
            lines.append(f"… and {len(lowered) - _SHOWN} more HLO instructions")
        if found is not None:
            return "\n".join(lines), found.start, found.end
        return "\n".join(lines), start, start + len(op_name)


def _walk(items: list[Any]) -> Iterator[Any]:
    """Tokens and statements in text order (a statement before its own pieces)."""
    for item in items:
        if hasattr(item, "head"):
            yield item
            yield from _walk(item.pieces)
        elif hasattr(item, "items"):
            yield from _walk(item.items)
        else:
            yield item


def _statements(item: Any) -> Iterator[Any]:
    for node in _walk([item]):
        if hasattr(node, "head"):
            yield node


def _token_end(token: Any) -> int:
    return token.start + len(token.value)


def _end(stmt: Any) -> int:
    """Past the last token of a statement (its regions included)."""
    end = _token_end(stmt.head)
    for node in _walk(stmt.pieces):
        if hasattr(node, "value"):
            end = max(end, _token_end(node))
    return end
