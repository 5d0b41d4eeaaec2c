"""Collectives on one host from XLA's measured NVLink tables, as XLA's
``CollectiveInterpolator`` (``xla/service/gpu/model/collective_interpolator.cc``) estimates them.

XLA profiled F32 all-reduce, all-gather, reduce-scatter and all-to-all on 8-GPU ``sm_90`` and
``sm_100`` hosts (package data ``data/xla_collective_tables.json``, converted by
``bench/convert_xla_tables.py``). An estimate is ``bytes / throughput``, the throughput read

1. exactly: the profiles of the same opcode, the same replica groups (explicit groups count as
   the iota list of their count and size, as XLA canonicalises them) and, for the reducing
   collectives, the same element type; the transfer size rounded to the closest power of two
   (ties up) and clamped to 1 KiB..1 GiB;
2. else from the fallback of the synchronous opcode and the communication type (single host,
   multi-host world level, multi-host non-world level): closest powers of two of the size and
   of the group size, clamped to 1 KiB..1 GiB and 2..8 devices.

Bytes are XLA's ``GpuHloCostAnalysis::BytesTransferred`` (a float, read back as an integer).
Also here: XLA's replica-group helpers (group mode, participant counts, ``CommunicationType``)
that the multi-host model shares.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np

from ..hlo.element_types import element_bytes
from .matmul_table import duration_ns

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape

MIN_BYTES = 1 << 10
MAX_BYTES = 1 << 30
MIN_DEVICES = 2
MAX_DEVICES = 8

SINGLE_HOST = "single-host"
MULTI_HOST_WORLD = "multi-host world-level"
MULTI_HOST_NON_WORLD = "multi-host non-world-level"

_ACCUMULATING = frozenset(
    {"all-reduce", "all-reduce-start", "reduce-scatter", "reduce-scatter-start"}
)
#: ``reduce-scatter-start``: an async reduce-scatter as the HLO text prints it (its async
#: computation folded into the start); XLA sees the ``async-start`` that wraps it
_SYNC = {
    "all-gather-start": "all-gather",
    "all-reduce-start": "all-reduce",
    "reduce-scatter-start": "reduce-scatter",
}


class CollectiveError(ValueError):
    """XLA cannot estimate this collective (the message says why)."""


# -- replica groups --------------------------------------------------------------------------

_IOTA = re.compile(r"^\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?$")


@dataclass(frozen=True)
class DeviceList:
    """A collective's replica groups: explicit, or XLA's iota form ``[G,S]<=[dims]T(perm)``."""

    groups: tuple[tuple[int, ...], ...]
    #: (number of groups, devices per group) when written as an iota list
    iota: tuple[int, int] | None = None


def iota_groups(
    count: int, size: int, dims: tuple[int, ...] | None = None, perm: tuple[int, ...] | None = None
) -> tuple[tuple[int, ...], ...]:
    dims = dims or (count * size,)
    perm = perm or tuple(range(len(dims)))
    ids = np.arange(prod(dims)).reshape(dims).transpose(perm).reshape(count, size)
    return tuple(tuple(int(x) for x in row) for row in ids)


def device_list(instr: Instruction) -> DeviceList:
    text = instr.attributes.get("replica_groups", "").replace(" ", "")
    m = _IOTA.match(text)
    if m:
        count, size = int(m.group(1)), int(m.group(2))
        dims = tuple(int(x) for x in m.group(3).split(","))
        perm = tuple(int(x) for x in m.group(4).split(",")) if m.group(4) else None
        return DeviceList(iota_groups(count, size, dims, perm), (count, size))
    groups = tuple(
        tuple(int(x) for x in g.split(",") if x) for g in re.findall(r"\{([\d,]*)\}", text)
    )
    return DeviceList(tuple(g for g in groups if g))


def _module_int(instr: Instruction, key: str) -> int:
    module = instr.computation.module if instr.computation is not None else None
    value = module.attributes.get(key, "") if module is not None else ""
    return int(value) if value.isdigit() else 1


def group_mode(instr: Instruction) -> str:
    """XLA's ``GetCollectiveOpGroupMode`` from ``channel_id`` and ``use_global_device_ids``."""
    has_channel = "channel_id" in instr.attributes
    global_ids = instr.attributes.get("use_global_device_ids")
    if not has_channel:
        if global_ids == "true":
            raise CollectiveError("use_global_device_ids=true needs a channel_id")
        return "cross-replica"
    if global_ids is None:
        return "cross-partition"
    return "flattened-id" if global_ids == "true" else "cross-replica-and-partition"


def participant_counts(instr: Instruction) -> list[int]:
    """XLA's ``GetPariticipantCountsForReplicaGroups``."""
    replicas = _module_int(instr, "replica_count")
    partitions = _module_int(instr, "num_partitions")
    mode = group_mode(instr)
    groups = [len(g) for g in device_list(instr).groups]
    if not groups:
        if mode == "flattened-id":
            raise CollectiveError("replica groups cannot be empty with use_global_device_ids")
        groups = [partitions if mode == "cross-partition" else replicas]
    if mode == "cross-replica":
        return [g for g in groups for _ in range(partitions)]
    if mode == "cross-replica-and-partition":
        return [g * partitions for g in groups]
    return groups


def group_count_and_size(instr: Instruction) -> tuple[int, int] | None:
    """XLA's ``GetReplicaGroupCountAndSize``: None when groups differ in size."""
    devices = device_list(instr)
    if devices.iota is not None:
        return devices.iota
    counts = participant_counts(instr)
    if any(c != counts[0] for c in counts):
        return None
    return len(counts), counts[0]


def canonical_groups(instr: Instruction) -> tuple[tuple[int, ...], ...] | None:
    """XLA's ``CanonicalDeviceList``: the iota list as written, else the iota list of the
    groups' count and size (not the explicit groups)."""
    devices = device_list(instr)
    if devices.iota is not None:
        return devices.groups
    count_size = group_count_and_size(instr)
    return None if count_size is None else iota_groups(*count_size)


def communication_type(instr: Instruction, gpus_per_node: int) -> str:
    """XLA's ``CommunicationType`` (``collective_ops_utils.cc``): where each group's ranks
    live, node = rank // gpus_per_node."""
    if instr.opcode.startswith("collective-permute"):
        targets: dict[int, set[int]] = {}
        for source, target in source_target_pairs(instr):
            targets.setdefault(source // gpus_per_node, set()).add(target // gpus_per_node)
        for node, nodes in targets.items():
            if len(nodes) > 1 or node not in nodes:
                return MULTI_HOST_NON_WORLD
        return SINGLE_HOST
    counts: dict[int, int] = {}
    for group in device_list(instr).groups:
        buffer: dict[int, int] = {}
        for rank in group:
            buffer[rank // gpus_per_node] = buffer.get(rank // gpus_per_node, 0) + 1
        if counts and sorted(buffer.values()) != sorted(counts.values()):
            raise CollectiveError("non-homogeneous replica groups")
        counts = counts or buffer
    replicas = _module_int(instr, "replica_count")
    single = len(counts) == 1 or (not counts and replicas <= gpus_per_node)
    if single:
        return SINGLE_HOST
    if not counts or all(c == gpus_per_node for c in counts.values()):
        return MULTI_HOST_WORLD
    return MULTI_HOST_NON_WORLD


def source_target_pairs(instr: Instruction) -> list[tuple[int, int]]:
    text = instr.attributes.get("source_target_pairs", "").replace(" ", "")
    return [(int(a), int(b)) for a, b in re.findall(r"\{(\d+),(\d+)\}", text)]


# -- bytes -----------------------------------------------------------------------------------


def _array_bytes(shape: Shape, skip_index: int | None = None) -> int:
    if shape.is_tuple:
        return sum(
            _array_bytes(s) for i, s in enumerate(shape.tuple_shapes or ()) if i != skip_index
        )
    return shape.num_elements() * element_bytes(shape.element_type)


def wrapped_instruction(instr: Instruction) -> Instruction | None:
    """The collective an ``async-start`` wraps."""
    bodies = instr.called_computations.get("calls") or []
    return bodies[0].root if bodies else None


def sync_opcode(instr: Instruction) -> str:
    """XLA's ``AsyncToSyncOpcode``: all-gather-start, all-reduce-start and an async
    reduce-scatter as their synchronous opcode; anything else unchanged."""
    if instr.opcode == "async-start":
        inner = wrapped_instruction(instr)
        if inner is not None and inner.opcode == "reduce-scatter":
            return "reduce-scatter"
        return instr.opcode
    return _SYNC.get(instr.opcode, instr.opcode)


def bytes_transferred(instr: Instruction) -> int:
    """XLA's ``GpuHloCostAnalysis::BytesTransferred`` (a float32 property, read as int64)."""
    op = instr.opcode
    if op == "async-start":
        inner = wrapped_instruction(instr)
        if inner is None or inner.opcode not in ("reduce-scatter", "all-to-all"):
            exact = 0
        else:
            return bytes_transferred(inner)
    elif op == "all-gather-start":
        exact = _array_bytes(instr.shape, skip_index=0)
    elif op in ("reduce-scatter", "reduce-scatter-start"):
        exact = sum(_array_bytes(o.shape) for o in instr.operands)
    elif op in ("all-reduce", "all-reduce-start", "all-gather", "all-to-all"):
        exact = _array_bytes(instr.shape)
    else:
        exact = 0
    return int(np.float32(exact))


# -- interpolation ---------------------------------------------------------------------------


def _next_pow2(n: int) -> int:
    return 1 if n <= 0 else 1 << (n - 1).bit_length()


def _closest_pow2(n: int) -> int:
    prev, nxt = _next_pow2((n >> 1) + 1), _next_pow2(n)
    return prev if n - prev < nxt - n else nxt


def _grid(point: tuple[int, ...], low: tuple[int, ...], high: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(
        min(max(_closest_pow2(x), lo), hi) for x, lo, hi in zip(point, low, high, strict=True)
    )


def _nearest(plane: list[tuple[tuple[int, ...], int]], point: tuple[int, ...]) -> int:
    best, best_dist = None, None
    for p, value in plane:
        dist = sum((a - b) ** 2 for a, b in zip(p, point, strict=True))
        if best_dist is None or dist < best_dist:
            best, best_dist = value, dist
    assert best is not None
    return best


@dataclass(frozen=True)
class CollectiveTableEstimate:
    time_ns: float
    bytes: int
    throughput: int
    #: "exact" or "fallback"
    match: str
    communication: str | None
    how: str


class CollectiveTable:
    """XLA's ``CollectiveInterpolator`` built from profiles: the default tables (grid lookups)
    or, as XLA's ``Create(profiles, ...)``, a user's profiles (nearest neighbour)."""

    def __init__(self, gpus_per_node: int, nearest: bool, name: str) -> None:
        self.gpus_per_node = gpus_per_node
        self.nearest = nearest
        self.name = name
        self.exact: dict[tuple, Any] = {}
        self.fallback: dict[tuple, Any] = {}

    def add(self, instr: Instruction, throughput: int) -> None:
        """One profiled collective and its measured throughput (bytes/s)."""
        size = bytes_transferred(instr)
        groups = device_list(instr)
        if groups.iota is None:
            raise CollectiveError("profiles need iota replica groups")
        dtype = instr.shape.element_type if not instr.shape.is_tuple else "tuple"
        accumulating = instr.opcode in _ACCUMULATING
        exact_key = (instr.opcode, groups.groups, dtype if accumulating or self.nearest else None)
        comm = communication_type(instr, self.gpus_per_node)
        fallback_key = (instr.opcode, comm)
        if self.nearest:
            self.exact.setdefault(exact_key, []).append(((size,), throughput))
            self.fallback.setdefault(fallback_key, []).append(((size, groups.iota[1]), throughput))
        else:
            self.exact.setdefault(exact_key, {})[(size,)] = throughput
            self.fallback.setdefault(fallback_key, {})[(size, groups.iota[1])] = throughput

    def _eval(self, table: Any, point: tuple[int, ...], low, high) -> int | None:
        if self.nearest:
            return _nearest(table, point)
        return table.get(_grid(point, low, high))

    def estimate(self, instr: Instruction) -> CollectiveTableEstimate:
        """XLA's ``EstimatedRuntime``; raises :class:`CollectiveError` where XLA fails."""
        size = bytes_transferred(instr)
        groups = canonical_groups(instr)
        if groups is not None:
            accumulating = instr.opcode in _ACCUMULATING
            dtype = instr.shape.element_type if not instr.shape.is_tuple else "tuple"
            table = self.exact.get((instr.opcode, groups, dtype if accumulating else None))
            if table is not None:
                rate = self._eval(table, (size,), (MIN_BYTES,), (MAX_BYTES,))
                if rate is None:
                    raise CollectiveError(
                        f"XLA's {self.name} table has no {instr.opcode} point near {size} bytes"
                    )
                return CollectiveTableEstimate(
                    duration_ns(1.0 * size / rate),
                    size,
                    rate,
                    "exact",
                    None,
                    f"XLA's measured collective table ({self.name}): exact replica groups",
                )
        comm = communication_type(instr, self.gpus_per_node)
        count_size = group_count_and_size(instr)
        if count_size is None:
            raise CollectiveError("replica groups of different sizes")
        table = self.fallback.get((sync_opcode(instr), comm))
        if table is None:
            raise CollectiveError(
                f"XLA's {self.name} table has no {sync_opcode(instr)} profile ({comm})"
            )
        point = (size, count_size[1])
        rate = self._eval(table, point, (MIN_BYTES, MIN_DEVICES), (MAX_BYTES, MAX_DEVICES))
        if rate is None:
            raise CollectiveError(
                f"XLA's {self.name} table has no {sync_opcode(instr)} point near {point}"
            )
        return CollectiveTableEstimate(
            duration_ns(1.0 * size / rate),
            size,
            rate,
            "fallback",
            comm,
            f"XLA's measured collective table ({self.name}): closest size and group size ({comm})",
        )


@cache
def _data() -> dict[str, Any]:
    text = resources.files("hloidx.perf").joinpath("data/xla_collective_tables.json").read_text()
    return json.loads(text)


def table_devices() -> tuple[str, ...]:
    return tuple(sorted(_data()["tables"]))


def _profile_instruction(row: list) -> Instruction:
    """The collective XLA's ``ConstructModule`` builds from one profile row."""
    from ..hlo.syntax import parse_hlo

    opcode, etype, dims, count, size, reshape, perm, channel, global_ids, _ = row
    etype = etype.lower()
    n = dims[0] if dims else 1
    groups = f"[{count},{size}]<=[{','.join(map(str, reshape))}]"
    if perm and list(perm) != list(range(len(perm))):
        groups += f"T({','.join(map(str, perm))})"
    attrs = f"replica_groups={groups}, channel_id={channel}"
    if global_ids:
        attrs += ", use_global_device_ids=true"
    operand, extra = n, ""
    if opcode == "reduce-scatter":
        operand, extra = n * size, ", dimensions={0}, to_apply=add"
    elif opcode == "all-gather":
        operand, extra = n // size, ", dimensions={0}"
    elif opcode == "all-reduce":
        extra = ", to_apply=add"
    elif opcode == "all-to-all":
        extra = ", dimensions={0}"
    text = (
        f"HloModule p\n\nadd {{\n  a = {etype}[] parameter(0)\n  b = {etype}[] parameter(1)\n"
        f"  ROOT s = {etype}[] add(a, b)\n}}\n\nENTRY e {{\n  p = {etype}[{operand}] parameter(0)\n"
        f"  ROOT c = {etype}[{n}] {opcode}(p){extra}, {attrs}\n}}\n"
    )
    return parse_hlo(text, verify=False).entry.root


@cache
def default_table(profile: str, gpus_per_node: int = 8) -> CollectiveTable | None:
    """XLA's default table for ``profile`` (``sm_90``, ``sm_100``), None if there is none."""
    tables = _data()["tables"]
    if profile not in tables:
        return None
    table = CollectiveTable(gpus_per_node, nearest=False, name=profile)
    for row in tables[profile]["rows"]:
        table.add(_profile_instruction(row), row[-1])
    return table
