"""The values the node data provider computes (kept apart from ``main.py`` so that tests can
call it without Model Explorer installed)."""

from __future__ import annotations

from typing import Any

from ..hlo.ir import HloModule
from .convert import COST_METRICS, SUMMARY_METRICS, cost_values, summary_values

#: the device the provider's cost estimate is for unless the run's config names one
DEFAULT_DEVICE = "h100"


def provider_values(
    module: HloModule, provider_id: str, config: dict[str, Any]
) -> tuple[dict[str, float], str]:
    """Instruction name -> value, and the label, for provider ``provider_id``."""
    if provider_id == "hloidx_cost":
        from ..perf.devices import cost_device
        from ..perf.report import estimate_module

        device = cost_device(str(config.get("device") or DEFAULT_DEVICE))
        document = estimate_module(module, device).as_dict()
        return cost_values(document, "time"), COST_METRICS["time"][1] + f" on {device.name}"
    if provider_id == "hloidx_reads":
        from ..hlo.analysis import analyze
        from ..hlo.summary import summarize

        document = summarize(analyze(module))
        return summary_values(document, "reads"), SUMMARY_METRICS["reads"][1]
    raise ValueError(f"unknown hloidx node data provider {provider_id!r}")
