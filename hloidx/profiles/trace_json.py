"""The trace-event JSON a JAX profile writes beside its xplane file (``<host>.trace.json.gz``,
also ``perfetto_trace.json.gz``). It keeps each kernel's ``hlo_op`` and ``hlo_module`` in its
``args`` but drops ``program_id`` (so programs are told apart by module name only) and caps
the number of events: prefer the ``*.xplane.pb`` beside it. Executions are cut as in
:mod:`.xplane`. Times are in microseconds in the file."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from .records import Profile, ProfileError, summarize
from .xplane import _execution, _split


def _events(path: str) -> list[dict[str, Any]]:
    try:
        raw = Path(path).read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        document = json.loads(raw)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise ProfileError(f"{path}: cannot read the compressed trace ({e})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProfileError(f"{path}: not trace-event JSON ({e})") from None
    events = document.get("traceEvents") if isinstance(document, dict) else document
    if not isinstance(events, list):
        raise ProfileError(f"{path}: no traceEvents list in this JSON")
    return [e for e in events if isinstance(e, dict)]


def read_trace_json(path: str, warmup: int | None = None) -> Profile:
    events = _events(path)
    gpus = {
        e.get("pid"): str(e.get("args", {}).get("name", ""))
        for e in events
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    kernels: dict[tuple[str, str], list[tuple[float, float, str]]] = {}
    for e in events:
        args = e.get("args")
        if e.get("ph") != "X" or not isinstance(args, dict):
            continue
        op, module = args.get("hlo_op"), args.get("hlo_module")
        device = gpus.get(e.get("pid"), str(e.get("pid")))
        if not op or not module or "GPU" not in device:
            continue
        try:
            start, duration = float(e["ts"]) * 1e3, float(e.get("dur", 0.0)) * 1e3
        except (KeyError, TypeError, ValueError):
            continue
        kernels.setdefault((str(module), device), []).append((start, duration, str(op)))
    if not kernels:
        raise ProfileError(f"{path}: no GPU kernel event with an hlo_op in this trace")
    executions = [
        _execution(module, None, device, run)
        for (module, device), found in kernels.items()
        for run in _split(found)
    ]
    notes = (
        "trace JSON: no program_id (programs told apart by module name) and a capped event "
        "count; executions cut at pauses between kernels",
    )
    return Profile(path, "trace-json", summarize(executions, notes, warmup), None, {}, notes)
