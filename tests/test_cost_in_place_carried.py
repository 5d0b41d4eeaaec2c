"""Issue 42, item 1 (the default model): buffers XLA:GPU updates in place outside one fusion's
body — an ``all-reduce-start``'s operands, a sort's buffers, a while loop's carried state —
and the copies XLA makes first where it cannot update them where they are.

Each module is one XLA's own parser accepts; each expectation is physical and derived here by
hand: bytes moved over the device's DRAM bandwidth (``resolve_device``) plus the default model's
measured kernel floor per row and gap per launch (``hloidx/perf/data/measured_calibration.json``;
the launches inside one row, a sort's, at XLA's 1 µs launch overhead). Facts: ``alias_info.cc`` (in-place pairs: DUS, scatter, ``all-reduce-start``),
``copy_insertion.cc`` (constants, entry parameters not donated and values read later are
copied; a while loop's state is one set of buffers), ``IrEmitterUnnested::EmitSort`` (a copy
into the output buffer unless shared, then bitonic kernels in place).
"""

from __future__ import annotations

import re
from math import prod
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from in_place_modules import ns as _ns
from in_place_modules import report as _report
from in_place_modules import xla_accepts as _xla_accepts

import hloidx
from hloidx.perf.gpu_specs import resolve_device

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_NS = 1000.0  # XLA's kernel launch overhead (gpu_performance_model_base.h)
FLOOR_NS = 1874.0  # the default model's kernel floor, measured (data/measured_calibration.json)
GAP_NS = 1152.0  # the default model's measured gap between kernels, per launch
F32, S32 = 4, 4
DONATE_0 = ", input_output_alias={ {}: (0, {}, may-alias) }"


def _copies(report) -> dict[str, tuple[int, int, int]]:
    """Every copy row: name -> (bytes read, bytes written, launches)."""
    return {
        k.name: (k.bytes_read, k.bytes_written, k.launches)
        for k in report.kernels
        if k.name.split("/")[-1].startswith("copy.")
    }


def _row(report, name: str):
    return next(k for k in report.kernels if k.name == name)


# -- all-reduce-start: NCCL reduces in place, its output aliases its operand -------------------

ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

ALL_REDUCE = """HloModule ar%(alias)s
%(add)s
ENTRY e {
  p = f32[1048576] parameter(0)
  %(body)s
}
"""


def _all_reduce(body: str, alias: str = "") -> str:
    return ALL_REDUCE % {"alias": alias, "add": ADD, "body": body}


START = "ars = f32[1048576] all-reduce-start(%s), replica_groups={{0,1}}, to_apply=add%s"


@pytest.mark.parametrize(
    ("alias", "body", "copied"),
    [
        # the caller keeps p's buffer: the reduction may not land in it
        ("", [START % ("p", ""), "ROOT ard = f32[1048576] all-reduce-done(ars)"], True),
        # donated and read by nothing else: reduced where it is
        (DONATE_0, [START % ("p", ""), "ROOT ard = f32[1048576] all-reduce-done(ars)"], False),
        # a value the module computes, read by the start alone
        (
            "",
            [
                "n = f32[1048576] negate(p)",
                START % ("n", ""),
                "ROOT ard = f32[1048576] all-reduce-done(ars)",
            ],
            False,
        ),
        # donated, but read by a kernel that does not feed the start: the old value is live
        (
            DONATE_0,
            [
                START % ("p", ""),
                "k = f32[1048576] negate(p)",
                "ard = f32[1048576] all-reduce-done(ars)",
                "ROOT t = (f32[1048576], f32[1048576]) tuple(ard, k)",
            ],
            True,
        ),
        # XLA's NVSHMEM all-reduce needs separate buffers: no in-place pair, nothing to copy
        (
            "",
            [
                START
                % ("p", ', backend_config={"collective_backend_config":{"backend":"NVSHMEM"}}'),
                "ROOT ard = f32[1048576] all-reduce-done(ars)",
            ],
            False,
        ),
    ],
)
def test_an_all_reduce_start_reduces_in_place_after_the_copies_xla_makes(
    alias: str, body: list[str], copied: bool
) -> None:
    report = _report(_all_reduce("\n  ".join(body), alias))
    size = 1048576 * F32
    copies = _copies(report)
    if not copied:
        assert copies == {}
        return
    assert copies == {"copy.p": (size, size, 1)}
    copy = _row(report, "copy.p")
    assert copy.time_ns == pytest.approx(_ns(2 * size) + FLOOR_NS, rel=1e-3)
    assert "before ars updates it in place" in " ".join(copy.notes)


def test_every_operand_of_a_combined_all_reduce_start_is_its_own_in_place_pair() -> None:
    """XLA's default in-place rule: operand i shares output {i}'s buffer; both are entry
    parameters the module keeps, so both are copied first."""
    text = f"""HloModule ar2
{ADD}
ENTRY e {{
  p = f32[1024] parameter(0)
  q = f32[2048] parameter(1)
  ars = (f32[1024], f32[2048]) all-reduce-start(p, q), replica_groups={{{{0,1}}}}, to_apply=add
  ROOT ard = (f32[1024], f32[2048]) all-reduce-done(ars)
}}
"""
    report = _report(text)
    assert _copies(report) == {
        "copy.p": (1024 * F32, 1024 * F32, 1),
        "copy.q": (2048 * F32, 2048 * F32, 1),
    }


# -- sort: in its output buffer, as a sequence of bitonic kernels -------------------------------

SORT = """HloModule sort, is_scheduled=true%(alias)s

cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY e {
  x = f32[8,1048576] parameter(0)
  ROOT s = f32[8,1048576] sort(x), dimensions={1}, to_apply=cmp
}
"""


def _bitonic_kernels_for_a_million_f32() -> int:
    """XLA's EmitSort for n = 2^20 f32 keys on a device with 1024 threads and 48 KiB of
    shared memory per block: 20 stages; tile = min(4 * 1024, 49152 / 4, 2^20) = 4096 = 2^12.
    Stages 0..11 use only masks < 4096: one tiled kernel. Each stage s = 12..19 has the masks
    2^(s+1)-1 and 2^(s-1) .. 2^12 at least 4096 (s - 11 kernels of their own) followed by the
    masks below 4096 (one tiled kernel)."""
    profile = resolve_device("h100").launch_profile
    assert (profile.threads_per_block_limit, profile.shared_memory_per_block) == (1024, 49152)
    return 1 + sum((s - 11) + 1 for s in range(12, 20))  # 1 + 44 = 45


def test_a_sort_runs_its_bitonic_kernels_in_its_own_buffer() -> None:
    """A sort XLA runs (the module is scheduled: optimized, so not CUB's). The parameter is
    donated and the sort is its only reader: XLA shares its buffer with
    the output, no copy. 45 kernels each read and write the 32 MiB of keys once."""
    report = _report(SORT % {"alias": DONATE_0})
    kernels = _bitonic_kernels_for_a_million_f32()
    size = 8 * 1048576 * F32
    assert _copies(report) == {}
    row = _row(report, "s")
    assert (row.bytes_read, row.bytes_written) == (kernels * size, kernels * size)
    # one row: its kernels' bytes, its other 44 launches, one floor; one gap in the totals
    expected = kernels * _ns(2 * size) + (kernels - 1) * LAUNCH_NS + FLOOR_NS + GAP_NS
    assert report.total_time_ns == pytest.approx(expected, rel=1e-3)


def test_a_sort_of_a_kept_parameter_copies_it_into_its_output_first() -> None:
    """Not donated: XLA's sort emitter adds a device-to-device copy of the 32 MiB first."""
    report = _report(SORT % {"alias": ""})
    size = 8 * 1048576 * F32
    assert _copies(report) == {"copy.x": (size, size, 1)}
    kernels = _bitonic_kernels_for_a_million_f32()
    sort = kernels * _ns(2 * size) + (kernels - 1) * LAUNCH_NS + FLOOR_NS + GAP_NS
    expected = (_ns(2 * size) + FLOOR_NS + GAP_NS) + sort
    assert report.total_time_ns == pytest.approx(expected, rel=1e-3)


def test_a_sort_within_one_tile_is_one_kernel_and_copies_an_operand_read_elsewhere() -> None:
    """Keys and values, 1000 of each per row (scheduled: the sort XLA runs): tile = min(4096, 49152 / 8, 1024) = 1024 > every
    mask, so one tiled kernel. The keys are also returned: their buffer is not the sort's
    alone (XLA shares only with a sole reader), so they are copied first; the iota values
    are not."""
    text = """HloModule kv, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }

cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY e {
  k = f32[64,1000] parameter(0)
  v = s32[64,1000] iota(), iota_dimension=1
  s = (f32[64,1000], s32[64,1000]) sort(k, v), dimensions={1}, to_apply=cmp
  ROOT t = (f32[64,1000], (f32[64,1000], s32[64,1000])) tuple(k, s)
}
"""
    report = _report(text)
    keys, values = 64 * 1000 * F32, 64 * 1000 * S32
    assert _copies(report) == {"copy.k": (keys, keys, 1)}
    row = _row(report, "s")
    assert (row.bytes_read, row.bytes_written) == (keys + values, keys + values)
    assert row.time_ns == pytest.approx(_ns(2 * (keys + values)) + FLOOR_NS, rel=0.01)


def test_a_sort_xla_hands_to_cub_before_optimization_is_not_the_bitonic_kernel() -> None:
    """The same sort before optimization: XLA:GPU's SortRewriter makes it a CUB radix sort
    (one operand, minor dimension, 8M >= 16385 elements, a plain LT comparator), out of place:
    no copy first, and not 45 passes over the keys (the library roofline: one read, one
    write)."""
    report = _report((SORT % {"alias": ""}).replace(", is_scheduled=true", ""))
    size = 8 * 1048576 * F32
    assert _copies(report) == {}
    row = _row(report, "s")
    assert (row.bytes_read, row.bytes_written) == (size, size)
    assert any("CUB radix sort" in n for n in row.notes)


CALLED_SORT = """HloModule sc%s

cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

sorter {
  a = f32[1024] parameter(0)
  ROOT s = f32[1024] sort(a), dimensions={0}, to_apply=cmp
}

ENTRY e {
  x = f32[1024] parameter(0)
  ROOT c = f32[1024] call(x), to_apply=sorter
}
"""


@pytest.mark.parametrize("donated", [False, True])
def test_a_sort_in_a_call_copies_the_callers_kept_parameter(donated: bool) -> None:
    """XLA inlines the call: the sort's operand is the entry parameter x (4 KiB), copied first
    unless donated."""
    report = _report(CALLED_SORT % (DONATE_0 if donated else ""))
    expected = {} if donated else {"c/copy.a": (1024 * F32, 1024 * F32, 1)}
    assert _copies(report) == expected


# -- while loops: the carried state is one set of buffers ---------------------------------------

SCAN = """HloModule scan%(alias)s

cond {
  cp = (s32[], f32[64,1024,1024], f32[1,1024,1024], f32[1,1024,1024]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  bp = (s32[], f32[64,1024,1024], f32[1,1024,1024], f32[1,1024,1024]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  ys = f32[64,1024,1024] get-tuple-element(bp), index=1
  x = f32[1,1024,1024] get-tuple-element(bp), index=2
  acc = f32[1,1024,1024] get-tuple-element(bp), index=3
  z = s32[] constant(0)
  ys1 = f32[64,1024,1024] dynamic-update-slice(ys, x, i, z, z)
  %(extra)s
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[64,1024,1024], f32[1,1024,1024], f32[1,1024,1024]) tuple(i1, ys1, x, %(acc)s)
}

ENTRY e {
  x = f32[1,1024,1024] parameter(0)
  zero = f32[] constant(0)
  %(ys0)s
  acc0 = f32[1,1024,1024] broadcast(zero), dimensions={}
  c0 = s32[] constant(0)
  init = (s32[], f32[64,1024,1024], f32[1,1024,1024], f32[1,1024,1024]) tuple(c0, ys0, x, acc0)
  w = (s32[], f32[64,1024,1024], f32[1,1024,1024], f32[1,1024,1024]) while(init), condition=cond, body=body
  ROOT ys = f32[64,1024,1024] get-tuple-element(w), index=1
}
"""
STACK = 64 * 1024 * 1024 * F32
LAYER = 1024 * 1024 * F32
BROADCAST_YS0 = "ys0 = f32[64,1024,1024] broadcast(zero), dimensions={}"
PARAM_YS0 = "ys0 = f32[64,1024,1024] parameter(1)"


def _scan(ys0: str = BROADCAST_YS0, extra: str = "", acc: str = "acc", alias: str = "") -> str:
    return SCAN % {"ys0": ys0, "extra": extra, "acc": acc, "alias": alias}


def test_a_scan_stacks_each_layer_in_place_in_the_carried_buffer() -> None:
    """``lax.scan`` stacking its per-layer results: the DUS writes 4 MiB into the 256 MiB
    stack the loop carries, 64 times, with no copy of the stack. The counter is copied (it is
    a constant before the loop; in the body the DUS still reads the old count after the add
    writes the new one), as XLA's optimized HLO of a scan shows; x passes through: no copy."""
    report = _report(_scan())
    assert _copies(report) == {"copy.c0": (S32, S32, 1), "w/copy.i": (S32, S32, 64)}
    row = _row(report, "w/ys1")
    assert (row.bytes_read, row.bytes_written, row.launches) == (LAYER + 2 * S32, LAYER, 64)
    expected = 64 * (_ns(2 * LAYER + 2 * S32) + FLOOR_NS)
    assert row.time_ns == pytest.approx(expected, rel=1e-3)


@settings(max_examples=8, deadline=None)
@given(layers=st.integers(min_value=2, max_value=4096))
def test_a_scan_update_in_place_does_not_depend_on_the_stack_it_lands_in(layers: int) -> None:
    """XLA's ``DusScalesWithUpdates`` in a loop: however many layers the carried stack holds
    (and the loop runs), each trip moves the 4 MiB layer and its indices, and the stack is
    never copied."""
    report = _report(_scan().replace("64", str(layers)))
    row = _row(report, "w/ys1")
    assert (row.bytes_read, row.bytes_written, row.launches) == (LAYER + 2 * S32, LAYER, layers)
    assert all(b < LAYER for b, _, _ in _copies(report).values())


@pytest.mark.parametrize("donated", [False, True])
def test_a_carried_buffer_from_a_kept_parameter_is_copied_once_before_the_loop(
    donated: bool,
) -> None:
    """The stack's init is entry parameter 1: the loop writes into its state buffers, so XLA
    copies the 256 MiB once before the loop, unless the module donates the parameter."""
    alias = ", input_output_alias={ {}: (1, {}, may-alias) }" if donated else ""
    report = _report(_scan(PARAM_YS0, alias=alias))
    copies = _copies(report)
    assert ("copy.ys0" in copies) is not donated
    if not donated:
        assert copies["copy.ys0"] == (STACK, STACK, 1)
        copy = _row(report, "copy.ys0")
        # (the copy kernel's modelled compute, 95% hidden under its memory time: < 1%)
        assert copy.time_ns == pytest.approx(_ns(2 * STACK) + FLOOR_NS, rel=0.01)
    assert _row(report, "w/ys1").bytes_written == LAYER


def test_a_carried_buffer_read_after_its_update_in_the_iteration_is_copied_each_trip() -> None:
    """The body also reads the old stack (a dynamic-slice the DUS does not depend on): the
    DUS cannot overwrite it in place, so XLA copies the 256 MiB in every iteration."""
    extra = (
        "prev = f32[1,1024,1024] dynamic-slice(ys, i, z, z), dynamic_slice_sizes={1,1024,1024}\n"
        "  acc1 = f32[1,1024,1024] add(acc, prev)"
    )
    report = _report(_scan(extra=extra, acc="acc1"))
    copies = _copies(report)
    assert copies["w/copy.ys"] == (STACK, STACK, 64)
    copy = _row(report, "w/copy.ys")
    assert copy.time_ns == pytest.approx(64 * (_ns(2 * STACK) + FLOOR_NS), rel=0.01)
    assert set(copies) == {"copy.c0", "w/copy.i", "w/copy.ys"}


def test_a_scan_before_optimization_gets_the_copies_xla_inserted() -> None:
    """The corpus's RNN scan (written by XLA): the copies hloidx adds to the module before
    optimization are the ones XLA's own optimized module holds (the carry h0, an entry
    parameter; the counter's constant init; the counter in the body)."""
    corpus = ROOT / "tests" / "data" / "corpus"
    optimized = (corpus / "rnn_scan.xla_dump.after_optimizations.hlo").read_text()
    xla = []
    computation = ""
    for line in optimized.splitlines():
        head = re.match(r"(ENTRY )?%?([\w.\-]+) .*\{$", line)
        if head:
            computation = "entry" if head.group(1) else head.group(2)
        found = re.search(r"= (\w+)\[([\d,]*)\][^ ]* copy\(", line)
        if found:
            dims = [int(d) for d in found.group(2).split(",") if d]
            size = {"f32": 4, "s32": 4}[found.group(1)] * prod(dims)
            xla.append((computation != "entry", size))
    report = _report((corpus / "rnn_scan.pre.hlo").read_text())
    ours = [(len(name.split("/")) > 1, r) for name, (r, _, _) in _copies(report).items()]
    assert sorted(ours) == sorted(xla)
    assert sorted(xla) == [(False, 4), (False, 3 * 32 * 4), (True, 4)]


# -- hloidx threads: the in-place DUS emitter says whether XLA copies the base first ------------

DUS = """HloModule dus%s

fused_dus {
  p0 = f32[64,256] parameter(0)
  p1 = f32[1,256] parameter(1)
  p2 = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[64,256] dynamic-update-slice(p0, p1, p2, z)
}

ENTRY e {
  stack = f32[64,256] parameter(0)
  layer = f32[1,256] parameter(1)
  i = s32[] parameter(2)
  ROOT f = f32[64,256] fusion(stack, layer, i), kind=kLoop, calls=fused_dus
}
"""


@pytest.mark.parametrize(
    ("alias", "label", "why"),
    [
        (DONATE_0, "dynamic-update-slice (in place)", None),
        (
            "",
            "dynamic-update-slice (in place, on a copy of the base)",
            "stack is an entry parameter the module does not donate",
        ),
    ],
)
def test_threads_says_whether_the_dus_base_is_updated_where_it_is(
    alias: str, label: str, why: str | None
) -> None:
    text = DUS % alias
    _xla_accepts(text)
    out = str(hloidx.threads(text, "f"))
    assert f"f (e): {label} emitter" in out
    assert "if the buffers alias" not in out
    assert ("XLA copies it first" in out) is (why is not None)
    if why is not None:
        assert why in out
