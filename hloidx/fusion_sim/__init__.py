"""A module before optimization, grouped as XLA:GPU would group it (issue 47).

:func:`simulate` takes a module before optimization and gives the module XLA:GPU would run:
calls inlined, dots as cuBLAS calls with their epilogues folded (``gemm.py``), the rest fused
by PriorityFusion's rules and sibling multi-output fusion (``grouping.py``), written as HLO
text and parsed again (``emit.py``), so the cost view costs it as it costs an optimized
module. This is hloidx's simulation of XLA's passes, not XLA's output.
"""

from __future__ import annotations

from .pipeline import Simulation, estimate_simulated, needs_simulation, simulate

__all__ = ["Simulation", "estimate_simulated", "needs_simulation", "simulate"]
