"""Which instructions a command shows: filters by name (globs, with or without ``%``), opcode,
kind and computation, the entry computation first. A filter that matches nothing is an error
that names the closest existing names."""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from ..errors import HloidxError
from .ir import Computation, HloModule, Instruction

KINDS = ("fusion", "entry")


class SelectionError(HloidxError):
    """A filter matched nothing (bad usage: exit code 2); ``close`` holds the nearest names."""

    def __init__(self, message: str, close: list[str] | None = None) -> None:
        super().__init__(message)
        self.close = close or []

    @property
    def hint(self) -> str:
        return f"; did you mean {', '.join(self.close)}?" if self.close else ""


def _bare(pattern: str) -> str:
    return pattern.strip().lstrip("%")


def _matching(patterns: Iterable[str], names: list[str], what: str) -> set[str]:
    """The names matched by any pattern; a pattern that matches none is an error."""
    found: set[str] = set()
    for raw in patterns:
        pattern = _bare(raw)
        hits = {n for n in names if fnmatchcase(n, pattern)}
        if not hits:
            import difflib  # only for a name that matches nothing: start-up counts

            close = difflib.get_close_matches(pattern, names, n=3, cutoff=0.5)
            raise SelectionError(f"no {what} matches {raw!r}", close)
        found |= hits
    return found


def ordered_computations(module: HloModule) -> list[Computation]:
    """The entry computation first, then the others in the order of the file."""
    comps = list(module.computations.values())
    return sorted(comps, key=lambda c: not c.is_entry)


def called_only(module: HloModule) -> set[str]:
    """Names of computations that are only called (fused computations, reducers, bodies)."""
    return {c.name for c in module.computations.values() if not c.is_entry}


def select_instructions(
    module: HloModule,
    *,
    instructions: Iterable[str] = (),
    computations: Iterable[str] = (),
    opcodes: Iterable[str] = (),
    kind: str | None = None,
    all_computations: bool = False,
) -> list[Instruction]:
    """The instructions to analyse and show, entry computation first.

    Without filters, the entry computation only (``all_computations`` adds fused computations
    and reducers); naming an instruction or a computation selects it wherever it is.
    """
    instructions, computations, opcodes = list(instructions), list(computations), list(opcodes)
    if kind is not None and kind not in KINDS:
        raise SelectionError(f"--kind is one of {', '.join(KINDS)}, not {kind!r}")
    comps = ordered_computations(module)
    wanted_comps = (
        _matching(computations, [c.name for c in comps], "computation") if computations else None
    )
    every = [i for c in comps for i in c.instructions]
    wanted_names = (
        _matching(instructions, sorted({i.name for i in every}), "instruction")
        if instructions
        else None
    )
    if opcodes:
        present = sorted({i.opcode for i in every})
        wanted_ops = _matching(opcodes, present, "opcode in this module")
    else:
        wanted_ops = None
    out = []
    for comp in comps:
        if wanted_comps is not None and comp.name not in wanted_comps:
            continue
        named = wanted_comps is not None or wanted_names is not None
        if not (comp.is_entry or all_computations or named or kind == "fusion"):
            continue
        if kind == "entry" and not comp.is_entry:
            continue
        for instr in comp.instructions:
            if wanted_names is not None and instr.name not in wanted_names:
                continue
            if wanted_ops is not None and instr.opcode not in wanted_ops:
                continue
            if kind == "fusion" and instr.opcode != "fusion":
                continue
            out.append(instr)
    if not out:
        raise SelectionError("the filters together match no instruction")
    return out
