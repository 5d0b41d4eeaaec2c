"""Collectives as XLA estimates them: every numeric assertion of XLA's
``collective_interpolator_test.cc`` (zml/xla at 1e203b53): the 47 nearest-neighbour cases over
the test's own profile space and the two default-table cases."""

from __future__ import annotations

import pytest

from hloidx import parse_hlo
from hloidx.perf.collective_table import (
    MULTI_HOST_NON_WORLD,
    MULTI_HOST_WORLD,
    SINGLE_HOST,
    CollectiveTable,
    bytes_transferred,
    communication_type,
    default_table,
    device_list,
)

GPUS = 8
_OPCODES = {
    "AllReduce": "all-reduce",
    "AllReduceStart": "all-reduce",  # XLA's ConstructModule builds a synchronous all-reduce
    "ReduceScatter": "reduce-scatter",
    "AllGather": "all-gather",
    "AllGatherStart": "all-gather",  # ... and a synchronous all-gather
    "AllToAll": "all-to-all",
}


def _iota(comm: str, hosts: int) -> tuple[str, int]:
    """XLA's test ``CommToDeviceList``: the iota text and the devices per group."""
    if comm == "SINGLE_HOST":
        return f"[{hosts},{GPUS}]<=[{hosts * GPUS}]", GPUS
    if comm == "MULTI_HOST_WORLD_LEVEL":
        return f"[1,{hosts * GPUS}]<=[{hosts * GPUS}]", hosts * GPUS
    return f"[{GPUS},{hosts}]<=[{hosts},{GPUS}]T(1,0)", hosts


def _collective(op: str, comm: str, tensor_size: int, hosts: int):
    """XLA's test ``CollectiveInstruction`` + ``ConstructModule``: f32, channel_id=1,
    use_global_device_ids=true."""
    opcode = _OPCODES[op]
    groups, per_group = _iota(comm, hosts)
    if opcode == "reduce-scatter":
        out = tensor_size // (4 * per_group)
        operand, extra = out * per_group, ", dimensions={0}, to_apply=add"
    elif opcode == "all-gather":
        out = tensor_size // 4
        operand, extra = out // per_group, ", dimensions={0}"
    else:
        out = operand = tensor_size // 4
        extra = ", to_apply=add" if opcode == "all-reduce" else ", dimensions={0}"
    text = f"""HloModule m

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY e {{
  p = f32[{operand}] parameter(0)
  ROOT c = f32[{out}] {opcode}(p){extra}, replica_groups={groups}, channel_id=1, use_global_device_ids=true
}}
"""
    return parse_hlo(text, verify=False).entry.root


# XLA's test_space_: (opcode, comm, tensor_size, num_nodes, network throughput bytes/s)
SPACE = [
    ("AllReduce", "MULTI_HOST_WORLD_LEVEL", 1024, 2, 1024),
    ("AllReduce", "MULTI_HOST_WORLD_LEVEL", 2 * 1024, 2, 2 * 1024),
    ("AllReduce", "MULTI_HOST_WORLD_LEVEL", 1024, 4, 4 * 1024),
    ("AllReduce", "MULTI_HOST_WORLD_LEVEL", 2 * 1024, 4, 5 * 1024),
    ("AllReduce", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 2, 512),
    ("AllReduce", "MULTI_HOST_NON_WORLD_LEVEL", 2 * 1024, 2, 2 * 512),
    ("AllReduce", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 4, 4 * 512),
    ("AllReduce", "MULTI_HOST_NON_WORLD_LEVEL", 2 * 1024, 4, 5 * 512),
    ("AllReduce", "SINGLE_HOST", 1024, 2, 2048),
    ("AllReduce", "SINGLE_HOST", 2 * 1024, 2, 2 * 2048),
    ("AllReduce", "SINGLE_HOST", 1024, 4, 2048),
    ("AllReduce", "SINGLE_HOST", 2 * 1024, 4, 2 * 2048),
    ("ReduceScatter", "MULTI_HOST_WORLD_LEVEL", 1024, 2, 1024),
    ("ReduceScatter", "MULTI_HOST_WORLD_LEVEL", 2 * 1024, 2, 2 * 1024),
    ("ReduceScatter", "MULTI_HOST_WORLD_LEVEL", 1024, 4, 4 * 1024),
    ("ReduceScatter", "MULTI_HOST_WORLD_LEVEL", 2 * 1024, 4, 5 * 1024),
    ("ReduceScatter", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 2, 512),
    ("ReduceScatter", "MULTI_HOST_NON_WORLD_LEVEL", 2 * 1024, 2, 2 * 512),
    ("ReduceScatter", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 4, 4 * 512),
    ("ReduceScatter", "MULTI_HOST_NON_WORLD_LEVEL", 2 * 1024, 4, 5 * 512),
    ("ReduceScatter", "SINGLE_HOST", 1024, 2, 2048),
    ("ReduceScatter", "SINGLE_HOST", 2 * 1024, 2, 2 * 2048),
    ("ReduceScatter", "SINGLE_HOST", 1024, 4, 2048),
    ("ReduceScatter", "SINGLE_HOST", 2 * 1024, 4, 2 * 2048),
    ("AllGather", "MULTI_HOST_WORLD_LEVEL", 1024, 2, 1024),
    ("AllGather", "MULTI_HOST_WORLD_LEVEL", 2 * 1024, 2, 2 * 1024),
    ("AllGather", "MULTI_HOST_WORLD_LEVEL", 1024, 4, 4 * 1024),
    ("AllGather", "MULTI_HOST_WORLD_LEVEL", 2 * 1024, 4, 5 * 1024),
    ("AllGather", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 2, 512),
    ("AllGather", "MULTI_HOST_NON_WORLD_LEVEL", 2 * 1024, 2, 2 * 512),
    ("AllGather", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 4, 4 * 512),
    ("AllGather", "MULTI_HOST_NON_WORLD_LEVEL", 2 * 1024, 4, 5 * 512),
    ("AllGather", "SINGLE_HOST", 1024, 2, 2048),
    ("AllGather", "SINGLE_HOST", 2 * 1024, 2, 2 * 2048),
    ("AllGather", "SINGLE_HOST", 1024, 4, 2048),
    ("AllGather", "SINGLE_HOST", 2 * 1024, 4, 2 * 2048),
    ("AllToAll", "SINGLE_HOST", 1024, 1, 1024),
    ("AllToAll", "MULTI_HOST_WORLD_LEVEL", 1024, 2, 2048),
    ("AllToAll", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 2, 4096),
]

# XLA's NextNeighbourInterpolation cases: (name, opcode, comm, tensor_size, num_nodes, seconds)
CASES = [
    ("AR_rail_aligned_exact_nodes", "AllReduce", "MULTI_HOST_WORLD_LEVEL", 1024, 2, 1),
    ("AR_rail_aligned_extrapolate_nodes", "AllReduce", "MULTI_HOST_WORLD_LEVEL", 1024, 8, 0.250),
    (
        "AR_rail_aligned_extrapolate_tensor_size",
        "AllReduce",
        "MULTI_HOST_WORLD_LEVEL",
        4 * 1024,
        2,
        2,
    ),
    ("AR_rail_aligned_interpolate_nodes", "AllReduce", "MULTI_HOST_WORLD_LEVEL", 1024, 3, 1),
    (
        "AR_rail_aligned_interpolate_tensor_size",
        "AllReduce",
        "MULTI_HOST_WORLD_LEVEL",
        1024 + 256,
        2,
        1.250,
    ),
    ("AR_nonrail_aligned_exact_nodes", "AllReduce", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 2, 2),
    (
        "AR_nonrail_aligned_extrapolate_nodes",
        "AllReduce",
        "MULTI_HOST_NON_WORLD_LEVEL",
        1024,
        8,
        0.500,
    ),
    (
        "AR_nonrail_aligned_extrapolate_tensor_size",
        "AllReduce",
        "MULTI_HOST_NON_WORLD_LEVEL",
        4 * 1024,
        2,
        4,
    ),
    ("AR_nonrail_aligned_interpolate_nodes", "AllReduce", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 3, 2),
    (
        "AR_nonrail_aligned_interpolate_tensor_size",
        "AllReduce",
        "MULTI_HOST_NON_WORLD_LEVEL",
        1024 + 256,
        2,
        2.500,
    ),
    ("AR_single_host_aligned_extrapolate_nodes", "AllReduce", "SINGLE_HOST", 1024, 8, 0.500),
    ("AR_single_host_aligned_extrapolate_tensor_size", "AllReduce", "SINGLE_HOST", 4 * 1024, 2, 1),
    ("AR_single_host_aligned_interpolate_nodes", "AllReduce", "SINGLE_HOST", 1024, 3, 0.500),
    (
        "AR_single_host_aligned_interpolate_tensor_size",
        "AllReduce",
        "SINGLE_HOST",
        1024 + 256,
        2,
        0.625,
    ),
    (
        "ARS_single_host_aligned_interpolate_tensor_size",
        "AllReduceStart",
        "SINGLE_HOST",
        1024 + 256,
        2,
        0.625,
    ),
    ("RS_rail_aligned_exact_nodes", "ReduceScatter", "MULTI_HOST_WORLD_LEVEL", 1024, 2, 1),
    (
        "RS_rail_aligned_extrapolate_nodes",
        "ReduceScatter",
        "MULTI_HOST_WORLD_LEVEL",
        1024,
        8,
        0.250,
    ),
    (
        "RS_rail_aligned_extrapolate_tensor_size",
        "ReduceScatter",
        "MULTI_HOST_WORLD_LEVEL",
        4 * 1024,
        2,
        2,
    ),
    (
        "RS_rail_aligned_interpolate_nodes",
        "ReduceScatter",
        "MULTI_HOST_WORLD_LEVEL",
        1024,
        3,
        0.9375,
    ),
    (
        "RS_rail_aligned_interpolate_tensor_size",
        "ReduceScatter",
        "MULTI_HOST_WORLD_LEVEL",
        1024 + 256,
        2,
        1.250,
    ),
    ("RS_nonrail_aligned_exact_nodes", "ReduceScatter", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 2, 2),
    (
        "RS_nonrail_aligned_extrapolate_nodes",
        "ReduceScatter",
        "MULTI_HOST_NON_WORLD_LEVEL",
        1024,
        8,
        0.500,
    ),
    (
        "RS_nonrail_aligned_extrapolate_tensor_size",
        "ReduceScatter",
        "MULTI_HOST_NON_WORLD_LEVEL",
        4 * 1024,
        2,
        4,
    ),
    (
        "RS_nonrail_aligned_interpolate_nodes",
        "ReduceScatter",
        "MULTI_HOST_NON_WORLD_LEVEL",
        1032,
        3,
        2.015625,
    ),
    (
        "RS_nonrail_aligned_interpolate_tensor_size",
        "ReduceScatter",
        "MULTI_HOST_NON_WORLD_LEVEL",
        1024 + 256,
        2,
        2.500,
    ),
    ("RS_single_host_aligned_extrapolate_nodes", "ReduceScatter", "SINGLE_HOST", 1024, 8, 0.500),
    (
        "RS_single_host_aligned_extrapolate_tensor_size",
        "ReduceScatter",
        "SINGLE_HOST",
        4 * 1024,
        2,
        1,
    ),
    ("RS_single_host_aligned_interpolate_nodes", "ReduceScatter", "SINGLE_HOST", 1024, 3, 0.500),
    (
        "RS_single_host_aligned_interpolate_tensor_size",
        "ReduceScatter",
        "SINGLE_HOST",
        1024 + 256,
        2,
        0.625,
    ),
    ("AG_rail_aligned_exact_nodes", "AllGather", "MULTI_HOST_WORLD_LEVEL", 1024, 2, 1),
    ("AG_rail_aligned_extrapolate_nodes", "AllGather", "MULTI_HOST_WORLD_LEVEL", 1024, 8, 0.250),
    (
        "AG_rail_aligned_extrapolate_tensor_size",
        "AllGather",
        "MULTI_HOST_WORLD_LEVEL",
        4 * 1024,
        2,
        2,
    ),
    ("AG_rail_aligned_interpolate_nodes", "AllGather", "MULTI_HOST_WORLD_LEVEL", 1056, 3, 1.03125),
    (
        "AG_rail_aligned_interpolate_tensor_size",
        "AllGather",
        "MULTI_HOST_WORLD_LEVEL",
        1024 + 256,
        2,
        1.250,
    ),
    ("AG_nonrail_aligned_exact_nodes", "AllGather", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 2, 2),
    (
        "AG_nonrail_aligned_extrapolate_nodes",
        "AllGather",
        "MULTI_HOST_NON_WORLD_LEVEL",
        1024,
        8,
        0.500,
    ),
    (
        "AG_nonrail_aligned_extrapolate_tensor_size",
        "AllGather",
        "MULTI_HOST_NON_WORLD_LEVEL",
        4 * 1024,
        2,
        4,
    ),
    (
        "AG_nonrail_aligned_interpolate_nodes",
        "AllGather",
        "MULTI_HOST_NON_WORLD_LEVEL",
        1032,
        3,
        2.015625,
    ),
    (
        "AG_nonrail_aligned_interpolate_tensor_size",
        "AllGather",
        "MULTI_HOST_NON_WORLD_LEVEL",
        1024 + 256,
        2,
        2.500,
    ),
    ("AG_single_host_aligned_extrapolate_nodes", "AllGather", "SINGLE_HOST", 1024, 8, 0.500),
    ("AG_single_host_aligned_extrapolate_tensor_size", "AllGather", "SINGLE_HOST", 4 * 1024, 2, 1),
    ("AG_single_host_aligned_interpolate_nodes", "AllGather", "SINGLE_HOST", 1024, 3, 0.500),
    (
        "AG_single_host_aligned_interpolate_tensor_size",
        "AllGather",
        "SINGLE_HOST",
        1024 + 256,
        2,
        0.625,
    ),
    (
        "AGS_single_host_aligned_interpolate_tensor_size",
        "AllGatherStart",
        "SINGLE_HOST",
        1024 + 256,
        2,
        0.625,
    ),
    ("A2A_rail_aligned_exact_match", "AllToAll", "MULTI_HOST_WORLD_LEVEL", 1024, 2, 0.500),
    ("A2A_nonrail_aligned_exact_match", "AllToAll", "MULTI_HOST_NON_WORLD_LEVEL", 1024, 2, 0.250),
    ("A2A_single_host_exact_match", "AllToAll", "SINGLE_HOST", 1024, 1, 1),
]


@pytest.fixture(scope="module")
def profile_table() -> CollectiveTable:
    table = CollectiveTable(GPUS, nearest=True, name="test profiles")
    for op, comm, size, hosts, throughput in SPACE:
        table.add(_collective(op, comm, size, hosts), throughput)
    return table


def test_the_case_list_is_xlas():
    assert len(CASES) == 47
    assert len(SPACE) == 39


@pytest.mark.parametrize(
    ("op", "comm", "size", "hosts", "seconds"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_xla_nearest_neighbour_cases(profile_table, op, comm, size, hosts, seconds):
    estimate = profile_table.estimate(_collective(op, comm, size, hosts))
    assert estimate.time_ns == seconds * 1e9  # exact, as XLA's EXPECT_EQ on durations


@pytest.mark.parametrize(("profile", "micros"), [("sm_90", 49.312), ("sm_100", 45.024)])
def test_xla_default_profile(profile, micros):
    """XLA's LoadsDefaultProfile: f32[256] all-reduce over [1,8]<=[8] (exact equality)."""
    instr = parse_hlo(
        """HloModule m, num_partitions=8

wrapped_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT _ = f32[] add(a,b)
}

ENTRY main {
  p = f32[256] parameter(0)
  ROOT _ = f32[256] all-reduce(p), to_apply=wrapped_add, replica_groups=[1,8]<=[8], use_global_device_ids=true, channel_id=1
}
"""
    ).entry.root
    estimate = default_table(profile).estimate(instr)
    assert estimate.time_ns == round(micros * 1000 * 4) / 4
    assert estimate.match == "exact"


def test_communication_types():
    def comm(op, kind, hosts):
        return communication_type(_collective(op, kind, 4096, hosts), GPUS)

    assert comm("AllReduce", "SINGLE_HOST", 2) == SINGLE_HOST
    assert comm("AllReduce", "MULTI_HOST_WORLD_LEVEL", 2) == MULTI_HOST_WORLD
    assert comm("AllReduce", "MULTI_HOST_NON_WORLD_LEVEL", 2) == MULTI_HOST_NON_WORLD


def test_iota_with_transpose_expands_as_xla():
    instr = _collective("AllReduce", "MULTI_HOST_NON_WORLD_LEVEL", 4096, 2)
    groups = device_list(instr).groups
    assert groups[0] == (0, 8)
    assert groups[7] == (7, 15)


def test_bytes_per_kind():
    """XLA's BytesTransferred: all-gather its output, reduce-scatter its operand."""
    assert bytes_transferred(_collective("AllGather", "SINGLE_HOST", 4096, 1)) == 4096
    assert bytes_transferred(_collective("ReduceScatter", "SINGLE_HOST", 4096, 1)) == 4096
    assert bytes_transferred(_collective("AllToAll", "SINGLE_HOST", 4096, 1)) == 4096


def test_default_table_fallback_for_explicit_groups_and_async():
    """An all-gather-start never matches an exact key (XLA keys by the async opcode): the
    fallback of all-gather answers, at the closest power of two of the size."""
    instr = parse_hlo(
        """HloModule m, num_partitions=8

ENTRY main {
  p = bf16[1000,512] parameter(0)
  ROOT s = (bf16[1000,512], bf16[8000,512]) all-gather-start(p), dimensions={0}, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, channel_id=1
}
"""
    ).entry.root
    estimate = default_table("sm_90").estimate(instr)
    assert estimate.match == "fallback"
    assert estimate.bytes == 8000 * 512 * 2
    assert estimate.communication == SINGLE_HOST
