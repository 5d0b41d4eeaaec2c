"""The step as Chrome / Perfetto trace-event JSON (``hloidx cost --format trace``; open it in
ui.perfetto.dev or chrome://tracing).

One process (the GPU), two threads: the compute stream and the communication stream. Every
slice is a complete event (``"ph": "X"``) with its start (``ts``) and duration (``dur``) in
microseconds, as the trace-event format counts them; a loop's first iteration and a call's
kernels are drawn inside its slice. Every value is an estimate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..perf.report import CostReport

PID = 1
#: the streams as threads; the communication of a loop's or a call's first run drawn on a
#: thread of its own (slices of one thread must nest, and a collective in flight across a loop
#: would overlap the loop body's)
TIDS = {"compute": 1, "communication": 2, "nested communication": 3}
THREAD_NAMES = {
    1: "compute stream",
    2: "communication stream",
    3: "communication stream (inside loops and calls, first run)",
}


def _tid(lane: str, depth: int) -> int:
    if lane == "communication" and depth > 0:
        return TIDS["nested communication"]
    return TIDS[lane]


def _row_args(report: CostReport) -> dict[str, dict[str, Any]]:
    args: dict[str, dict[str, Any]] = {}
    for k in report.kernels:
        args[k.name] = {
            "emitter": k.emitter,
            "count": k.launches,
            "exec_time_ns": None if k.exec_time_ns is None else round(k.exec_time_ns, 3),
            "flops": k.flops,
            "bytes_read": k.bytes_read,
            "bytes_written": k.bytes_written,
            "bound": k.bound,
            "why": k.why,
        }
    for row in report.collective_rows():
        args[row.name] = row.as_json()
    return args


def trace_events(report: CostReport) -> dict[str, Any]:
    """The trace document of ``report``'s step."""
    step = report.step
    meta = {
        "module": report.module,
        "device": report.device.name,
        "model": report.model,
        "estimate": "estimated from XLA's cost models, not measured",
    }
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": PID, "tid": 0, "args": {"name": "GPU"}},
    ]
    for tid, thread in THREAD_NAMES.items():
        events.append(
            {
                "name": "thread_name",
                "ph": "M",
                "pid": PID,
                "tid": tid,
                "args": {"name": thread},
            }
        )
        events.append(
            {
                "name": "thread_sort_index",
                "ph": "M",
                "pid": PID,
                "tid": tid,
                "args": {"sort_index": tid},
            }
        )
    if step is not None:
        meta.update(step.as_json())
        rows = _row_args(report)
        for s in step.slices:
            args = dict(rows.get(s.name, {}))
            args.update(s.args)
            # whole nanoseconds, the start and the end rounded (not the duration): slices that
            # touch still touch, and a child ends inside its parent
            start, end = round(s.start_ns) / 1e3, round(max(s.end_ns, s.start_ns)) / 1e3
            events.append(
                {
                    "name": s.name,
                    "cat": s.kind,
                    "ph": "X",
                    "ts": start,
                    "dur": round(end - start, 3),
                    "pid": PID,
                    "tid": _tid(s.lane, s.depth),
                    "args": args,
                }
            )
    if getattr(report, "measured", None) is not None:
        from .measured_html import measured_trace_events

        events.extend(measured_trace_events(report))
        meta["measured"] = report.measured.as_json()
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": meta}


#: the fields Perfetto's JSON importer needs of each event (a minimal JSON schema of the
#: trace-event format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU)
TRACE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
        "traceEvents": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "ph", "pid", "tid"],
                "properties": {
                    "name": {"type": "string"},
                    "cat": {"type": "string"},
                    "ph": {"enum": ["X", "M", "B", "E", "i", "I", "C"]},
                    "ts": {"type": "number", "minimum": 0},
                    "dur": {"type": "number", "minimum": 0},
                    "pid": {"type": "integer"},
                    "tid": {"type": "integer"},
                    "args": {"type": "object"},
                },
                "allOf": [
                    {
                        "if": {"properties": {"ph": {"const": "X"}}},
                        "then": {"required": ["ts", "dur"]},
                    },
                    {
                        "if": {"properties": {"ph": {"const": "M"}}},
                        "then": {
                            "properties": {
                                "name": {
                                    "enum": [
                                        "process_name",
                                        "thread_name",
                                        "process_sort_index",
                                        "thread_sort_index",
                                    ]
                                }
                            },
                            "required": ["args"],
                        },
                    },
                ],
            },
        },
    },
}
