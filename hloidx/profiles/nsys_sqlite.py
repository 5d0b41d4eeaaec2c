"""Nsight Systems SQLite exports (``nsys export --type sqlite``): XLA's NVTX ranges (domain
``TSL``, push/pop ranges in ``NVTX_EVENTS``) joined to the CUDA kernels by correlation id
(``CUPTI_ACTIVITY_KIND_KERNEL.correlationId`` = the launching runtime call's
``CUPTI_ACTIVITY_KIND_RUNTIME.correlationId``, on the thread whose NVTX ranges enclose the
call), the GPU from ``TARGET_INFO_GPU``. Schema: Nsight Systems' "SQLite Export Schema
Reference" (NVTX event types 59 push/pop range, 75 domain creation).

A launch of an instruction is one innermost ``Thunk`` range with the kernels launched inside
it: from the first kernel's start to the last one's end (as the ``nvtx_gpu_proj_trace`` recipe
projects it); an execution is an ``XlaModule`` range, from its first kernel to its last.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import Any

from .device_text import target_config_text
from .records import Execution, Launch, Profile, ProfileError, module_key, summarize, thunk_op

PUSH_POP_RANGE = 59
DOMAIN_CREATE = 75


def _tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}


def _ranges(db: sqlite3.Connection, tables: set[str]) -> dict[int, list[tuple[int, int, str]]]:
    """XLA's push/pop ranges per thread: (start, end, text), domain TSL when domains exist."""
    text = "n.text"
    join = ""
    if "StringIds" in tables and "textId" in _columns(db, "NVTX_EVENTS"):
        text = "COALESCE(n.text, s.value)"
        join = "LEFT JOIN StringIds AS s ON s.id = n.textId"
    domains = {
        row[0]
        for row in db.execute(
            f"SELECT n.domainId, {text} FROM NVTX_EVENTS AS n {join} WHERE n.eventType = ?",
            (DOMAIN_CREATE,),
        )
        if row[1] == "TSL"
    }
    out: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    query = (
        f"SELECT n.start, n.end, {text}, n.globalTid, n.domainId FROM NVTX_EVENTS AS n {join} "
        "WHERE n.eventType = ? AND n.end IS NOT NULL"
    )
    for start, end, name, tid, domain in db.execute(query, (PUSH_POP_RANGE,)):
        if name is None or (domains and domain not in domains):
            continue
        name = name.removeprefix("TSL:")
        if name.startswith(("XlaModule:", "Thunk:")):
            out[tid].append((start, end, name))
    return out


def _device_text(db: sqlite3.Connection, tables: set[str]) -> str | None:
    if "TARGET_INFO_GPU" not in tables:
        return None
    cursor = db.execute("SELECT * FROM TARGET_INFO_GPU LIMIT 1")
    row = cursor.fetchone()
    if row is None:
        return None
    gpu: dict[str, Any] = dict(zip([d[0] for d in cursor.description], row, strict=True))
    return target_config_text(
        name=gpu.get("name"),
        core_count=gpu.get("smCount"),
        clock_hz=gpu.get("clockRate"),
        memory_bandwidth=gpu.get("memoryBandwidth"),
        l2_cache_size=gpu.get("l2CacheSize"),
        compute_capability=(gpu.get("computeMajor"), gpu.get("computeMinor")),
        shared_memory_per_core=gpu.get("maxShmemPerSm"),
        shared_memory_per_block=gpu.get("maxShmemPerBlock"),
        threads_per_warp=gpu.get("threadsPerWarp"),
        threads_per_block_limit=gpu.get("maxThreadsPerBlock"),
        registers_per_block_limit=gpu.get("maxRegistersPerBlock"),
    )


def _read(db: sqlite3.Connection, path: str, warmup: int | None) -> Profile:
    tables = _tables(db)
    for needed in ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"):
        if needed not in tables:
            raise ProfileError(f"{path}: no {needed} table (export with CUDA and NVTX traces)")
    ranges = _ranges(db, tables)
    launches: dict[int, list[tuple[int, int, int, int]]] = defaultdict(list)
    query = (
        "SELECT r.globalTid, r.start, k.start, k.end, k.deviceId "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId"
    )
    for tid, called, start, end, device in db.execute(query):
        launches[tid].append((called, start, end, device))
    # per thread, sweep calls and ranges in time order with the stack of open ranges
    thunk_kernels: dict[tuple[int, int], list[tuple[int, int, int]]] = defaultdict(list)
    module_of: dict[tuple[int, int], tuple[int, int]] = {}
    outside = 0
    for tid in ranges:
        ranges[tid].sort()
    for tid, calls in launches.items():
        spans = ranges.get(tid, [])
        calls.sort()
        stack: list[int] = []
        i = 0
        for called, start, end, device in calls:
            while i < len(spans) and spans[i][0] <= called:
                while stack and spans[stack[-1]][1] < spans[i][0]:
                    stack.pop()
                stack.append(i)
                i += 1
            while stack and spans[stack[-1]][1] < called:
                stack.pop()
            thunk = next((j for j in reversed(stack) if spans[j][2].startswith("Thunk:")), None)
            mod = next((j for j in reversed(stack) if spans[j][2].startswith("XlaModule:")), None)
            if thunk is None or mod is None:
                outside += 1
                continue
            thunk_kernels[(tid, thunk)].append((start, end, device))
            module_of[(tid, thunk)] = (tid, mod)
    by_module: dict[tuple[int, int], list[Launch]] = defaultdict(list)
    devices: dict[tuple[int, int], int] = {}
    for key, kernels in thunk_kernels.items():
        tid, thunk = key
        op = thunk_op(ranges[tid][thunk][2])
        if op is None:
            continue
        first = min(k[0] for k in kernels)
        last = max(k[1] for k in kernels)
        by_module[module_of[key]].append(Launch(op, first, last - first, len(kernels)))
        devices[module_of[key]] = kernels[0][2]
    executions = []
    for (tid, mod), found in by_module.items():
        name = ranges[tid][mod][2]
        key = module_key(name)
        if key is None:
            continue
        begin = min(launch.start_ns for launch in found)
        end = max(launch.start_ns + launch.duration_ns for launch in found)
        device = f"GPU {devices[(tid, mod)]}"
        executions.append(Execution(key[0], key[1], device, begin, end - begin, tuple(found)))
    if not executions:
        raise ProfileError(f"{path}: no CUDA kernel inside an XLA module's NVTX range")
    notes = ()
    if outside:
        notes = (f"{outside} kernels were launched outside any XLA thunk range (not counted)",)
    programs = summarize(executions, notes, warmup)
    return Profile(path, "nsys-sqlite", programs, _device_text(db, tables), {}, notes)


def read_nsys_sqlite(path: str, warmup: int | None = None) -> Profile:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise ProfileError(f"{path}: not a readable SQLite database ({e})") from None
    try:
        return _read(db, path, warmup)
    except sqlite3.Error as e:
        raise ProfileError(f"{path}: not a readable Nsight Systems export ({e})") from None
    finally:
        db.close()
