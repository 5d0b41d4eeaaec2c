"""nsys-jax archives (NVIDIA/JAX-Toolbox's ``nsys-jax``: a ``.zip`` or its unpacked folder):
``nvtx_gpu_proj_trace/trace.parquet`` (Nsight Systems' ``nvtx_gpu_proj_trace`` recipe, XLA's
NVTX ranges projected onto the GPU, in both column layouts nsys-jax reads), the GPU from
``dump/*.gpu_target_config.pbtxt.xz`` or ``device-metadata.parquet``, and the optimized HLO
of each program from ``dump/module_NNNN.<name>.*gpu_after_optimizations.hlo.pb.xz``.

A thunk range is counted when no other thunk range lies below it (``while`` and conditional
thunks contain their bodies' thunks); its time is its projected duration (first GPU operation
to the end of the last one launched inside it, all its kernels together).
"""

from __future__ import annotations

import lzma
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .records import (
    Execution,
    Launch,
    Profile,
    ProfileError,
    module_key,
    summarize,
    thunk_op,
)

TRACE = "nvtx_gpu_proj_trace/trace.parquet"
OLD_COLUMNS = ("Name", "Projected Start", "Projected Duration", "PID", "TID", "RangeId", "ParentId")
NEW_COLUMNS = ("Text", "Start", "End", "PID", "TID", "Range ID", "Parent ID")
_DUMP_HLO = re.compile(
    r"module_(\d+)\.(.+?)\.(?:sm_[\d.]+_)?gpu_after_optimizations\.hlo\.pb(\.xz)?$"
)
_DUMP_TARGET = re.compile(r"module_(\d+)\.(.+?)\.gpu_target_config\.pbtxt(\.xz)?$")


class _Archive:
    """The members of a zip archive or a folder, by their path under the archive's root."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.zip: zipfile.ZipFile | None = None
        p = Path(path)
        if p.is_dir():
            self.names = {str(f.relative_to(p)): f for f in p.rglob("*") if f.is_file()}
        else:
            try:
                self.zip = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError) as e:
                raise ProfileError(f"{path}: not a readable nsys-jax archive ({e})") from None
            self.names = {n: n for n in self.zip.namelist() if not n.endswith("/")}

    def find(self, suffix: str) -> str | None:
        hits = sorted((n for n in self.names if n == suffix or n.endswith("/" + suffix)), key=len)
        return hits[0] if hits else None

    def read(self, name: str) -> bytes:
        try:
            if self.zip is not None:
                data = self.zip.read(self.names[name])
            else:
                data = Path(self.names[name]).read_bytes()
            if name.endswith(".xz"):
                data = lzma.decompress(data)
        except (zipfile.BadZipFile, lzma.LZMAError, OSError, EOFError, ValueError) as e:
            raise ProfileError(f"{self.path}: {name} is damaged ({e})") from None
        return data


def _parquet(archive: _Archive, name: str) -> dict[str, list[Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(archive.read(name)))
    except (pa.ArrowException, OSError, ValueError) as e:
        raise ProfileError(f"{archive.path}: {name} is not a readable parquet file ({e})") from None
    return table.to_pydict()


def _columns(data: dict[str, list[Any]], path: str) -> tuple[list[Any], ...]:
    """(name, start, duration, pid, tid, range id, parent id) columns of either layout."""
    if all(c in data for c in OLD_COLUMNS):
        name, start, duration, pid, tid, rid, parent = (data[c] for c in OLD_COLUMNS)
        return name, start, duration, pid, tid, rid, parent
    if all(c in data for c in NEW_COLUMNS):
        name, start, end, pid, tid, rid, parent = (data[c] for c in NEW_COLUMNS)
        duration = [
            None if s is None or e is None else e - s for s, e in zip(start, end, strict=True)
        ]
        return name, start, duration, pid, tid, rid, parent
    raise ProfileError(
        f"{path}: {TRACE} has neither nsys-jax column layout (columns: {', '.join(data)})"
    )


def executions_from_ranges(data: dict[str, list[Any]], path: str) -> tuple[list[Execution], int]:
    """The module executions of an NVTX range table, each with its innermost thunks; and
    the number of innermost thunks under no module execution."""
    name, start, duration, pid, tid, rid, parent = _columns(data, path)
    rows: dict[int, int] = {}
    for i, r in enumerate(rid):
        if r is not None and name[i] is not None:
            rows[int(r)] = i
    modules: dict[int, tuple[str, int | None]] = {}
    thunks: dict[int, str] = {}
    for r, i in rows.items():
        key = module_key(name[i]) if "XlaModule:" in name[i] else None
        if key is not None:
            modules[r] = key
            continue
        op = thunk_op(name[i]) if "Thunk:" in name[i] else None
        if op is not None:
            thunks[r] = op
    parents_of_thunks = {int(parent[rows[r]]) for r in thunks if parent[rows[r]] is not None}
    launches: dict[int, list[Launch]] = {m: [] for m in modules}
    outside = 0
    for r, op in thunks.items():
        if r in parents_of_thunks:
            continue  # a while/conditional thunk: its body's thunks count
        i = rows[r]
        if duration[i] is None or start[i] is None:
            continue
        up = parent[i]
        while up is not None and int(up) in rows and int(up) not in modules:
            up = parent[rows[int(up)]]
        if up is None or int(up) not in modules:
            outside += 1
            continue
        launches[int(up)].append(Launch(op, float(start[i]), float(duration[i])))
    executions = []
    for r, (module, program_id) in modules.items():
        i = rows[r]
        if duration[i] is None:
            continue
        executions.append(
            Execution(
                module,
                program_id,
                f"{pid[i]}/{tid[i]}",
                float(start[i]),
                float(duration[i]),
                tuple(launches[r]),
            )
        )
    return executions, outside


def _device_text(archive: _Archive, program: tuple[str, int | None] | None) -> str | None:
    """The GPU as GpuTargetConfigProto text: the program's own dump file, else any one, else
    the device metadata's figures."""
    targets = {}
    for n in archive.names:
        m = _DUMP_TARGET.search(n)
        if m:
            targets[(m.group(2), int(m.group(1)))] = n
    if targets:
        chosen = targets.get(program) if program is not None else None
        return archive.read(chosen or sorted(targets.values())[-1]).decode("utf-8", "replace")
    meta = archive.find("device-metadata.parquet")
    if meta is None:
        return None
    from .device_text import target_config_text

    data = _parquet(archive, meta)

    def first(column: str) -> Any:
        for key, values in data.items():
            if key.endswith(f"'{column}')") and values:
                return values[0]
        return None

    return target_config_text(
        name=first("name"),
        core_count=first("smCount"),
        clock_hz=first("clockRate"),
        memory_bandwidth=first("memoryBandwidth"),
        l2_cache_size=first("l2CacheSize"),
        compute_capability=(first("computeMajor"), first("computeMinor")),
        shared_memory_per_core=first("maxShmemPerSm"),
        shared_memory_per_block=first("maxShmemPerBlock"),
        threads_per_warp=first("threadsPerWarp"),
        threads_per_block_limit=first("maxThreadsPerBlock"),
        registers_per_block_limit=first("maxRegistersPerBlock"),
    )


def read_nsys_jax(path: str, warmup: int | None = None) -> Profile:
    archive = _Archive(path)
    trace = archive.find(TRACE)
    if trace is None:
        raise ProfileError(f"{path}: no {TRACE} in this nsys-jax archive")
    executions, outside = executions_from_ranges(_parquet(archive, trace), path)
    if not executions:
        raise ProfileError(f"{path}: {trace} holds no XlaModule execution")
    notes = []
    if outside:
        notes.append(f"{outside} thunk ranges lie under no XlaModule range (not counted)")
    programs = summarize(executions, tuple(notes), warmup)
    hlo: dict[tuple[str, int | None], Callable[[], bytes]] = {}
    for n in archive.names:
        m = _DUMP_HLO.search(n)
        if m:
            hlo[(m.group(2), int(m.group(1)))] = lambda n=n: archive.read(n)
    main = max(programs, key=lambda p: (p.step_ns or 0) * p.executions)
    return Profile(
        path,
        "nsys-jax",
        programs,
        _device_text(archive, (main.module, main.program_id)),
        hlo,
        tuple(notes),
    )
