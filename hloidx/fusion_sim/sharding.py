"""Per-device shapes from ``sharding=`` annotations, and the collectives the SPMD partitioner
adds where a sharding changes (a simplified ``ShardingPropagation`` + ``SpmdPartitioner``).

A value's sharding is its tiles per dimension (``devices=[4,1]<=[4]``: dimension 0 split four
ways); ``None`` is replicated. Annotations (parameters' ``sharding=``, ``Sharding``
custom-calls) are taken as written; every other value's sharding is propagated forward from
its operands: elementwise ops take their most split operand's tiles (a replicated operand is
sliced locally, no communication), broadcasts, transposes and reshapes carry the split
dimensions they keep, reductions drop theirs. Communication:

- a dot contracting a dimension split on one side only all-gathers that side (FSDP's weight
  all-gather); split alike on both sides, each device holds a partial sum: all-reduce;
- a reduction over a split dimension: all-reduce;
- a value whose annotation splits fewer dimensions than it has: all-gather; split another
  dimension the same number of ways instead: all-to-all;
- a slice or pad keeps the split of every dimension it takes whole or leaves unpadded (each
  device slices or pads its own part; a slice's bounds on those dimensions become the local
  extent); the dimensions it cuts or pads are all-gathered first;
- any other op on a split operand (gathers, scatters, sorts, custom-calls, control flow): its
  operands are all-gathered first and it runs replicated.

Combining and asynchronous collectives are :mod:`.async_collectives`' job. Not simulated: a
reduce-scatter in place of an all-reduce followed by a slice, halo exchanges for windows.
Devices: every group is all devices of the split.
"""

from __future__ import annotations

import re
from dataclasses import replace
from math import prod

from ..hlo.ir import Instruction, Shape
from .ops import ELEMENTWISE

Tiles = tuple[int, ...] | None
_TILED = re.compile(r"devices=\[([\d,]+)\](?:<=\[[\d,]+\]|[\d,]+)?")


def parse_tiles(sharding: str, rank: int) -> Tiles:
    """The tiles of an array's annotation (``last_tile_dim_replicate`` and subgroup dims
    dropped), or None for replicated, maximal and tuple annotations."""
    text = sharding.strip()
    if text.startswith("{{") or "maximal" in text or "manual" in text:
        return None
    match = _TILED.search(text)
    if match is None:
        return None
    tiles = tuple(int(x) for x in match.group(1).split(","))[:rank]
    if len(tiles) < rank or prod(tiles) == 1:
        return None
    return tiles


def _local(shape: Shape, tiles: Tiles) -> Shape:
    if tiles is None or not shape.is_array:
        return shape
    dims = tuple(-(-d // t) for d, t in zip(shape.dims, tiles, strict=True))
    return replace(shape, dims=dims, layout=shape.layout)


class Partitioner:
    """Rewrites one flattened computation's instructions to per-device shapes."""

    def __init__(self, devices: int) -> None:
        self.devices = devices
        self.channel = 0
        self.reducers: set[str] = set()
        self.added: list[str] = []
        self.tuple_tiles: dict[int, list[Tiles]] = {}
        #: attributes rewritten for a device's part (a slice's bounds on split dimensions)
        self.local_attributes: dict[int, dict[str, str]] = {}

    def __call__(self, instrs: list[Instruction], annotations: dict[int, str]):
        tiles: dict[int, Tiles] = {}
        new: dict[int, Instruction] = {}
        out: list[Instruction] = []
        for ins in instrs:
            operands = [new[id(o)] for o in ins.operands]
            t, operands, partial = self._rule(ins, operands, tiles, out)
            shape = _local(ins.shape, t)
            if ins.opcode == "reduce" and ins.shape.is_tuple and t is not None:
                shape = Shape("tuple", tuple_shapes=tuple(_local(e, t) for e in ins.shape.leaves()))
                self.tuple_tiles[id(ins)] = [t] * len(ins.shape.leaves())
            if ins.opcode == "tuple":
                shape = Shape("tuple", tuple_shapes=tuple(o.shape for o in operands))
            elif ins.opcode == "get-tuple-element" and operands[0].shape.is_tuple:
                index = ins.tuple_index or 0
                shape = operands[0].shape.tuple_shapes[index]
                held = self.tuple_tiles.get(id(operands[0]))
                t = held[index] if held is not None and index < len(held) else None
            copy = Instruction(
                name=ins.name,
                opcode=ins.opcode,
                shape=shape,
                operands=operands,
                attributes={**ins.attributes, **self.local_attributes.pop(id(ins), {})},
                literal=ins.literal,
                computation=ins.computation,
            )
            out.append(copy)
            tiles[id(copy)] = t
            if ins.opcode in ("tuple", "reduce") and id(ins) in self.tuple_tiles:
                self.tuple_tiles[id(copy)] = self.tuple_tiles.pop(id(ins))
            value = copy
            if partial:
                value = self._all_reduce(copy, out)
                tiles[id(value)] = t
            wanted = annotations.get(id(ins))
            if wanted is not None and ins.shape.is_array:
                value = self._reshard(value, parse_tiles(wanted, ins.shape.rank), tiles, out)
            new[id(ins)] = value
        self.last = new
        return out

    # -- the rules ---------------------------------------------------------------------
    def _rule(self, ins, operands, tiles, out):
        op = ins.opcode
        own = ins.attributes.get("sharding")
        if op == "parameter":
            return (parse_tiles(own, ins.shape.rank) if own else None), operands, False
        ts = [tiles.get(id(o)) for o in operands]
        if op == "get-tuple-element":
            return None, operands, False
        if all(t is None for t in ts):
            return None, operands, False
        if op in ELEMENTWISE and ins.shape.is_array:
            best = max((t for t in ts if t is not None), key=prod)
            return best, [self._reshard(o, best, tiles, out) for o in operands], False
        if op == "broadcast" and ts[0] is not None:
            result = [1] * ins.shape.rank
            for i, d in enumerate(ins.dimensions or ()):
                result[d] = ts[0][i]
            return _tiles(result), operands, False
        if op == "transpose" and ts[0] is not None:
            return _tiles([ts[0][d] for d in ins.dimensions or ()]), operands, False
        if op in ("reshape", "bitcast") and ts[0] is not None:
            mapped = _reshape_tiles(ins.operands[0].shape, ins.shape, ts[0])
            if mapped is not None:
                return mapped, operands, False
        if op == "reduce" and ts[0] is not None:
            inputs = len(operands) // 2
            reduced = set(ins.dimensions or ())
            kept = [t for d, t in enumerate(ts[0]) if d not in reduced]
            partial = any(ts[0][d] > 1 for d in reduced)
            if inputs == 1 or not partial:
                operands = [
                    self._reshard(o, ts[0], tiles, out) if n < inputs else o
                    for n, o in enumerate(operands)
                ]
                return _tiles(kept), operands, partial
        if op == "dot" and len(operands) == 2:
            return self._dot(ins, operands, ts, tiles, out)
        if op in ("slice", "pad") and ts[0] is not None:
            return self._window(ins, operands, ts[0], tiles, out)
        if op == "tuple":  # results and loop state keep each device's part
            self.tuple_tiles[id(ins)] = ts
            return None, operands, False
        # anything else runs replicated on gathered operands
        return None, [self._reshard(o, None, tiles, out) for o in operands], False

    def _dot(self, ins, operands, ts, tiles, out):
        numbers = ins.dot_dimension_numbers
        lt = list(ts[0] or (1,) * operands[0].shape.rank)
        rt = list(ts[1] or (1,) * operands[1].shape.rank)
        partial = False
        for a, b in zip(numbers.lhs_contracting, numbers.rhs_contracting, strict=False):
            if lt[a] == rt[b] and lt[a] > 1:
                partial = True
            elif lt[a] != rt[b]:
                lt[a] = rt[b] = 1
        for a, b in zip(numbers.lhs_batch, numbers.rhs_batch, strict=False):
            lt[a] = rt[b] = max(lt[a], rt[b])
        lhs = self._reshard(operands[0], _tiles(lt), tiles, out)
        rhs = self._reshard(operands[1], _tiles(rt), tiles, out)
        lfree = [
            d for d in range(len(lt)) if d not in (*numbers.lhs_batch, *numbers.lhs_contracting)
        ]
        rfree = [
            d for d in range(len(rt)) if d not in (*numbers.rhs_batch, *numbers.rhs_contracting)
        ]
        result = [lt[d] for d in numbers.lhs_batch] + [lt[d] for d in lfree]
        result += [rt[d] for d in rfree]
        if prod(result) * (prod(lt[a] for a in numbers.lhs_contracting) if partial else 1) > (
            self.devices
        ):
            # both free sides split: the partitioner would gather one of them
            rhs = self._reshard(rhs, None, tiles, out)
            result = [lt[d] for d in numbers.lhs_batch] + [lt[d] for d in lfree]
            result += [1] * len(rfree)
        return _tiles(result), [lhs, rhs], partial

    def _window(self, ins, operands, have: Tiles, tiles, out):
        """A slice or pad keeps the split of every dimension it leaves whole (XLA's SPMD
        partitioner slices or pads each device's part there); only the dimensions it cuts or
        pads are gathered first."""
        dims = ins.operands[0].shape.dims
        untouched = _untouched_dims(ins, dims)
        if untouched is None:
            return None, [self._reshard(o, None, tiles, out) for o in operands], False
        keep = _tiles([t if d in untouched else 1 for d, t in enumerate(have or ())])
        operands = [self._reshard(operands[0], keep, tiles, out), *operands[1:]]
        if ins.opcode == "slice" and keep is not None:
            bounds = [
                f"[0:{n // t}]" if t > 1 else b
                for n, t, b in zip(dims, keep, _SLICE.findall(ins.attributes["slice"]), strict=True)
            ]
            self.local_attributes[id(ins)] = {"slice": "{" + ", ".join(bounds) + "}"}
        return keep, operands, False

    # -- communication -----------------------------------------------------------------
    def _reshard(self, value: Instruction, want: Tiles, tiles, out) -> Instruction:
        have = tiles.get(id(value))
        if have == want or not value.shape.is_array:
            return value
        rank = value.shape.rank
        h = list(have or (1,) * rank)
        w = list(want or (1,) * rank)
        lost = [d for d in range(rank) if h[d] > 1 and w[d] == 1]
        gained = [d for d in range(rank) if w[d] > 1 and h[d] == 1]
        if lost and gained and len(lost) == 1 and len(gained) == 1 and h[lost[0]] == w[gained[0]]:
            return self._collective("all-to-all", value, w, tiles, out, dimension=lost[0])
        for d in range(rank):
            if h[d] > w[d]:
                h[d] = 1
                value = self._collective("all-gather", value, list(h), tiles, out, dimension=d)
        if h != w and have is None:
            local = self._localize(value, _tiles(w), tiles, out, depth=0)
            if local is not None:
                return local
        if h != w:  # split further locally: each device slices its part (no communication)
            global_dims = [n * t for n, t in zip(value.shape.dims, h, strict=True)]
            local = [-(-g // t) for g, t in zip(global_dims, w, strict=True)]
            sliced = Instruction(
                name=self._name("slice.spmd"),
                opcode="slice",
                shape=replace(value.shape, dims=tuple(local)),
                operands=[value],
                attributes={"slice": "{" + ", ".join(f"[0:{n}]" for n in local) + "}"},
            )
            out.append(sliced)
            tiles[id(sliced)] = _tiles(w)
            value = sliced
        return value

    def _localize(self, value, want, tiles, out, depth):
        """A replicated broadcast, iota, constant or elementwise op computed at the tiled
        shape instead (what the partitioner does with a value only split consumers read)."""
        op = value.opcode
        if depth > 8 or want is None or tiles.get(id(value)) is not None:
            return None
        if op == "broadcast":
            inner = [want[d] for d in value.dimensions or ()]
            operand = value.operands[0]
            if _tiles(inner) is not None:
                operand = self._localize(operand, _tiles(inner), tiles, out, depth + 1)
                if operand is None:
                    return None
            operands = [operand]
        elif op == "iota":
            operands = []
        elif op in ELEMENTWISE and value.shape.is_array:
            operands = []
            for o in value.operands:
                local = o if not o.shape.dims else self._localize(o, want, tiles, out, depth + 1)
                if local is None:
                    return None
                operands.append(local)
        else:
            return None
        global_dims = value.shape.dims
        made = Instruction(
            name=self._name(value.name.split(".spmd")[0] + ".spmd"),
            opcode=op,
            shape=replace(
                value.shape, dims=tuple(-(-g // t) for g, t in zip(global_dims, want, strict=True))
            ),
            operands=operands,
            attributes=value.attributes,
            literal=value.literal,
            computation=value.computation,
        )
        out.append(made)
        tiles[id(made)] = want
        return made

    def _collective(self, op, value, after, tiles, out, dimension):
        before = tiles.get(id(value)) or (1,) * value.shape.rank
        ways = before[dimension]
        dims = list(value.shape.dims)
        dims[dimension] *= ways
        if op == "all-to-all":  # the dimension split instead
            gained = next(d for d, t in enumerate(after) if t > 1 and before[d] == 1)
            dims[gained] = -(-dims[gained] // after[gained])
        attributes = self._group(ways)
        attributes["dimensions"] = "{" + str(dimension) + "}"
        if op == "all-to-all":
            # XLA's all-to-all keeps its operand's shape (the same bytes, exchanged); the
            # partitioner's reshape to the new split follows it
            del attributes["use_global_device_ids"]
            exchanged = Instruction(
                name=self._name(op + ".spmd"),
                opcode=op,
                shape=value.shape,
                operands=[value],
                attributes=attributes,
            )
            out.append(exchanged)
            op, value, attributes = "reshape", exchanged, {}
        made = Instruction(
            name=self._name(op + ".spmd"),
            opcode=op,
            shape=replace(value.shape, dims=tuple(dims)),
            operands=[value],
            attributes=attributes,
        )
        out.append(made)
        tiles[id(made)] = _tiles(after)
        return made

    def _all_reduce(self, value: Instruction, out) -> Instruction:
        reducer = f"sum.spmd.{value.shape.element_type}"
        self.reducers.add(value.shape.element_type)
        attributes = self._group(self.devices)
        attributes["to_apply"] = reducer
        made = Instruction(
            name=self._name("all-reduce.spmd"),
            opcode="all-reduce",
            shape=value.shape,
            operands=[value],
            attributes=attributes,
        )
        out.append(made)
        return made

    def _group(self, ways: int) -> dict[str, str]:
        self.channel += 1
        groups = [
            "{" + ",".join(str(g * ways + i) for i in range(ways)) + "}"
            for g in range(max(1, self.devices // ways))
        ]
        return {
            "channel_id": str(self.channel),
            "replica_groups": "{" + ",".join(groups) + "}",
            "use_global_device_ids": "true",
        }

    def _name(self, stem: str) -> str:
        self.added.append(stem)
        return f"{stem}.{len(self.added)}"

    def reducer_text(self) -> list[str]:
        return [
            f"sum.spmd.{t} {{\n  x = {t}[] parameter(0)\n  y = {t}[] parameter(1)\n"
            f"  ROOT s = {t}[] add(x, y)\n}}\n"
            for t in sorted(self.reducers)
        ]


def _tiles(values) -> Tiles:
    values = tuple(values)
    return None if prod(values) <= 1 else values


def _reshape_tiles(source: Shape, target: Shape, tiles: tuple[int, ...]) -> Tiles:
    """The target's tiles when every split source dimension is a target dimension of the
    same size starting at the same element stride (the common batch-dimension case)."""

    def starts(dims):
        out, stride = {}, 1
        for d in range(len(dims) - 1, -1, -1):
            out[(stride, dims[d])] = d
            stride *= dims[d]
        return out

    src = starts(source.dims)
    dst = starts(target.dims)
    result = [1] * target.rank
    for key, d in src.items():
        if tiles[d] > 1:
            if key not in dst:
                return None
            result[dst[key]] = tiles[d]
    return _tiles(result)


_SLICE = re.compile(r"\[[^\]]*\]")


def _untouched_dims(ins: Instruction, dims: tuple[int, ...]) -> set[int] | None:
    """The dimensions a slice takes whole (from 0 to the end, stride 1) or a pad leaves
    unpadded; None where the attribute cannot be read."""
    if ins.opcode == "slice":
        spans = _SLICE.findall(ins.attributes.get("slice", ""))
        if len(spans) != len(dims):
            return None
        whole = set()
        for d, span in enumerate(spans):
            parts = span.strip("[]").split(":")
            stride_one = len(parts) == 2 or parts[2].strip() == "1"
            if parts[0].strip() == "0" and parts[1].strip() == str(dims[d]) and stride_one:
                whole.add(d)
        return whole
    padding = ins.attributes.get("padding", "").split("x")
    if len(padding) != len(dims):
        return None
    return {d for d, p in enumerate(padding) if all(v.strip() == "0" for v in p.split("_"))}
