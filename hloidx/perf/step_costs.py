"""One GEMM's time (issue 36): XLA's measured tables where XLA has them, else a tensor-core
roofline; a small library API over :mod:`.matmul_table` that the library rows use.

``gemm_time_ns`` answers from XLA's measured GEMM tables on a device XLA has measured
(``sm_90``, ``sm_100``). Elsewhere it answers with a tensor-core roofline: the GEMM's flops at
the device's dense peak for the operands' dtype, a datasheet figure kept as data
(``data/tensor_core_peaks.json``, each with its source), labelled as such.

``--model xla`` is XLA's table exactly. ``--model hloidx`` runs a roofline GEMM at the measured
GEMM efficiency (:mod:`.calibration`), not the datasheet peak, and changes two things of a
table, each said in the answer: an f16 GEMM reads the bf16 table at its own dims (XLA's
fallback for a dtype without a table scales m, k, n by the output's byte width: 8× the
flops), and a rate above the device's dense datasheet peak is capped at the peak (XLA's
``sm_90`` fp8 tables reach 2.6 PFLOP/s, above the H100 SXM's 1.98 PFLOP/s).
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..hlo.element_types import element_bytes
from .calibration import device_entry, gemm_efficiency
from .devices import CostDevice
from .gpu_specs import device_list, resolve_device
from .matmul_table import duration_ns, estimate_spec, gemm_spec, has_table, table_source

if TYPE_CHECKING:
    from ..hlo.ir import HloModule, Instruction

__all__ = ["device_rows", "gemm_source", "gemm_time_ns", "matrix_unit", "tensor_core_peak"]


@cache
def _peaks_data() -> dict[str, Any]:
    text = resources.files("hloidx.perf").joinpath("data/tensor_core_peaks.json").read_text()
    return json.loads(text)


def tensor_core_peak(device: str, dtype: str) -> tuple[float, str] | None:
    """The dense tensor-core peak of ``device`` (hloidx's name or the stem of XLA's spec file)
    for operands of ``dtype`` in FLOP/s, with its source; None when the data has no figure."""
    entry = device_entry(_peaks_data(), device)
    if entry is None or dtype not in entry["tflops"]:
        return None
    return entry["tflops"][dtype] * 1e12, f"{entry['gpu']}: {entry['source']}"


def matrix_unit(device: str) -> str:
    """What ``device``'s peaks are the peaks of: ``tensor-core`` (NVIDIA since Volta),
    ``matrix-core`` (AMD CDNA), ``packed-FP16 FPU`` (Pascal)."""
    entry = device_entry(_peaks_data(), device)
    return entry["unit"] if entry else "tensor-core"


def _device(device: CostDevice | str) -> CostDevice:
    return device if isinstance(device, CostDevice) else resolve_device(device)


def _peak_for(device: CostDevice, lhs: str, rhs: str) -> tuple[float, str] | None:
    """The slower operand's peak (a mixed-dtype GEMM runs at the wider dtype's rate)."""
    found = [tensor_core_peak(device.name, t) for t in (lhs, rhs)]
    if any(f is None for f in found):
        return None
    return min(found, key=lambda f: f[0])  # type: ignore[arg-type,return-value]


def gemm_time_ns(
    instruction: Instruction,
    module: HloModule | None,
    device: CostDevice | str,
    model: str = "xla",
) -> tuple[float, str] | None:
    """One run of the GEMM ``instruction`` (a dot, a cuBLAS / cuBLASLt custom call, a Triton
    GEMM fusion) on ``device``: ``(nanoseconds, how it was found)``. None when ``instruction``
    is not a GEMM XLA's interpolator reads, or the device has neither a table nor a peak for
    its dtypes. ``module`` is unused (XLA reads the GEMM from the instruction alone)."""
    del module
    dev = _device(device)
    spec = gemm_spec(instruction)
    if spec is None:
        return None
    width = element_bytes(spec.out_type)
    notes: list[str] = []
    profile = dev.compute_capability
    if has_table(profile):
        if model == "hloidx" and spec.key == "f16xf16->f16":
            spec = replace(spec, lhs_type="bf16", rhs_type="bf16", out_type="bf16")
            notes.append(
                "hloidx: f16 read from the bf16 table at its own dims (XLA's fallback scales "
                "the dims by 2: 8x the flops)"
            )
        got = estimate_spec(spec, profile)
        time_ns, how = got.time_ns, got.how
        peak = _peak_for(dev, spec.lhs_type, spec.rhs_type)
        if model == "hloidx" and peak is not None and got.flops_per_second > peak[0]:
            time_ns = duration_ns(got.flops / peak[0])
            notes.append(
                f"hloidx: the table's {got.flops_per_second / 1e12:.1f} TFLOP/s is above the "
                f"dense peak {peak[0] / 1e12:g} TFLOP/s ({peak[1]}); capped at the peak"
            )
        return time_ns, "; ".join([how, *notes])
    peak = _peak_for(dev, spec.lhs_type, spec.rhs_type)
    if peak is None:
        return None
    flops = 2 * spec.b * (spec.m // width) * (spec.k // width) * (spec.n // width)
    how = (
        f"{matrix_unit(dev.name)} roofline, not XLA's model: no XLA GEMM table for {profile}; "
        f"{flops} flops at the dense {spec.lhs_type} peak {peak[0] / 1e12:g} TFLOP/s ({peak[1]})"
    )
    if model == "hloidx":
        efficiency = gemm_efficiency()
        rate = peak[0] * efficiency.value
        how += f" x the measured GEMM efficiency {efficiency.value:g} ({efficiency.source})"
        return duration_ns(flops / rate), how
    return duration_ns(flops / peak[0]), how


def gemm_source(device: CostDevice) -> str:
    """How ``hloidx cost`` times a GEMM on ``device``, and where its figures come from."""
    if has_table(device.compute_capability):
        source = table_source()
        return (
            f"XLA's measured GEMM table ({device.compute_capability}; {source['path']} at "
            f"{source['commit'][:8]})"
        )
    peaks = {t: tensor_core_peak(device.name, t) for t in ("bf16", "f16", "f32", "s8")}
    found = {t: p for t, p in peaks.items() if p is not None}
    if not found:
        return "FPU roofline (no matrix-unit peaks in the data)"
    figures = ", ".join(f"{t} {p[0] / 1e12:g}" for t, p in found.items())
    where = next(iter(found.values()))[1]
    return (
        f"{matrix_unit(device.name)} roofline at dense peaks in TFLOP/s ({figures}; {where}); "
        "other dtypes: FPU roofline"
    )


def device_rows() -> list[dict[str, str]]:
    """``gpu_specs.device_list`` with ``gemm``: how each device's GEMMs are timed."""
    return [{**row, "gemm": gemm_source(resolve_device(row["name"]))} for row in device_list()]
