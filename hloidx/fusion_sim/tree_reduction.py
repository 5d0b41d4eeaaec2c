"""XLA's ``TreeReductionRewriter`` (run before fusion in ``gpu_compiler.cc``): a reduction
too large for one race-free kernel becomes two. ``ReductionIsRaceFree``: a row reduction
(the minor dimension reduced) up to 1024 threads x a tile of 16 = 16384 elements, a column
reduction up to 32 x 128 = 4096 rows. A larger one is padded with its init value to a
multiple of that bound, reshaped to [outer, bound], reduced over the bound, then over outer.
"""

from __future__ import annotations

from dataclasses import replace
from math import prod

from ..hlo.ir import Instruction

ROW_BOUND = 1024 * 16
COLUMN_BOUND = 32 * 128


def _make(name, opcode, shape, operands, attributes, like) -> Instruction:
    return Instruction(
        name=name,
        opcode=opcode,
        shape=shape,
        operands=operands,
        attributes=attributes,
        computation=like.computation,
    )


def split_large_reductions(instrs: list[Instruction]) -> tuple[list[Instruction], dict]:
    """The instructions with every over-large single-input reduction split in two (users
    rewired in place: these are the simulation's own copies); the replacements by id."""
    replaced: dict[int, Instruction] = {}
    out: list[Instruction] = []
    for ins in instrs:
        if replaced:
            ins.operands = [replaced.get(id(o), o) for o in ins.operands]
        split = _split(ins) if ins.opcode == "reduce" and len(ins.operands) == 2 else None
        if split is None:
            out.append(ins)
            continue
        out.extend(split)
        replaced[id(ins)] = split[-1]
    return out, replaced


def _split(ins: Instruction) -> list[Instruction] | None:
    x, init = ins.operands
    if not ins.shape.is_array or not x.shape.is_array:
        return None
    dims = list(x.shape.dims)
    reduced = sorted(ins.dimensions or ())
    if not reduced or reduced != list(range(reduced[0], reduced[-1] + 1)):
        return None
    first, last = reduced[0], reduced[-1]
    size = prod(dims[d] for d in reduced)
    row = last == len(dims) - 1
    bound = ROW_BOUND if row else COLUMN_BOUND
    if size <= bound:
        return None
    outer = -(-size // bound)
    made: list[Instruction] = []
    collapsed = [*dims[:first], size, *dims[last + 1 :]]
    value = x
    if collapsed != dims:
        value = _make(
            ins.name + ".tree.collapse",
            "reshape",
            replace(x.shape, dims=tuple(collapsed), layout=None, dynamic=()),
            [value],
            {},
            ins,
        )
        made.append(value)
    if outer * bound != size:
        padded = list(collapsed)
        padded[first] = outer * bound
        config = "x".join(
            f"0_{outer * bound - size}" if d == first else "0_0" for d in range(len(collapsed))
        )
        value = _make(
            ins.name + ".tree.pad",
            "pad",
            replace(x.shape, dims=tuple(padded), layout=None, dynamic=()),
            [value, init],
            {"padding": config},
            ins,
        )
        made.append(value)
    split_dims = [*collapsed[:first], outer, bound, *collapsed[first + 1 :]]
    value = _make(
        ins.name + ".tree.split",
        "reshape",
        replace(x.shape, dims=tuple(split_dims), layout=None, dynamic=()),
        [value],
        {},
        ins,
    )
    made.append(value)
    partial_dims = [*collapsed[:first], outer, *collapsed[first + 1 :]]
    attributes = dict(ins.attributes)
    attributes["dimensions"] = "{" + str(first + 1) + "}"
    value = _make(
        ins.name + ".tree",
        "reduce",
        replace(ins.shape, dims=tuple(partial_dims), layout=None, dynamic=()),
        [value, init],
        attributes,
        ins,
    )
    made.append(value)
    attributes = dict(ins.attributes)
    attributes["dimensions"] = "{" + str(first) + "}"
    made.append(_make(ins.name, "reduce", ins.shape, [value, init], attributes, ins))
    return made
