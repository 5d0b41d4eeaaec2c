"""GEMM time from XLA's measured tables, as XLA's ``MatmulInterpolator`` computes it.

XLA (``xla/service/gpu/model/matmul_interpolator.cc``, ``interpolator.h``) keeps, for ``sm_90``
and ``sm_100``, the FLOP/s cuBLAS reached on a grid of batched GEMMs (b ∈ {1, 2, 4}; m, n, k
powers of two from 256 to 4096) for five dtype keys (``bf16xbf16->bf16``, ``f32xf32->f32`` and
three fp8 pairs with a bf16 output). The tables are package data here
(``data/xla_matmul_tables.json``, converted by ``bench/convert_xla_tables.py``).

A GEMM's time is its flops over the table's FLOP/s at its point, the FLOP/s being the weighted
average of the 16 corners of the power-of-two box around the point (each coordinate clamped to
the grid), weight ``1 / (squared distance + 1)`` in float32 as XLA computes it. XLA scales m, k
and n by the output's byte width when it reads the dot; a dtype with a table divides them back;
a dtype without one (s8, f16, ...) is read, with the scaled dims and ``2·b·m·k·n`` of them, from
a fallback table: the bf16 table with m, k, n doubled. The time is an ``absl::Duration``: whole
quarter-nanoseconds, rounded to nearest.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import product
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np

from ..hlo.element_types import element_bytes

if TYPE_CHECKING:
    from ..hlo.ir import Instruction

#: the cuBLAS custom-call targets XLA's ``IsCublasGemm`` accepts
CUBLAS_GEMM_TARGETS = frozenset({"__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8"})

_MIN = (1, 256, 256, 256)
_MAX = (4, 4096, 4096, 4096)
_FALLBACK_MIN = (1, 512, 512, 512)
_FALLBACK_MAX = (4, 8192, 8192, 8192)
_BF16 = "bf16xbf16->bf16"
_TICKS_PER_SECOND = 4_000_000_000  # absl::Duration's quarter-nanosecond ticks


@dataclass(frozen=True)
class GemmSpec:
    """A GEMM as XLA's ``ExtractDotSpec`` reads it: m, k, n already multiplied by the output's
    byte width."""

    b: int
    m: int
    k: int
    n: int
    lhs_type: str
    rhs_type: str
    out_type: str

    @property
    def key(self) -> str:
        """XLA's ``MatmulDTypeKey::KeyString``: ``lhs x rhs -> out``."""
        return f"{self.lhs_type}x{self.rhs_type}->{self.out_type}"


@dataclass(frozen=True)
class GemmEstimate:
    """A GEMM's time from the table: ``time_ns`` in whole quarter-nanoseconds."""

    time_ns: float
    flops: int
    flops_per_second: float
    table: str
    key: str
    #: True when the dtype key has no table and the bf16 fallback answered
    fallback: bool

    @property
    def how(self) -> str:
        if self.fallback:
            return (
                f"XLA's measured GEMM table ({self.table}): no {self.key} table, XLA's bf16 "
                "fallback (dims scaled by the output's byte width)"
            )
        return f"XLA's measured GEMM table ({self.table}, {self.key})"


# -- the tables ------------------------------------------------------------------------------


@cache
def _data() -> dict[str, Any]:
    text = resources.files("hloidx.perf").joinpath("data/xla_matmul_tables.json").read_text()
    return json.loads(text)


def table_source() -> dict[str, str]:
    """Where the tables come from (repository, commit, path, licence)."""
    return dict(_data()["source"])


def table_devices() -> tuple[str, ...]:
    """The ``sm_XY`` keys with a table."""
    return tuple(sorted(_data()["tables"]))


def has_table(profile: str) -> bool:
    return profile in _data()["tables"]


@cache
def _interpolators(profile: str) -> tuple[dict[str, _Interpolator], _Interpolator]:
    table = _data()["tables"][profile]
    keys = table["columns"][4:]
    by_key = {key: _Interpolator(_MIN, _MAX) for key in keys}
    fallback = _Interpolator(_FALLBACK_MIN, _FALLBACK_MAX)
    for row in table["rows"]:
        b, m, n, k = row[:4]
        for key, flops in zip(keys, row[4:], strict=True):
            if flops is None:
                continue
            by_key[key].values[(b, m, k, n)] = float(flops)
            if key == _BF16:
                fallback.values[(b, 2 * m, 2 * k, 2 * n)] = float(flops)
    return by_key, fallback


# -- interpolation ---------------------------------------------------------------------------


def _next_power_of_two(n: int) -> int:
    return 1 if n <= 0 else 1 << (n - 1).bit_length()


def _prev_power_of_two(n: int) -> int:
    """XLA's ``PrevPowerOfTwo``: ``NextPowerOfTwo(n / 2 + 1)`` (n itself for a power of two)."""
    return _next_power_of_two((n >> 1) + 1)


_ONE = np.float32(1.0)


class _Interpolator:
    """XLA's ``EuclideanWeightedAverageInterpolator<4>`` with power-of-two neighbours."""

    def __init__(self, low: tuple[int, ...], high: tuple[int, ...]) -> None:
        self.low = low
        self.high = high
        self.values: dict[tuple[int, ...], float] = {}

    def _clamp(self, value: int, dim: int) -> int:
        return min(max(self.low[dim], value), self.high[dim])

    def corners(self, point: tuple[int, ...]) -> list[tuple[int, ...]]:
        """The 2^4 corners in XLA's order (the first dimension varies fastest)."""
        pairs = [
            (self._clamp(_prev_power_of_two(x), d), self._clamp(_next_power_of_two(x), d))
            for d, x in enumerate(point)
        ]
        return [tuple(reversed(c)) for c in product(*reversed(pairs))]

    def eval(self, point: tuple[int, ...]) -> float:
        result = 0.0
        total = 0.0
        for corner in self.corners(point):
            dist = sum((c - x) * (c - x) for c, x in zip(corner, point, strict=True))
            # float weight = 1.0f / (Norm2(...) + 1.0f): the int64 distance becomes a float
            weight = float(_ONE / (np.float32(dist) + _ONE))
            result += self.values[corner] * weight
            total += weight
        return result / total


# -- durations -------------------------------------------------------------------------------


def duration_ns(seconds: float) -> float:
    """``absl::Seconds(seconds)`` in nanoseconds: whole quarter-nanoseconds, rounded half away
    from zero (``std::round``) as absl constructs a Duration from a double."""
    if math.isnan(seconds) or seconds >= 2**63 - 1:
        return math.inf
    whole = int(seconds)
    x = (seconds - float(whole)) * _TICKS_PER_SECOND
    ticks = math.floor(x)
    if x - ticks >= 0.5:
        ticks += 1
    return (whole * _TICKS_PER_SECOND + ticks) / 4


def trunc_ns(time_ns: float, unit_ns: int) -> int:
    """``absl::Trunc(d, unit)``: toward zero to a whole number of ``unit_ns``."""
    return int(time_ns // unit_ns) * unit_ns


# -- reading the GEMM of an instruction ------------------------------------------------------


def spec_from_dims(
    lhs_dims: tuple[int, ...],
    rhs_dims: tuple[int, ...],
    lhs_batch: tuple[int, ...],
    lhs_contracting: tuple[int, ...],
    rhs_batch: tuple[int, ...],
    rhs_contracting: tuple[int, ...],
    lhs_type: str,
    rhs_type: str,
    out_type: str,
) -> GemmSpec:
    """XLA's ``ExtractDotSpec``: b from the lhs batch dims; k, m, n (each times the output's
    byte width) from the lhs contracting, lhs free and rhs free dims."""
    width = element_bytes(out_type)
    b = prod(lhs_dims[d] for d in lhs_batch)
    k = width * prod(lhs_dims[d] for d in lhs_contracting)
    m = width * prod(
        size for d, size in enumerate(lhs_dims) if d not in lhs_batch and d not in lhs_contracting
    )
    n = width * prod(
        size for d, size in enumerate(rhs_dims) if d not in rhs_batch and d not in rhs_contracting
    )
    return GemmSpec(b, m, k, n, lhs_type, rhs_type, out_type)


def _dot_spec(dot: Instruction, out_type: str) -> GemmSpec:
    dn = dot.dot_dimension_numbers
    lhs, rhs = dot.operands[0].shape, dot.operands[1].shape
    return spec_from_dims(
        lhs.dims,
        rhs.dims,
        dn.lhs_batch,
        dn.lhs_contracting,
        dn.rhs_batch,
        dn.rhs_contracting,
        lhs.element_type,
        rhs.element_type,
        out_type,
    )


def _backend_config(instr: Instruction) -> dict[str, Any]:
    from .backend_config import read_backend_config  # read as XLA reads it (trailing commas)

    return read_backend_config(instr).value


def is_cublas_gemm(instr: Instruction) -> bool:
    return (
        instr.opcode == "custom-call"
        and instr.attributes.get("custom_call_target", "").strip('"') in CUBLAS_GEMM_TARGETS
    )


def triton_gemm_dot(instr: Instruction) -> Instruction | None:
    """The one dot of a Triton fusion (XLA's ``IsTritonGemm``), else None."""
    if instr.opcode != "fusion":
        return None
    kind = _backend_config(instr).get("fusion_backend_config", {}).get("kind", "")
    if not str(kind).startswith("__triton"):
        return None
    bodies = instr.called_computations.get("calls") or []
    if len(bodies) != 1:
        return None
    dots = [i for i in bodies[0].instructions if i.opcode == "dot"]
    return dots[0] if len(dots) == 1 else None


def gemm_spec(instr: Instruction) -> GemmSpec | None:
    """The GEMM XLA's ``MatmulInterpolator`` reads from a dot, a cuBLAS custom call or a
    Triton GEMM fusion; None for anything else."""
    out = instr.shape.leaves()[0] if instr.shape.is_tuple else instr.shape
    if instr.opcode == "dot" and len(instr.operands) >= 2:
        return _dot_spec(instr, out.element_type)
    if is_cublas_gemm(instr) and len(instr.operands) >= 2:
        dn = _backend_config(instr).get("gemm_backend_config", {}).get("dot_dimension_numbers")
        if dn is None:
            return None
        lhs, rhs = instr.operands[0].shape, instr.operands[1].shape

        def dims(name: str) -> tuple[int, ...]:
            return tuple(int(d) for d in dn.get(name, []))

        return spec_from_dims(
            lhs.dims,
            rhs.dims,
            dims("lhs_batch_dimensions"),
            dims("lhs_contracting_dimensions"),
            dims("rhs_batch_dimensions"),
            dims("rhs_contracting_dimensions"),
            lhs.element_type,
            rhs.element_type,
            out.element_type,
        )
    dot = triton_gemm_dot(instr)
    if dot is not None:
        return _dot_spec(dot, out.element_type)
    return None


def estimate_spec(spec: GemmSpec, profile: str) -> GemmEstimate:
    """XLA's ``MatmulInterpolator::EstimatedRuntime`` with the default table ``profile``."""
    by_key, fallback = _interpolators(profile)
    interpolator = by_key.get(spec.key)
    if interpolator is not None:
        width = element_bytes(spec.out_type)
        b, m, k, n = spec.b, spec.m // width, spec.k // width, spec.n // width
        used_fallback = False
    else:
        b, m, k, n = spec.b, spec.m, spec.k, spec.n
        interpolator = fallback
        used_fallback = True
    flops = 2 * b * m * k * n
    rate = interpolator.eval((b, m, k, n))
    time_ns = duration_ns(1.0 * flops / rate)
    return GemmEstimate(time_ns, flops, rate, profile, spec.key, used_fallback)


def estimate_gemm(instr: Instruction, profile: str) -> GemmEstimate | None:
    """The table's time for ``instr`` on device ``profile`` (``sm_90``, ``sm_100``); None when
    ``instr`` is not a GEMM XLA's interpolator reads or ``profile`` has no table."""
    if not has_table(profile):
        return None
    spec = gemm_spec(instr)
    return None if spec is None else estimate_spec(spec, profile)


# -- a user's own profiles (XLA's nearest-neighbour interpolator) ----------------------------


class ProfileInterpolator:
    """XLA's ``MatmulInterpolator::Create(profiles, device)``: a user's measured dots (the file
    XLA reads from ``--xla_gpu_experimental_matmul_perf_table_path``), each a dot and its clock
    cycles; a GEMM takes the FLOP/s of the nearest profile (squared Euclidean distance over the
    byte-scaled b, m, k, n; the first of equals), whatever its dtypes."""

    def __init__(self, clock_rate_ghz: float) -> None:
        self.clock_rate_ghz = float(np.float32(clock_rate_ghz))
        self.plane: list[tuple[tuple[int, int, int, int], int]] = []

    def add(self, spec: GemmSpec, clock_cycles: int) -> None:
        point = (spec.b, spec.m, spec.k, spec.n)
        flops = 2 * spec.b * spec.m * spec.n * spec.k
        # int64_t runtime_ns = clock_cycles / clock_rate_ghz (int64 / float in float)
        runtime_ns = int(np.float32(clock_cycles) / np.float32(self.clock_rate_ghz))
        self.plane.append((point, int(flops * 1e9 / runtime_ns)))  # stored as int64

    def estimate(self, spec: GemmSpec) -> float:
        point = (spec.b, spec.m, spec.k, spec.n)
        best: int | None = None
        best_dist = None
        for p, value in self.plane:
            dist = sum((a - c) ** 2 for a, c in zip(p, point, strict=True))
            if best_dist is None or dist < best_dist:
                best, best_dist = value, dist
        if best is None:
            raise ValueError("no profiles")
        flops = 2 * spec.b * spec.m * spec.k * spec.n
        return duration_ns(1.0 * flops / best)
