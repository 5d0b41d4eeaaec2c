"""What the in-place cost tests share (tests/test_cost_in_place*.py): every module they cost is
first read by XLA's own HLO parser, and the physical expectation of moving N bytes is N over the
device's DRAM bandwidth."""

from __future__ import annotations

from typing import Any

from hloidx.perf.gpu_specs import resolve_device
from hloidx.perf.report import estimate_module


def xla_accepts(text: str) -> None:
    """The module is one XLA's own HLO parser reads (skipped without jaxlib)."""
    try:
        from jaxlib._hlo import hlo_module_from_text
    except ImportError:
        return
    hlo_module_from_text(text)


def report(text: str, device: str = "h100") -> Any:
    """The default model's estimate of a module XLA's parser accepts."""
    xla_accepts(text)
    return estimate_module(text, device)


def ns(nbytes: int, device: str = "h100") -> float:
    """Nanoseconds to move ``nbytes`` at the device's DRAM bandwidth."""
    return nbytes / resolve_device(device).memory_bandwidth * 1e9
