"""Deterministic mutations that make a valid HLO module invalid for XLA, one instruction each.

Each :class:`Mutation` names the module it came from, the instruction it breaks, the kind of
breakage, the 1-based line that changed and the mutated text. Kinds:

* ``result-shape``: one dimension of an instruction's result shape grows by one;
* ``slice-range``: a slice's limit runs past the operand's dimension;
* ``dimension``: an entry of ``dimensions={...}`` names a dimension the operand does not have;
* ``opcode``: the opcode is misspelled (two letters swapped);
* ``operand-count``: an operand of a fixed-arity op is dropped or repeated;
* ``cut``: the file ends inside an instruction's operand list (a dump cut off, a paste that
  lost its tail): after ``opcode(`` and its first operand and comma when it has several, in
  the module's last instruction of a checked opcode.

Used by ``tests/test_mutations.py`` and by ``tests/data/mutations/check_with_xla.py``, which
records what XLA itself says of every mutation (``xla_verdicts.json``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import paths

import hloidx
from hloidx.hlo.ir import Instruction
from hloidx.hlo.opcodes import XLA_OPCODES

#: opcodes whose result shape XLA derives from operands and attributes (hloidx checks them)
SHAPED = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "negate", "exponential",
    "tanh", "log", "sqrt", "rsqrt", "abs", "select", "compare", "convert", "broadcast",
    "transpose", "slice", "pad", "concatenate", "reduce", "reduce-window", "dot", "reshape",
    "reverse", "dynamic-slice", "dynamic-update-slice", "gather", "convolution",
}  # fmt: skip
FIXED_ARITY = {op for op, n in XLA_OPCODES.items() if n and n >= 1 and op in SHAPED}
DIMENSIONED = {"broadcast", "transpose", "reduce", "reverse"}


@dataclass(frozen=True)
class Mutation:
    source: str  # file the module came from, relative to the repository
    instruction: str
    kind: str
    line: int  # 1-based, in the mutated text
    text: str

    @property
    def key(self) -> str:
        return f"{self.source}:{self.instruction}:{self.kind}"


def module_files() -> list[Path]:
    """Every sample, and the corpus modules small enough to analyse in a blink."""
    small = [p for p in sorted(paths.CORPUS.glob("*.hlo")) if p.stat().st_size < 60_000]
    return sorted(paths.SAMPLES.rglob("*.hlo")) + small


def _line_of(text: str, instr: Instruction) -> int:
    return text.count("\n", 0, instr.span.start) + 1 if instr.span else 0


def _swap(opcode: str) -> str | None:
    for k in range(len(opcode) - 2, 0, -1):
        a, b = opcode[k], opcode[k + 1]
        if a != b and a.isalpha() and b.isalpha():
            swapped = opcode[:k] + b + a + opcode[k + 2 :]
            if swapped not in XLA_OPCODES:
                return swapped
    return None


def _mutate(text: str, instr: Instruction, kind: str) -> str | None:
    """``text`` with ``instr`` broken in the given way, or None when that kind does not apply."""
    span = instr.span
    if span is None:
        return None
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.start)
    line_end = len(text) if line_end < 0 else line_end
    line = text[line_start:line_end]
    head = re.match(
        r"(\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*)([a-z0-9]+)\[([\d,\s]*)\](\{[\d,]*\})?(\s*)([\w\-]+)\(",
        line,
    )
    if head is None:
        return None
    prefix, etype, dims, layout, gap, opcode = head.groups()
    rest = line[head.end() :]
    new = None
    if kind == "result-shape" and dims.strip():
        values = [int(x) for x in dims.split(",")]
        # a broadcast's new dimensions may have any size: grow one that maps an operand's
        which = (instr.dimensions or (None,))[-1] if opcode == "broadcast" else -1
        if which is None:
            return None
        values[which] += 1
        new = f"{prefix}{etype}[{','.join(map(str, values))}]{layout or ''}{gap}{opcode}({rest}"
    elif kind == "opcode":
        swapped = _swap(opcode)
        if swapped:
            new = f"{prefix}{etype}[{dims}]{layout or ''}{gap}{swapped}({rest}"
    elif kind == "slice-range" and opcode == "slice":
        new = re.sub(
            r"slice=\{\[(\d+):(\d+)", lambda m: f"slice={{[{m[1]}:{int(m[2]) + 3}", line, count=1
        )
    elif kind == "dimension" and opcode in DIMENSIONED:
        rank = max(instr.shape.rank, *(o.shape.rank for o in instr.operands if o.shape.is_array))
        new = re.sub(r"dimensions=\{(\d+)", lambda m: f"dimensions={{{rank + 2}", line, count=1)
    elif kind == "operand-count" and opcode in FIXED_ARITY:
        args = re.match(r"([^()]*)\)", rest)
        if args and args.group(1).strip():
            names = [a.strip() for a in args.group(1).split(",")]
            changed = names[:-1] if len(names) > 1 else [*names, names[0]]
            new = f"{prefix}{etype}[{dims}]{layout or ''}{gap}{opcode}({', '.join(changed)}{rest[args.end() - 1 :]}"
    if new is None or new == line:
        return None
    return text[:line_start] + new + text[line_end:]


KINDS = ("result-shape", "opcode", "slice-range", "dimension", "operand-count")


def _cut(text: str, instr: Instruction) -> str | None:
    """``text`` ending inside ``instr``'s operand list, or None when it has no operand list."""
    span = instr.span
    if span is None or not instr.operands:
        return None
    call = re.compile(re.escape(instr.opcode) + r"\(").search(text, span.start, span.end)
    if call is None:
        return None
    end = call.end()
    if len(instr.operands) > 1:
        comma = text.find(",", end, span.end)
        end = comma + 1 if comma > 0 else end
    return text[:end]


def generate(limit_per_module: int = 12) -> list[Mutation]:
    out: list[Mutation] = []
    root = paths.ROOT
    for path in module_files():
        text = path.read_text(encoding="utf-8")
        module = hloidx.parse_hlo(text, str(path))
        made = 0
        for instr in module.instructions():
            if instr.opcode not in SHAPED or made >= limit_per_module:
                continue
            for kind in KINDS:
                mutated = _mutate(text, instr, kind)
                if mutated is None:
                    continue
                out.append(
                    Mutation(
                        str(path.relative_to(root)),
                        instr.name,
                        kind,
                        _line_of(text, instr),
                        mutated,
                    )
                )
                made += 1
        shaped = [i for i in module.instructions() if i.opcode in SHAPED and i.operands]
        for instr in shaped[-1:]:  # one per module: each costs a whole analysis
            cut = _cut(text, instr)
            if cut is not None:
                out.append(
                    Mutation(
                        str(path.relative_to(root)), instr.name, "cut", _line_of(text, instr), cut
                    )
                )
    return out
