"""The analysis of a module as notebook objects: :class:`Analysis` (the module), :class:`Summary`
(the triage table), :class:`InstructionView` (one instruction), :class:`OperandView` (one
operand). Each shows as the command line does (``str()``: ``hloidx maps``/``summary`` text,
``as_dict()``: their JSON), as HTML in Jupyter, and as a DataFrame (``to_pandas()``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

from ..hlo.analysis import InstructionAnalysis, ModuleAnalysis, OperandAnalysis
from ..hlo.ir import HloModule
from ..hlo.report import instruction_to_json, module_to_json, verdict_label
from ..hlo.selection import SelectionError, ordered_computations
from ..hlo.summary import summarize
from . import html as h
from .display import Display

#: rows an HTML table shows before it says how many more there are (``to_pandas`` has all)
HTML_ROWS = 40

#: the columns of :meth:`Analysis.to_pandas`
COLUMNS = (
    "computation",
    "instruction",
    "opcode",
    "operand",
    "shape",
    "status",
    "distinct",
    "reads",
    "maps",
    "verdicts",
)


class Analysis(Display):
    """Every instruction's indexing maps, verdicts and utilization (``hloidx.analyze``).

    Iterating gives :class:`InstructionView` objects in the order the command line shows
    them: the entry computation first, then the others in the order of the file.
    ``str()`` is ``hloidx maps FILE`` (the entry computation and the triage table);
    ``as_dict()`` is ``hloidx maps FILE --format json`` (every computation).

    >>> import hloidx
    >>> a = hloidx.analyze(hloidx.parse_hlo('''
    ... HloModule m
    ... ENTRY e {
    ...   p0 = f32[4,6] parameter(0)
    ...   ROOT t = f32[6,4] transpose(p0), dimensions={1,0}
    ... }'''))
    >>> [i.name for i in a]
    ['p0', 't']
    >>> print(a.instruction("%t").operands[0].output_to_input[0])
    (d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]
    """

    def __init__(self, module: HloModule, result: ModuleAnalysis, spelling: str = "floordiv"):
        self.hlo = module
        self.result = result
        self.spelling = spelling
        rank = {c.name: k for k, c in enumerate(ordered_computations(module))}
        self._ordered = sorted(result.instructions, key=lambda i: rank.get(i.computation, 1 << 30))
        self._by_name: dict[str, InstructionAnalysis] = {}
        for ins in self._ordered:
            self._by_name.setdefault(ins.name, ins)

    # what ``hloidx.analyze`` returned before (a ModuleAnalysis), still there
    @property
    def module(self) -> str:
        """The module's name."""
        return self.result.module

    @property
    def instructions(self) -> list[InstructionAnalysis]:
        """The analysis records in the order of the module (iterate for the entry-first
        order)."""
        return self.result.instructions

    @property
    def errors(self) -> list[Any]:
        return self.result.errors

    @property
    def direction(self) -> str:
        return self.result.direction

    def __repr__(self) -> str:
        return f"<hloidx Analysis of module {self.module}: {len(self)} instructions>"

    def __iter__(self) -> Iterator[InstructionView]:
        return (InstructionView(i, self.spelling, self.direction) for i in self._ordered)

    def __len__(self) -> int:
        return len(self._ordered)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip().lstrip("%") in self._by_name

    def __getitem__(self, name: str) -> InstructionView:
        return self.instruction(name)

    def instruction(self, name: str) -> InstructionView:
        """One instruction by name (``%`` optional), in any computation; an unknown name is
        an error that names the closest ones."""
        bare = name.strip().lstrip("%")
        found = self._by_name.get(bare)
        if found is None:
            close = difflib.get_close_matches(bare, list(self._by_name), n=3, cutoff=0.5)
            raise _not_found(f"no instruction named {bare!r} in module {self.module}", close)
        return InstructionView(found, self.spelling, self.direction)

    def entry(self) -> list[InstructionView]:
        """The instructions of the entry computation, in order."""
        return [v for v in self if _is_entry(v.record)]

    def fusions(self) -> list[InstructionView]:
        """Every fusion instruction, entry computation first."""
        return [v for v in self if v.opcode == "fusion"]

    def summary(self, sort: str = "total", limit: int = 40, group: bool = True) -> Summary:
        """The triage table (``hloidx summary FILE --sort S --limit N``; ``group=False`` is
        ``--no-group``: a row per instruction instead of one per repeated structure) as data;
        an analysis made with ``names="roles"`` shows each operand's named maps
        (``--names roles``)."""
        from ..render.summary import loop_trip_count

        doc = summarize(self.result, sort, group, loop_trip_count)
        if any(op.map_names is not None for i in self.result.instructions for op in i.operands):
            from ..hlo.summary_names import add_named_maps

            add_named_maps(doc, self.result, self.spelling)
        return Summary(doc, limit)

    def _entry_only(self) -> ModuleAnalysis:
        entry = [i for i in self._ordered if _is_entry(i)]
        return ModuleAnalysis(self.module, entry, list(self.errors), self.direction)

    def text(self) -> str:
        from ..render.plain import maps_text

        return maps_text(self._entry_only(), filtered=False, spelling=self.spelling)

    def as_dict(self) -> dict[str, Any]:
        ordered = ModuleAnalysis(self.module, self._ordered, list(self.errors), self.direction)
        return module_to_json(ordered, self.spelling)

    def html(self) -> str:
        doc = summarize(self._entry_only())
        n_rows = sum(len(r["operands"]) for r in doc["rows"])
        parts = [
            f"<h3>module <code>{h.escape(self.module)}</code></h3>",
            f"<p>{len(self):,} instructions analysed ({len(self.entry()):,} in the entry "
            f"computation); the triage table of the entry computation, most element reads "
            f"first:</p>",
            summary_table(doc, HTML_ROWS),
            _totals_html(doc["totals"]),
        ]
        if n_rows > HTML_ROWS:
            parts.append(h.note("every operand of every computation: .to_pandas()"))
        return "".join(parts)

    def to_pandas(self) -> Any:
        """One row per instruction operand, entry computation first: ``computation``,
        ``instruction``, ``opcode``, ``operand`` (its name), ``shape``, ``status``,
        ``distinct`` and ``reads`` (utilization; NaN when unknown), ``maps`` (distinct
        output-to-input maps), ``verdicts`` (the simplifications' verdicts). Needs pandas
        (``pip install -e '.[notebook]'``)."""
        from .frames import frame

        rows = [row for ins in self._ordered for row in operand_rows(ins)]
        return frame(rows, COLUMNS)


def _not_found(message: str, close: list[str]) -> SelectionError:
    """The error of a name not found, naming the closest names in its message."""
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return SelectionError(message + hint, close)


def _is_entry(ins: InstructionAnalysis) -> bool:
    instr = ins.instruction
    return instr is not None and instr.computation is not None and instr.computation.is_entry


def operand_rows(ins: InstructionAnalysis) -> list[dict[str, Any]]:
    out = []
    for op in ins.operands:
        use = op.utilization
        out.append(
            {
                "computation": ins.computation,
                "instruction": ins.name,
                "opcode": ins.opcode,
                "operand": op.name,
                "shape": op.shape,
                "status": op.status or "unknown",
                "distinct": use.distinct if use is not None else None,
                "reads": use.reads if use is not None else None,
                "maps": len([m for m in op.output_to_input if not m.is_known_empty]),
                "verdicts": ", ".join(verdict_label(v) for v in op.verdicts),
            }
        )
    return out


def summary_table(doc: dict[str, Any], limit: int) -> str:
    """The triage table in HTML: the columns of ``hloidx summary``, statuses coloured."""
    # a grouped row stands for `count` equal instructions: say so, as the text table does
    counted = any(row.get("count", 1) > 1 for row in doc["rows"])
    header = ["instruction", *(["count"] if counted else [])]
    header += ["op / kind", "shape", "operand", "distinct", "reads", "status", "maps"]
    rows = []
    total = 0
    for row in doc["rows"]:
        kind = " ".join(x for x in (row["opcode"], row["kind"]) if x)
        if row["blocks"]:
            kind += f" [{row['blocks']}]"
        count = row.get("count", 1)
        for k, o in enumerate(row["operands"]):
            total += 1
            if len(rows) >= limit:
                continue
            rows.append(
                [
                    h.cell(row["name"] if k == 0 else "", mono=True),
                    *([h.cell(f"x{count}" if k == 0 and count > 1 else "")] if counted else []),
                    h.cell(kind if k == 0 else ""),
                    h.cell(row["shape"] if k == 0 else "", mono=True),
                    h.cell(f"{o['name']} {o['shape']}", mono=True),
                    h.cell(o["distinct"]),
                    h.cell(o["reads"]),
                    h.cell(h.status(o["status"]), raw=True),
                    h.cell(f"{o['maps']}{' rt' if o['runtime_variables'] else ''}"),
                ]
            )
    return h.table(header, rows, total=total)


def _totals_html(totals: dict[str, Any]) -> str:
    def listed(d: dict[str, Any]) -> str:
        return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"

    missing = ", ".join(f"{k} ({v} operands UNDEFINED)" for k, v in totals["without_rule"].items())
    return (
        "<p>"
        f"operands: {h.escape(listed(totals['operands_by_status']))}<br>"
        f"simplifications: {h.escape(listed(totals['verdicts']))}<br>"
        f"without a rule: {h.escape(missing or 'none')}</p>"
    )


class Summary(Display):
    """The triage table: ``str()`` is ``hloidx summary FILE --limit N``, ``as_dict()`` its
    JSON (every row), ``.rows`` and ``.totals`` the data.

    >>> import hloidx
    >>> s = hloidx.analyze(hloidx.parse_hlo('''
    ... HloModule m
    ... ENTRY e {
    ...   p0 = f32[4,6] parameter(0)
    ...   ROOT t = f32[6,4] transpose(p0), dimensions={1,0}
    ... }''')).summary()
    >>> [(r["name"], r["operands"][0]["status"]) for r in s.rows]
    [('t', 'exact')]
    """

    def __init__(self, doc: dict[str, Any], limit: int = 40) -> None:
        self.doc = doc
        self.limit = limit

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.doc["rows"]

    @property
    def totals(self) -> dict[str, Any]:
        return self.doc["totals"]

    def __repr__(self) -> str:
        return f"<hloidx Summary of module {self.doc['module']}: {len(self.rows)} rows>"

    def text(self) -> str:
        from ..render.plain import summary_text

        return summary_text(self.doc, self.limit)

    def as_dict(self) -> dict[str, Any]:
        return self.doc

    def html(self) -> str:
        return (
            f"<h3>summary of <code>{h.escape(self.doc['module'])}</code></h3>"
            + summary_table(self.doc, self.limit if self.limit > 0 else 1 << 30)
            + _totals_html(self.totals)
        )


class InstructionView(Display):
    """One analysed instruction: ``.operands`` (:class:`OperandView`), ``.notes``;
    ``str()`` is ``hloidx maps FILE --instruction NAME``, ``as_dict()`` its entry in the JSON
    document; in Jupyter its maps, verdicts, utilization and each operand's heatmap (SVG).

    >>> import hloidx
    >>> a = hloidx.analyze(hloidx.parse_hlo('''
    ... HloModule m
    ... ENTRY e {
    ...   p0 = f32[8] parameter(0)
    ...   ROOT s = f32[4] slice(p0), slice={[0:8:2]}
    ... }'''))
    >>> op = a.instruction("s").operands[0]
    >>> op.status, op.utilization.distinct
    ('exact', 0.5)
    """

    def __init__(self, record: InstructionAnalysis, spelling: str = "floordiv", direction="both"):
        self.record = record
        self.spelling = spelling
        self.direction = direction

    name = property(lambda self: self.record.name)
    opcode = property(lambda self: self.record.opcode)
    shape = property(lambda self: self.record.shape)
    computation = property(lambda self: self.record.computation)
    notes = property(lambda self: list(self.record.notes))
    #: the instruction in the IR (``hloidx.hlo.ir.Instruction``)
    hlo = property(lambda self: self.record.instruction)

    @property
    def operands(self) -> list[OperandView]:
        return [OperandView(op, self) for op in self.record.operands]

    def __repr__(self) -> str:
        where = f"in {self.computation}"
        return f"<hloidx instruction {self.name} = {self.shape} {self.opcode} {where}>"

    def picture(self, operand: int = 0, **options: Any) -> Any:
        """The heatmap of one operand (as ``hloidx.show``)."""
        from .results import picture_of

        return picture_of(self.record, operand, **options)

    def text(self) -> str:
        from ..render.plain import maps_text

        one = ModuleAnalysis(_module_name(self.record), [self.record], [], self.direction)
        return maps_text(one, filtered=True, spelling=self.spelling)

    def as_dict(self) -> dict[str, Any]:
        return instruction_to_json(self.record, self.spelling, self.direction)

    def html(self) -> str:
        from ..pictures.html import instruction_section

        parts, _ = instruction_section(self.record, self.spelling, pictures_left=1 << 30)
        return "".join(parts)

    def to_pandas(self) -> Any:
        """This instruction's rows of :meth:`Analysis.to_pandas`."""
        from .frames import frame

        return frame(operand_rows(self.record), COLUMNS)


def _module_name(ins: InstructionAnalysis) -> str:
    instr = ins.instruction
    comp = instr.computation if instr is not None else None
    module = getattr(comp, "module", None) if comp is not None else None
    return getattr(module, "name", None) or "?"


class OperandView(Display):
    r"""One operand of an instruction: ``.output_to_input`` and ``.input_to_output``
    (IndexingMap objects), ``.status``, ``.utilization``, ``.verdicts`` (labels);
    ``str()`` is the operand's lines of ``hloidx maps --instruction``, ``as_dict()`` its JSON.

    >>> import hloidx
    >>> a = hloidx.analyze("ENTRY e { p = f32[4,6] parameter(0)\n"
    ...                    "ROOT t = f32[6,4] transpose(p), dimensions={1,0} }")
    >>> op = a.instruction("t").operands[0]
    >>> print(op.input_to_output[0])
    (d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 5]
    >>> op.verdicts
    ['proved', 'proved']
    """

    def __init__(self, record: OperandAnalysis, owner: InstructionView) -> None:
        self.record = record
        self.owner = owner

    index = property(lambda self: self.record.index)
    name = property(lambda self: self.record.name)
    shape = property(lambda self: self.record.shape)
    output_to_input = property(lambda self: tuple(self.record.output_to_input))
    input_to_output = property(lambda self: tuple(self.record.input_to_output))
    status = property(lambda self: self.record.status or "unknown")
    utilization = property(lambda self: self.record.utilization)
    notes = property(lambda self: list(self.record.notes))

    @property
    def verdicts(self) -> list[str]:
        return [verdict_label(v) for v in self.record.verdicts]

    def __repr__(self) -> str:
        return f"<hloidx operand {self.index} of {self.owner.name}: {self.name} {self.shape}>"

    def picture(self, **options: Any) -> Any:
        """The heatmap of this operand (as ``hloidx.show``)."""
        return self.owner.picture(self.index, **options)

    def text(self) -> str:
        lines = self.owner.text().split("\n")
        start = next(k for k, t in enumerate(lines) if t.startswith(f"  operand {self.index}: "))
        end = start + 1
        while end < len(lines) and lines[end].startswith("    "):
            end += 1
        return "\n".join(lines[start:end])

    def as_dict(self) -> dict[str, Any]:
        return self.owner.as_dict()["operands"][self.index]

    def html(self) -> str:
        from .maps import map_html

        parts = [h.heading(f"operand {self.index} of {self.owner.name}: {self.name} {self.shape}")]
        parts.append(f"<p>{h.status(self.status)}")
        use = self.utilization
        if use is not None and not use.is_unknown:
            parts.append(
                h.escape(f"; distinct {use.distinct:.4g}, reads {use.reads:.4g} ({use.kind})")
            )
        parts.append("</p>")
        for label, maps in (
            ("output→input", self.output_to_input),
            ("input→output", self.input_to_output),
        ):
            for m in maps:
                parts.append(f"<p>{h.escape(label)}:</p>" + map_html(m, self.owner.spelling))
        pic = self.picture()
        parts.append(pic.html())
        return "".join(parts)


__all__ = ["COLUMNS", "Analysis", "InstructionView", "OperandView", "Summary"]
