"""The step on a timeline (issue 36): hand-computed timelines with injected durations, the
properties every timeline keeps, loops, conditionals, the module's stage, the trace JSON."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx.hlo.syntax import parse_hlo
from hloidx.perf import estimate_module
from hloidx.perf.loops import walk_module
from hloidx.perf.stage import module_stage
from hloidx.perf.step import START_DONE_COST_NS, CollectiveTime, simulate_step
from hloidx.render.trace import TRACE_SCHEMA, trace_events

ROOT = Path(__file__).resolve().parent.parent
US = 1000.0


def _module(body: list[str], scheduled: bool = True, extra: str = "") -> str:
    head = "HloModule m" + (", is_scheduled=true" if scheduled else "")
    lines = "\n  ".join(body)
    return f"""{head}
{extra}
ENTRY main {{
  p = f32[1024] parameter(0)
  {lines}
}}
"""


def _step(text: str, kernel_us: dict[str, float], collective_us: dict[str, float]):
    program = walk_module(parse_hlo(text))

    def kernel_ns(kernel):
        return kernel_us[kernel.name] * US

    def collective_time(instr):
        found = collective_us.get(instr.name)
        return None if found is None else CollectiveTime(found * US)

    return simulate_step(program, kernel_ns, collective_time)


def _ar_start(name: str, operand: str) -> str:
    return (
        f"{name} = f32[1024] all-reduce-start({operand}), replica_groups={{{{0,1}}}}, to_apply=add"
    )


_ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""


def test_an_all_reduce_half_hidden_by_two_kernels() -> None:
    # start (1 us) | kernels k1, k2 (10 us each) beside the 25 us all-reduce | done waits
    # until 1 + 25 = 26 us: 5 us exposed | done (1 us) | k3 (10 us): 37 us in all
    text = _module(
        [
            _ar_start("ars", "p"),
            "k1 = f32[1024] negate(p)",
            "k2 = f32[1024] negate(k1)",
            "ard = f32[1024] all-reduce-done(ars)",
            "ROOT k3 = f32[1024] add(k2, ard)",
        ],
        extra=_ADD,
    )
    step = _step(text, {"k1": 10, "k2": 10, "k3": 10}, {"ars": 25})
    assert step.time_ns == 37 * US
    assert step.compute_ns == 32 * US
    assert step.communication_ns == 25 * US
    assert step.exposed_ns == 5 * US
    (row,) = step.collectives
    assert (row.name, row.exposed_ns, row.count, row.asynchronous) == ("ars", 5 * US, 1, True)
    assert [r.name for r in step.top_exposed()] == ["ars"]
    waits = [s for s in step.slices if s.kind == "wait"]
    assert [(w.start_ns, w.end_ns) for w in waits] == [(21 * US, 26 * US)]


def test_a_synchronous_collective_is_exposed_whole() -> None:
    text = _module(
        [
            "k1 = f32[1024] negate(p)",
            "ar = f32[1024] all-reduce(k1), replica_groups={{0,1}}, to_apply=add",
            "ROOT k2 = f32[1024] negate(ar)",
        ],
        extra=_ADD,
    )
    step = _step(text, {"k1": 3, "k2": 4}, {"ar": 20})
    assert (step.time_ns, step.compute_ns, step.exposed_ns) == (27 * US, 7 * US, 20 * US)


def test_collectives_share_one_communication_stream() -> None:
    # two all-reduces started back to back: the second begins when the first ends
    text = _module(
        [
            _ar_start("a1", "p"),
            _ar_start("a2", "p"),
            "k = f32[1024] negate(p)",
            "d1 = f32[1024] all-reduce-done(a1)",
            "d2 = f32[1024] all-reduce-done(a2)",
            "ROOT r = f32[1024] add(d1, d2)",
        ],
        extra=_ADD,
    )
    step = _step(text, {"k": 50, "r": 1}, {"a1": 10, "a2": 10})
    # a1 runs 1..11, a2 11..21 (issued at 2), k runs 2..52: nothing exposed
    assert step.exposed_ns == 0
    assert step.time_ns == (2 + 50 + 1 + 1 + 1) * US


def test_without_a_collective_model_communication_is_not_estimated() -> None:
    text = _module(
        [
            _ar_start("ars", "p"),
            "ard = f32[1024] all-reduce-done(ars)",
            "ROOT k = f32[1024] negate(ard)",
        ],
        extra=_ADD,
    )
    step = _step(text, {"k": 10}, {})
    assert step.not_estimated == 1
    doc = step.as_json()
    assert doc["communication_ns"] is None
    assert doc["exposed_communication_ns"] is None
    assert step.collectives[0].as_json()["communication"] == "not estimated"


# -- properties ---------------------------------------------------------------------------


@st.composite
def _schedules(draw):
    """A kernel chain with one async all-reduce whose start and done are at random places."""
    n = draw(st.integers(1, 8))
    durations = draw(st.lists(st.floats(0.0, 100.0), min_size=n, max_size=n))
    collective = draw(st.floats(0.0, 300.0))
    start = draw(st.integers(0, n))
    done = draw(st.integers(start, n))
    return durations, collective, start, done


def _chain(durations: list[float], start: int, done: int) -> str:
    body = []
    prev = "p"
    for i in range(len(durations) + 1):
        if i == start:
            body.append(_ar_start("ars", "p"))
        if i == done:
            body.append("ard = f32[1024] all-reduce-done(ars)")
        if i < len(durations):
            body.append(f"k{i} = f32[1024] negate({prev})")
            prev = f"k{i}"
    body.append(f"ROOT out = (f32[1024], f32[1024]) tuple({prev}, ard)")
    return _module(body, extra=_ADD)


@settings(max_examples=40, deadline=None)
@given(_schedules())
def test_compute_between_start_and_done_never_exposes_more(schedule) -> None:
    durations, collective, start, done = schedule
    kernels = {f"k{i}": d for i, d in enumerate(durations)}
    spread = _step(_chain(durations, start, done), kernels, {"ars": collective})
    together = _step(_chain(durations, start, start), kernels, {"ars": collective})
    assert spread.exposed_ns <= together.exposed_ns + 1e-6
    # times are sums of nanoseconds: equal within a millionth of a nanosecond
    assert together.exposed_ns == pytest.approx(collective * US, abs=1e-6)
    for step in (spread, together):
        assert step.time_ns >= step.compute_ns - 1e-6
        assert step.time_ns >= collective * US - 1e-6
        assert step.time_ns == pytest.approx(step.compute_ns + step.exposed_ns, abs=1e-6)
        assert step.compute_ns == pytest.approx(
            sum(durations) * US + 2 * START_DONE_COST_NS, abs=1e-6
        )


# -- loops and conditionals ---------------------------------------------------------------

_LOOP = """
HloModule loop, is_scheduled=true
cond {
  cp = (s32[], f32[1024]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(ci, n), direction=LT
}
body {
  bp = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  x = f32[1024] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[1024] negate(x)
  ROOT t = (s32[], f32[1024]) tuple(i1, y)
}
ENTRY main {
  p = f32[1024] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[1024]) tuple(z, p)
  w = (s32[], f32[1024]) while(init), condition=cond, body=body
  ROOT r = f32[1024] get-tuple-element(w), index=1
}
"""


def test_a_loop_runs_its_body_trips_times_and_its_condition_once_more() -> None:
    # trip count 6 from the condition; body kernels i1 (2 us) and y (5 us), condition lt (1 us)
    step = _step(_LOOP, {"w/i1": 2, "w/y": 5, "w/condition/lt": 1}, {})
    assert step.time_ns == (6 * (2 + 5) + 7 * 1) * US
    program = walk_module(parse_hlo(_LOOP))
    (loop,) = program.loops
    assert (loop.trip_count.value, loop.trip_count.how) == (6, "pattern")
    counts = {k.name: k.repeats for k in program.kernels}
    assert counts == {"w/i1": 6, "w/y": 6, "w/condition/lt": 7}


def _loop_comps(prefix: str, trips: int, inner: str) -> str:
    """A condition ``i < trips`` and a body that runs ``inner`` on the carried array."""
    return f"""
{prefix}cond {{
  cp = (s32[], f32[1024]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant({trips})
  ROOT lt = pred[] compare(ci, n), direction=LT
}}
{prefix}body {{
  bp = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  x = f32[1024] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[1024] {inner}
  ROOT t = (s32[], f32[1024]) tuple(i1, y)
}}
"""


def _loop_call(prefix: str) -> str:
    return f"""
  z = s32[] constant(0)
  init = (s32[], f32[1024]) tuple(z, p)
  w = (s32[], f32[1024]) while(init), condition={prefix}cond, body={prefix}body
  ROOT r = f32[1024] get-tuple-element(w), index=1
"""


def test_nested_loops_multiply() -> None:
    text = (
        "HloModule nested\n"
        + _loop_comps("i", 6, "negate(x)")
        + "inner {\n  p = f32[1024] parameter(0)\n"
        + _loop_call("i")
        + "}\n"
        + _loop_comps("o", 3, "call(x), to_apply=inner")
        + "ENTRY main {\n  p = f32[1024] parameter(0)\n"
        + _loop_call("o")
        + "}\n"
    )
    program = walk_module(parse_hlo(text))
    counts = {k.name: k.repeats for k in program.kernels}
    assert counts["w/y/w/y"] == 3 * 6
    assert counts["w/y/w/condition/lt"] == 3 * 7
    assert {(loop.name, loop.count, loop.counted_trips) for loop in program.loops} == {
        ("w", 1, 3),
        ("w/y/w", 3, 6),
    }


_CONDITIONAL = """
HloModule cond, is_scheduled=true
cheap {
  a = f32[1024] parameter(0)
  ROOT na = f32[1024] negate(a)
}
dear {
  b = f32[1024] parameter(0)
  e1 = f32[1024] exponential(b)
  ROOT e2 = f32[1024] exponential(e1)
}
ENTRY main {
  p = f32[1024] parameter(0)
  k = s32[] parameter(1)
  ROOT c = f32[1024] conditional(k, p, p), branch_computations={cheap, dear}
}
"""


def test_a_conditional_counts_its_most_expensive_branch() -> None:
    step = _step(_CONDITIONAL, {"c/cheap/na": 4, "c/dear/e1": 3, "c/dear/e2": 3}, {})
    assert step.time_ns == 6 * US
    (choice,) = step.conditionals
    assert choice["counted"] == "dear"
    assert step.inactive_kernels == {"c/cheap/na"}
    report = estimate_module(_CONDITIONAL, "h100")
    counts = {k.name: k.launches for k in report.kernels}
    assert counts["c/cheap/na"] == 0
    assert counts["c/dear/e1"] == counts["c/dear/e2"] == 1


def test_a_loop_without_known_trip_count_is_counted_as_xla_writes_it_after_optimization() -> None:
    # the same JAX scan before optimization (no known_trip_count) and after (XLA wrote 10)
    pre = estimate_module((ROOT / "tests/data/corpus/rnn_scan.pre.hlo").read_text())
    opt = estimate_module((ROOT / "tests/data/corpus/rnn_scan.opt.hlo").read_text())
    assert [loop.trip_count.value for loop in pre.loops] == [10]
    assert [loop.trip_count.how for loop in opt.loops] == ["known_trip_count"]
    assert [loop.trip_count.value for loop in opt.loops] == [10]
    body = {k.launches for k in pre.kernels if "/condition/" not in k.name and "/" in k.name}
    assert body == {10}


def test_without_collectives_the_step_is_the_module_total() -> None:
    report = estimate_module((ROOT / "tests/data/corpus/rnn_scan.opt.hlo").read_text())
    assert report.step is not None
    assert report.step.time_ns == pytest.approx(report.total_time_ns)


# -- the stage ----------------------------------------------------------------------------


def test_stage_before_optimization_and_before_partitioning() -> None:
    pre = module_stage(parse_hlo((ROOT / "tests/data/corpus/rnn_scan.pre.hlo").read_text()))
    assert (pre.name, pre.scheduled, pre.optimized) == ("before optimization", False, False)
    opt = module_stage(parse_hlo((ROOT / "tests/data/corpus/rnn_scan.opt.hlo").read_text()))
    assert (opt.name, opt.scheduled) == ("optimized", True)
    sharded = """
HloModule s, num_partitions=4
ENTRY main {
  p = f32[1024,1024] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT n = f32[1024,1024] negate(p), sharding={devices=[4,1]<=[4]}
}
"""
    stage = module_stage(parse_hlo(sharded))
    assert stage.name == "before SPMD partitioning"
    assert any("shapes are global" in m for m in stage.meanings)


# -- the trace ------------------------------------------------------------------------------


def test_the_trace_is_valid_trace_event_json_with_nested_slices() -> None:
    text = (ROOT / "samples/step/allgather_overlap.hlo").read_text()
    report = estimate_module(text, "h100")
    assert report.step is not None
    report.step = _step(text, {"gemm0": 100, "gemm1": 100}, {"ag-start": 60})
    doc = json.loads(json.dumps(trace_events(report)))
    jsonschema.validate(doc, TRACE_SCHEMA)
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    names = {e["name"] for e in slices}
    assert {"gemm0", "gemm1", "ag-start", "ag-done"} <= names
    lanes = {e["tid"] for e in slices}
    assert lanes == {1, 2}
    comm = next(e for e in slices if e["tid"] == 2)
    assert (comm["ts"], comm["dur"]) == (1.0, 60.0)


def test_the_trace_schema_rejects_what_perfetto_cannot_load() -> None:
    bad = {"traceEvents": [{"name": "k", "ph": "X", "pid": 1, "tid": 1, "ts": 0}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, TRACE_SCHEMA)


# -- the command line -----------------------------------------------------------------------

SAMPLE = ROOT / "samples/step/allgather_overlap.hlo"


def _cli(*args: str):
    from click.testing import CliRunner

    from hloidx.cli.main import cli

    return CliRunner().invoke(cli, list(args))


def test_cost_text_ends_with_the_step() -> None:
    result = _cli("cost", str(SAMPLE), "--device", "h100")
    assert result.exit_code == 0, result.output
    lines = result.output.rstrip().splitlines()
    assert lines[1].startswith("stage: optimized; the text's order is XLA's schedule")
    tail = "\n".join(lines[-4:])
    assert "step (the entry computation in XLA's schedule):" in tail
    assert "step time" in tail


def test_cost_text_says_the_order_is_the_texts_when_not_scheduled() -> None:
    path = ROOT / "tests/data/corpus/rnn_scan.pre.hlo"
    out = _cli("cost", str(path), "--fusion", "none").output
    assert "stage: before optimization; not scheduled: the text's order" in out
    assert "every op is estimated as a kernel of its own" in out
    assert "loop while.6: 10 trips, from the condition" in out
    assert "step (the entry computation in the text's order, as it is not scheduled)" in out


def test_cost_json_has_the_step_the_loops_the_stage_and_collective_rows() -> None:
    path = ROOT / "tests/data/corpus/rnn_scan.pre.hlo"
    doc = json.loads(_cli("cost", str(path), "--format", "json", "--fusion", "none").output)
    assert set(doc["step"]) >= {
        "time_ns",
        "compute_ns",
        "communication_ns",
        "exposed_communication_ns",
    }
    assert doc["stage"]["name"] == "before optimization"
    assert [(loop["name"], loop["trip_count"], loop["how"]) for loop in doc["loops"]] == [
        ("while.6", 10, "pattern")
    ]
    assert all("count" in row for row in doc["kernels"])
    sample = json.loads(_cli("cost", str(SAMPLE), "--format", "json").output)
    (collective,) = [r for r in sample["kernels"] if r["kind"] == "collective"]
    assert collective["name"] == "ag-start"
    assert collective["count"] == 1
    assert set(collective) >= {"exec_time_ns", "bytes", "participants", "communication"}


def test_cost_trace_and_html() -> None:
    trace = _cli("cost", str(SAMPLE), "--format", "trace")
    assert trace.exit_code == 0
    jsonschema.validate(json.loads(trace.output), TRACE_SCHEMA)
    html = _cli("cost", str(SAMPLE), "--format", "html").output
    assert 'aria-label="step timeline"' in html
    assert "<title>count 1; gemm0" in html
    assert _cli("cost", str(SAMPLE), "--format", "trace", "--compare", str(SAMPLE)).exit_code == 2
    pre = _cli("cost", str(ROOT / "tests/data/corpus/rnn_scan.pre.hlo"), "--format", "html")
    assert "<h2>Stage</h2><p>stage: before optimization" in pre.output
    assert "loop while.6: 10 trips" in pre.output


def _nested_properly(events: list[dict]) -> bool:
    """Complete events of one thread nest: each starts after the previous ends or lies inside
    an enclosing one (what the trace viewers need to draw them as a stack)."""
    by_tid: dict[int, list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            by_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    eps = 1e-9  # float sums of whole nanoseconds in microseconds
    for spans in by_tid.values():
        stack: list[float] = []
        for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= start + eps:
                stack.pop()
            if stack and end > stack[-1] + eps:
                return False
            stack.append(end)
    return True


def test_trace_slices_nest_on_each_thread_with_loops_and_collectives() -> None:
    # a collective in flight across a loop whose body has its own all-reduce
    text = (
        "HloModule m, is_scheduled=true\n"
        + _ADD
        + _loop_comps("l", 4, "all-reduce(x), replica_groups={{0,1}}, to_apply=add")
        + "ENTRY main {\n  p = f32[1024] parameter(0)\n"
        + "  "
        + _ar_start("ars", "p")
        + "\n"
        + _loop_call("l").replace("ROOT r = f32[1024]", "r = f32[1024]")
        + "  ard = f32[1024] all-reduce-done(ars)\n"
        + "  ROOT out = f32[1024] add(r, ard)\n}\n"
    )
    report = estimate_module(text, "h100")
    report.step = _step(text, {"w/i1": 1, "w/condition/lt": 1, "out": 2}, {"ars": 30, "w/y": 3})
    doc = trace_events(report)
    jsonschema.validate(doc, TRACE_SCHEMA)
    assert _nested_properly(doc["traceEvents"])
    # 4 trips of (lt 1 + i1 1 + all-reduce 3 exposed) + lt 1 = 21 us of loop; ars (1..31 us)
    # waits from 22 to 31 us: 9 us exposed, then done 1 us and out 2 us
    assert report.step.time_ns == (1 + 21 + 9 + 1 + 2) * US
    assert report.step.exposed_ns == (4 * 3 + 9) * US


def test_the_readme_worked_example_prints_what_the_readme_says(monkeypatch) -> None:
    import doctest
    import re

    text = (ROOT / "README.md").read_text()
    block = next(
        b for b in re.findall(r"```text\n(.*?)```", text, re.DOTALL) if ">>> from hloidx" in b
    )
    monkeypatch.chdir(ROOT)
    test = doctest.DocTestParser().get_doctest(block, {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0
    # the hand arithmetic of the README, from the report's own numbers
    report = estimate_module(SAMPLE.read_text(), "h100", model="xla")
    gather = report.collective_rows()[0].estimate.time_ns
    gemm0 = next(k for k in report.kernels if k.name == "gemm0").exec_time_ns + US
    gemm1 = next(k for k in report.kernels if k.name == "gemm1").exec_time_ns + US
    assert report.step.exposed_ns == pytest.approx((1 * US + gather) - (1 * US + gemm0))
    assert report.step.time_ns == pytest.approx(1 * US + gather + 1 * US + gemm1)


def test_a_loop_of_unknown_trip_count_says_why_and_counts_one_trip() -> None:
    # the counter is multiplied by one: not XLA's add pattern, and evaluated step by step it
    # never reaches the bound (XLA gives up after 128 iterations)
    text = _LOOP.replace("i1 = s32[] add(i, one)", "i1 = s32[] multiply(i, one)")
    report = estimate_module(text, "h100")
    (loop,) = report.loops
    assert loop.trip_count.value is None
    assert loop.counted_trips == 1
    doc = report.as_dict()
    assert doc["loops"][0]["trip_count"] is None
    assert "not an add" in doc["loops"][0]["reason"]
    assert "still running after 128 evaluated iterations" in doc["loops"][0]["reason"]
    out = report.text()
    assert "loop w: trip count unknown: " in out
    assert "; counted as one trip" in out
    assert {k.launches for k in report.kernels if k.name.startswith("w/")} == {1, 2}


def test_the_trace_of_a_loop_of_nanosecond_kernels_nests() -> None:
    # kernels of a few ns inside a loop: rounded starts and ends keep touching slices touching
    report = estimate_module((ROOT / "tests/data/corpus/rnn_scan.pre.hlo").read_text(), "h100")
    doc = trace_events(report)
    jsonschema.validate(doc, TRACE_SCHEMA)
    assert _nested_properly(doc["traceEvents"])
    (loop,) = [e for e in doc["traceEvents"] if e.get("cat") == "loop"]
    assert loop["args"]["trip_count"] == 10


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 10.0), min_size=3, max_size=3))
def test_trace_slices_nest_whatever_the_durations(durations) -> None:
    names = ("w/i1", "w/y", "w/condition/lt")
    report = estimate_module(_LOOP, "h100")
    report.step = _step(_LOOP, dict(zip(names, durations, strict=True)), {})
    assert _nested_properly(trace_events(report)["traceEvents"])
