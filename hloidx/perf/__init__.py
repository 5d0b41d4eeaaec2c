"""The cost view: what each kernel of a module costs on a GPU, and why (issue 27).

``estimate_module(module_or_text, device=..., model=...)`` gives a :class:`CostReport`;
``compare_reports(a, b)`` the same kernels before and after a change.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CostReport", "compare_reports", "estimate_module"]


def __getattr__(name: str) -> Any:
    if name in ("CostReport", "estimate_module"):
        from . import report

        return getattr(report, name)
    if name == "compare_reports":
        from .compare import compare_reports

        return compare_reports
    raise AttributeError(name)
