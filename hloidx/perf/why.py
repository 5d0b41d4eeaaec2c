"""The ``why`` of a kernel's row: what dominates its estimated time, in a few words, and where
hloidx's model and XLA's differ."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import KERNEL_LAUNCH_OVERHEAD_NS as LAUNCH_OVERHEAD_NS

if TYPE_CHECKING:
    from .costs import KernelCost, OperandCost

_TRANSCENDENTAL = (
    "exponential",
    "log",
    "tanh",
    "power",
    "rsqrt",
    "sqrt",
    "logistic",
    "sine",
    "cosine",
    "erf",
    "atan2",
    "exponential-minus-one",
    "log-plus-one",
    "cbrt",
    "divide",
)


def _mb(n: float) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.1f} MB"
    if n >= 1e3:
        return f"{n / 1e3:.1f} kB"
    return f"{int(n)} B"


def _operand_reason(o: OperandCost, output_bytes: int) -> str:
    reasons = []
    if not o.coalesced:
        reasons.append(f"not coalesced ({o.utilization_rate:.0%} of each transaction used)")
    elif o.utilization_rate < 0.999:
        reasons.append(f"{o.utilization_rate:.0%} of each transaction used")
    reuse = o.bytes_read / o.bytes_distinct if o.bytes_distinct else 0.0
    if reuse >= 1.5:
        if o.size * 4 <= output_bytes:
            reasons.append(f"broadcast-heavy: each element read {reuse:.0f}×")
        else:
            reasons.append(f"read {reuse:.1f}× per element")
    if not reasons:
        reasons.append(f"{_mb(o.bytes_distinct)} streamed once")
    return ", ".join(reasons)


def _differences(cost: KernelCost) -> list[str]:
    """Where hloidx's operand figures differ from XLA's, and why."""
    out = []
    for o in cost.operands:
        if o.xla_bytes_read is not None and o.xla_over_runtime_values:
            out.append(
                f"{o.name}: {_mb(o.bytes_read)} read counted from the elements its maps touch "
                "(XLA's iteration space also runs over the runtime index values: no amount "
                "of data)"
            )
        elif o.xla_bytes_read is not None and o.xla_bytes_read != o.bytes_read:
            out.append(
                f"{o.name}: {_mb(o.bytes_read)} read counted from the elements its maps touch, "
                f"{_mb(o.xla_bytes_read)} by XLA's iteration space"
            )
        if o.xla_coalesced is not None and o.xla_coalesced != o.coalesced:
            if o.coalesced:
                out.append(
                    f"{o.name}: coalesced by its thread maps, where XLA's transpose heuristic "
                    "says not"
                )
            else:
                seen = ""
                if o.warp_transactions is not None:
                    got, ideal = o.warp_transactions
                    seen = f" (first warp: {got} transactions for {ideal})"
                out.append(
                    f"{o.name}: not coalesced by its thread maps{seen}, where XLA's heuristic "
                    "says coalesced"
                )
    return out


def explain(cost: KernelCost) -> str:
    """A few words: the dominating cost and its reason, then the model differences."""
    if not cost.fits:
        return cost.why or "registers spill: the tiling does not fit"
    if cost.kind == "library" and "measured GEMM table" in cost.emitter:
        head = "GEMM: its time from XLA's measured GEMM tables (read/write times: a roofline's)"
    elif cost.kind == "library" and "tensor-core roofline" in cost.emitter:
        head = "GEMM: its flops at the tensor cores' dense datasheet peak (a roofline)"
    elif cost.kind == "library":
        head = "library kernel: a roofline of its flops and bytes (internals not modelled)"
    elif cost.compute_time_ns > cost.read_time_ns + cost.write_time_ns:
        op = cost.heaviest_op
        kind = op.split(" ")[0] if op else ""
        extra = " (transcendental)" if kind in _TRANSCENDENTAL else ""
        head = f"compute-bound: {op}{extra}" if op else "compute-bound"
    else:
        top = max(cost.operands, key=lambda o: o.read_time_ns, default=None)
        if top is None or cost.write_time_ns >= top.read_time_ns:
            head = f"writing {_mb(cost.bytes_written)} dominates"
        else:
            head = f"{top.name}: {_operand_reason(top, cost.bytes_written)}"
    parts = [head, *_differences(cost)]
    if cost.emitter.startswith("dynamic-update-slice (in place)"):
        parts.append("in place: the update written into the base's buffer, the base not read")
    elif cost.emitter.startswith("scatter (in place)"):
        parts.append("in place: only the rows the updates land on are touched")
    parts += [n for n in cost.notes if "backend_config" in n and "not JSON" in n]
    if cost.exec_time_ns is not None and cost.exec_time_ns < LAUNCH_OVERHEAD_NS:
        parts.append("the 1 us launch overhead exceeds the kernel's own estimate")
    return "; ".join(parts)
