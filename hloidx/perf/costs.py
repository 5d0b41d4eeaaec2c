"""The estimate of one kernel and of one operand read, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class OperandCost:
    index: int
    name: str
    #: bytes the kernel loads from this operand (re-reads included)
    bytes_read: int
    #: distinct bytes of the operand read (the first read of each comes from DRAM)
    bytes_distinct: int
    coalesced: bool
    read_time_ns: float
    #: share of the DRAM bandwidth the reads use (1: coalesced)
    utilization_rate: float = 1.0
    #: how the coalescing was judged and what was seen
    coalescing: str = ""
    #: the operand's size in bytes
    size: int = 0
    #: how the bytes were counted (hloidx model: from the maps, or as XLA counts them)
    counted: str = ""
    #: the first warp's transactions and the fewest that would do (thread maps)
    warp_transactions: tuple[int, int] | None = None
    #: what XLA's model says for the same operand when it differs (hloidx model only)
    xla_bytes_read: int | None = None
    xla_coalesced: bool | None = None
    #: XLA's count ranges over runtime index values (a gather's, a scatter's): not bytes
    xla_over_runtime_values: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "bytes_read": self.bytes_read,
            "bytes_distinct": self.bytes_distinct,
            "coalesced": self.coalesced,
            "read_time_ns": round(self.read_time_ns, 3),
        }


@dataclass
class KernelCost:
    name: str
    opcode: str
    kind: str
    emitter: str
    blocks: int
    threads_per_block: int
    flops: int
    bytes_read: int
    bytes_written: int
    read_time_ns: float
    write_time_ns: float
    compute_time_ns: float
    #: None when the kernel does not fit (a tiling that spills registers)
    exec_time_ns: float | None
    fits: bool = True
    #: which of XLA's models timed the kernel (``--model xla``; empty for hloidx's model)
    timed_by: str = ""
    tile_sizes: list[list[int]] | None = None
    num_warps: int | None = None
    operands: list[OperandCost] = field(default_factory=list)
    why: str = ""
    notes: list[str] = field(default_factory=list)
    #: the fused computation's structure (for matching kernels of two modules)
    fingerprint: Any = None
    #: the instruction with the most flops ("exponential exp.3"), named in the kernel's own
    #: fused computation from ``heaviest_index`` (its position there; -1: none)
    heaviest_op: str = ""
    heaviest_index: int = -1
    #: times the kernel is launched (a while loop's body: its known trip count)
    launches: int = 1
    #: a time that depends on the data (a scatter whose rows may collide): [low, high] ns
    exec_time_range_ns: tuple[float, float] | None = None
    range_reason: str = ""

    @property
    def bound(self) -> str:
        if self.exec_time_ns is None:
            return "does not fit"
        memory = self.read_time_ns + self.write_time_ns
        return "compute" if self.compute_time_ns > memory else "memory"

    @property
    def time_ns(self) -> float:
        """The kernel's time in the module, every launch (0 for a kernel that does not fit)."""
        return (self.exec_time_ns or 0.0) * self.launches

    def as_json(self, total_ns: float) -> dict[str, Any]:
        share = (self.time_ns / total_ns) if total_ns and self.exec_time_ns is not None else None
        return {
            "name": self.name,
            "opcode": self.opcode,
            "kind": self.kind,
            "emitter": self.emitter,
            "launch": {"blocks": self.blocks, "threads_per_block": self.threads_per_block},
            "launches": self.launches,
            "flops": self.flops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "read_time_ns": round(self.read_time_ns, 3),
            "write_time_ns": round(self.write_time_ns, 3),
            "compute_time_ns": round(self.compute_time_ns, 3),
            "exec_time_ns": None if self.exec_time_ns is None else round(self.exec_time_ns, 3),
            "bound": self.bound,
            **({"timed_by": self.timed_by} if self.timed_by else {}),
            "share": None if share is None else round(share, 6),
            "fits": self.fits,
            "tile_sizes": self.tile_sizes,
            "num_warps": self.num_warps,
            "operands": [o.as_json() for o in self.operands],
            "why": self.why,
            "notes": list(self.notes),
            **self._range_json(),
        }

    def _range_json(self) -> dict[str, Any]:
        if self.exec_time_range_ns is None:
            return {}
        low, high = self.exec_time_range_ns
        return {
            "exec_time_range_ns": [round(low, 3), round(high, 3)],
            "range_reason": self.range_reason,
        }
