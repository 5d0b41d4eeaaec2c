"""Small synthetic profiles for the profile readers' tests, in each format's real layout:
nsys-jax ``trace.parquet`` (both column layouts), Nsight Systems SQLite (the tables and
columns of its export schema that the reader reads, plus a few it does not), xplane."""

from __future__ import annotations

import sqlite3
from pathlib import Path

#: (name, start ns, duration ns, range id, parent id or None, GPU ops) of one NVTX range
Range = tuple[str, int, int, int, "int | None", int]


def module_range(module: str, program_id: int) -> str:
    return f"TSL:XlaModule:#hlo_module={module},program_id={program_id}#"


def thunk_range(op: str) -> str:
    return f"TSL:Thunk:#name=jit(f)/op,hlo_op={op},unique_hlo_op_id=1#"


def write_nsys_jax(folder: Path, ranges: list[Range], layout: str = "old", tid: int = 11) -> Path:
    """An nsys-jax folder with ``nvtx_gpu_proj_trace/trace.parquet`` of these ranges."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    by_id = {r[3]: r for r in ranges}

    def stack(r: Range) -> list[int]:
        out = [r[3]]
        while by_id[out[0]][4] is not None:
            out.insert(0, by_id[out[0]][4])
        return out

    children = {r[3]: sum(1 for s in ranges if s[4] == r[3]) for r in ranges}
    if layout == "old":
        table = {
            "Name": [r[0] for r in ranges],
            "Projected Start": [r[1] for r in ranges],
            "Projected Duration": [r[2] for r in ranges],
            "Orig Start": [float(r[1] - 500) for r in ranges],
            "Orig Duration": [float(r[2]) for r in ranges],
            "Style": ["PushPop"] * len(ranges),
            "PID": [10] * len(ranges),
            "TID": [tid] * len(ranges),
            "NumGPUOps": [r[5] for r in ranges],
            "Lvl": [float(len(stack(r)) - 1) for r in ranges],
            "NumChild": [children[r[3]] for r in ranges],
            "RangeId": [float(r[3]) for r in ranges],
            "ParentId": [None if r[4] is None else float(r[4]) for r in ranges],
            "RangeStack": [":" + ":".join(map(str, stack(r))) for r in ranges],
            "Rank": [0] * len(ranges),
        }
    else:  # newer Nsight: no TSL: prefix in Text, Start/End, a Domain column
        table = {
            "Text": [r[0].removeprefix("TSL:") for r in ranges],
            "Start": [r[1] for r in ranges],
            "End": [r[1] + r[2] for r in ranges],
            "Children Count": [children[r[3]] for r in ranges],
            "Range ID": [r[3] for r in ranges],
            "Parent ID": [r[4] for r in ranges],
            "PID": [10] * len(ranges),
            "Range Stack": [stack(r) for r in ranges],
            "Stack Level": [len(stack(r)) - 1 for r in ranges],
            "TID": [tid] * len(ranges),
            "Domain": ["TSL"] * len(ranges),
        }
    target = folder / "nvtx_gpu_proj_trace"
    target.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(table), target / "trace.parquet")
    return folder


SQLITE_SCHEMA = """
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE NVTX_EVENTS (start INT NOT NULL, end INT, eventType INT NOT NULL, rangeId INT,
  category INT, color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT,
  domainId INT, uint64Value INT, int64Value INT, doubleValue REAL, uint32Value INT,
  int32Value INT, floatValue REAL, jsonTextId INT, jsonText TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT NOT NULL, end INT NOT NULL,
  eventClass INT NOT NULL, globalTid INT, correlationId INT, nameId INT NOT NULL,
  returnValue INT NOT NULL, callchainId INT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL,
  deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT,
  globalPid INT, demangledName INT NOT NULL, shortName INT NOT NULL, mangledName INT,
  gridX INT NOT NULL, gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL,
  blockY INT NOT NULL, blockZ INT NOT NULL, registersPerThread INT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (id INT, name TEXT, busLocation TEXT, l2CacheSize INT,
  totalMemory INT, memoryBandwidth INT, clockRate INT, smCount INT, computeMajor INT,
  computeMinor INT, maxShmemPerSm INT, threadsPerWarp INT);
"""


def write_sqlite(
    path: Path,
    ranges: list[tuple[int, int, str]],
    kernels: list[tuple[int, int, int]],
    tid: int = 77,
) -> Path:
    """ranges: (start, end, text) push/pop ranges of domain TSL on thread ``tid`` (texts
    through StringIds); kernels: (launch call time, kernel start, kernel end) on GPU 0."""
    db = sqlite3.connect(path)
    db.executescript(SQLITE_SCHEMA)
    db.execute("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'fusion_kernel')")
    db.execute(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
        "VALUES (0, NULL, 75, 'TSL', ?, 5)",
        (tid,),
    )
    db.execute(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
        "VALUES (1, 2, 59, 'Thunk:#hlo_op=other_domain#', ?, 0)",
        (tid,),
    )
    for k, (start, end, text) in enumerate(ranges):
        db.execute("INSERT INTO StringIds VALUES (?, ?)", (100 + k, text))
        db.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) "
            "VALUES (?, ?, 59, ?, ?, 5)",
            (start, end, 100 + k, tid),
        )
    for k, (called, start, end) in enumerate(kernels):
        db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, 1, 0, NULL)",
            (called, called + 5, tid, 1000 + k),
        )
        db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
            "(?, ?, 0, 1, 7, ?, 1, 2, 2, NULL, 1, 1, 1, 128, 1, 1, 32)",
            (start, end, 1000 + k),
        )
    db.execute(
        "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', '0000:01:00.0', "
        "52428800, 85899345920, 3352320000000, 1980000000, 132, 9, 0, 233472, 32)"
    )
    db.commit()
    db.close()
    return path


def write_xplane(
    path: Path, kernels: list[tuple[int, int, str, str, int]], host_launches: int = 0
) -> Path:
    """kernels: (start ns, duration ns, hlo_op, hlo_module, program_id) on /device:GPU:0;
    ``host_launches``: that many ``<module>:XLA GPU module`` events on a host thread."""
    from hloidx.protos import xplane_pb2

    space = xplane_pb2.XSpace()
    if host_launches:
        host = space.planes.add(id=2, name="/host:CPU")
        host.event_metadata[1].id = 1
        host.event_metadata[1].name = f"{kernels[0][3]}:XLA GPU module"
        thread = host.lines.add(id=1, name="python3", timestamp_ns=0)
        for k in range(host_launches):
            thread.events.add(metadata_id=1, offset_ps=k * 10**6, duration_ps=10**5)
    plane = space.planes.add(id=1, name="/device:GPU:0")
    names = [
        "hlo_op",
        "hlo_module",
        "program_id",
        "correlation_id",
        "core_count",
        "clock_rate",
        "memory_bandwidth",
        "compute_cap_major",
        "compute_cap_minor",
        "device_vendor",
    ]
    for k, name in enumerate(names, start=1):
        plane.stat_metadata[k].id = k
        plane.stat_metadata[k].name = name
    refs: dict[str, int] = {}

    def ref(text: str) -> int:
        if text not in refs:
            refs[text] = 100 + len(refs)
            plane.stat_metadata[refs[text]].id = refs[text]
            plane.stat_metadata[refs[text]].name = text
        return refs[text]

    plane.stats.add(metadata_id=5, int64_value=132)
    plane.stats.add(metadata_id=6, int64_value=1980000)
    plane.stats.add(metadata_id=7, uint64_value=3352320000000)
    plane.stats.add(metadata_id=8, int64_value=9)
    plane.stats.add(metadata_id=9, int64_value=0)
    plane.stats.add(metadata_id=10, str_value="Nvidia")
    plane.event_metadata[1].id = 1
    plane.event_metadata[1].name = "some_kernel"
    line = plane.lines.add(id=7, name="Stream #7(Kernel)", timestamp_ns=1000)
    for k, (start, duration, op, module, program) in enumerate(kernels):
        event = line.events.add(
            metadata_id=1, offset_ps=(start - 1000) * 1000, duration_ps=duration * 1000
        )
        event.stats.add(metadata_id=1, ref_value=ref(op))
        event.stats.add(metadata_id=2, ref_value=ref(module))
        event.stats.add(metadata_id=3, int64_value=program)
        event.stats.add(metadata_id=4, uint64_value=k)
    path.write_bytes(space.SerializeToString())
    return path
