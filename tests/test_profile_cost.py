"""``hloidx cost FILE --profile PROFILE``: the measured times joined onto the kernel rows (on
instruction names, never kernel names), collectives apart, async-wrapped ops joined to their
``*-start``, the accuracy recomputed here from its definitions, the device from the profile,
the text / HTML / trace additions, and bad profiles (exit 2, one line, estimates printed)."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import paths
import pytest
from click.testing import CliRunner
from profile_builders import module_range, thunk_range, write_nsys_jax, write_sqlite

pytest.importorskip("pyarrow")

from hloidx.cli.main import cli

SMALL = paths.DATA / "measured" / "synthetic" / "jit_small.hlo"
#: per execution: (module span, add_fusion, mul_fusion, the wrapped reduce-scatter) in ns
EXECUTIONS = [
    (90_000, 30_000, 20_000, 40_000),
    (50_000, 20_000, 9_000, 30_000),
    (52_000, 21_000, 9_400, 31_000),
]


def _profile(folder, program_id=7, module="jit_small"):
    ranges = []
    rid = 1
    for k, (span, add, mul, rs) in enumerate(EXECUTIONS):
        t0 = 1_000_000 * (k + 1)
        mod = rid
        ranges += [
            (module_range(module, program_id), t0, span, mod, None, 4),
            (thunk_range("add_fusion"), t0, add, mod + 1, mod, 2),
            (thunk_range("reduce-scatter.9"), t0 + add, rs, mod + 2, mod, 1),
            (thunk_range("mul_fusion"), t0 + add, mul, mod + 3, mod, 1),
            (thunk_range("ghost.3"), t0 + add + mul, 5, mod + 4, mod, 1),
        ]
        rid += 5
    return write_nsys_jax(folder, ranges)


def _run(*args: str):
    result = CliRunner().invoke(cli, ["cost", *args])
    return result.exit_code, result.stdout, result.stderr


def _mean(column: int) -> float:
    steady = EXECUTIONS[1:]  # the first, 90 us against a median of 52 us, is warm-up
    return sum(e[column] for e in steady) / len(steady)


def test_json_rows_and_document_gain_measured(tmp_path) -> None:
    code, out, err = _run(
        str(SMALL), "--profile", str(_profile(tmp_path / "p")), "--format", "json"
    )
    assert code == 0, err
    doc = json.loads(out)
    rows = {r["name"]: r for r in doc["kernels"]}
    assert rows["add_fusion"]["measured"] == {"mean_ns": _mean(1), "per_step": 1.0, "samples": 2}
    assert rows["mul_fusion"]["measured"]["mean_ns"] == _mean(2)
    # the reduce-scatter inside the async computation is measured under its start
    assert rows["reduce-scatter-start"]["measured"]["mean_ns"] == _mean(3)
    measured = doc["measured"]
    assert measured["executions"] == 2
    assert measured["warmup_dropped"] == 1
    assert measured["step_ns"] == _mean(0)
    assert [c["name"] for c in measured["collectives"]] == ["reduce-scatter-start"]
    assert any("ghost.3" in n for n in measured["notes"])
    # the accuracy from its definitions, over the kernels (collectives apart)
    pairs = [
        (rows[n]["exec_time_ns"], rows[n]["measured"]["mean_ns"])
        for n in ("add_fusion", "mul_fusion")
    ]
    weight = sum(m for _, m in pairs)
    within = sum(m for e, m in pairs if 0.5 <= e / m <= 2) / weight
    logs = sorted(abs(math.log2(e / m)) for e, m in pairs)
    same_order = (pairs[0][0] > pairs[1][0]) == (pairs[0][1] > pairs[1][1])
    accuracy = measured["accuracy"]
    assert accuracy["within_2x"] == pytest.approx(within, abs=1e-4)
    assert accuracy["median_abs_log2"] == pytest.approx(sum(logs) / 2, abs=1e-4)
    assert accuracy["spearman"] == pytest.approx(1.0 if same_order else -1.0)
    assert accuracy["kernels"] == 2


def test_text_has_a_measured_column_and_achieved_rates(tmp_path) -> None:
    profile = str(_profile(tmp_path / "p"))
    code, out, _ = _run(str(SMALL), "--profile", profile, "--device", "h100")
    assert code == 0
    doc = json.loads(
        _run(str(SMALL), "--profile", profile, "--device", "h100", "--format", "json")[1]
    )
    add = next(r for r in doc["kernels"] if r["name"] == "add_fusion")
    header = next(line for line in out.splitlines() if line.startswith("kernel"))
    assert "measured" in header
    assert "TFLOP/s" in header
    assert "GB/s" in header
    line = next(line for line in out.splitlines() if line.startswith("add_fusion"))
    gbps = (add["bytes_read"] + add["bytes_written"]) / _mean(1)  # bytes per ns = GB/s
    assert f"{_mean(1) / 1e3:.2f} us" in line
    assert f" {gbps:.0f} " in line
    assert "largest mispredictions" in out
    assert "1 warm-up executions dropped" in out


def test_device_comes_from_the_profile_and_device_overrides(tmp_path) -> None:
    mod = "XlaModule:#hlo_module=jit_small,program_id=7#"
    ranges = [(100, 900, mod), (110, 150, "Thunk:#hlo_op=add_fusion#")]
    sqlite = write_sqlite(tmp_path / "r.sqlite", ranges, [(120, 200, 260)])
    code, out, err = _run(str(SMALL), "--profile", str(sqlite), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["device"] == "h100_sxm"  # the export's H100 (132 SMs, sm_90)
    code, out, _ = _run(
        str(SMALL), "--profile", str(sqlite), "--format", "json", "--device", "a100"
    )
    assert json.loads(out)["device"] == "a100"


def test_html_has_the_scatter_and_the_measured_timeline(tmp_path) -> None:
    code, out, _ = _run(str(SMALL), "--profile", str(_profile(tmp_path / "p")), "--format", "html")
    assert code == 0
    svgs = [part.split("</svg>")[0] + "</svg>" for part in out.split("<svg")[1:]]
    trees = [ET.fromstring("<svg" + s) for s in svgs]
    labels = [t.get("aria-label") for t in trees]
    assert "measured timeline" in labels
    assert "estimated against measured time per launch" in labels
    assert labels.index("step timeline") < labels.index("measured timeline")


def test_trace_has_a_measured_lane(tmp_path) -> None:
    import jsonschema

    from hloidx.render.trace import TRACE_SCHEMA

    code, out, _ = _run(str(SMALL), "--profile", str(_profile(tmp_path / "p")), "--format", "trace")
    assert code == 0
    doc = json.loads(out)
    jsonschema.validate(doc, TRACE_SCHEMA)
    lane = [e for e in doc["traceEvents"] if e.get("cat") == "measured"]
    assert {e["name"] for e in lane} >= {"add_fusion", "mul_fusion", "reduce-scatter.9"}
    first = next(e for e in lane if e["name"] == "add_fusion")
    assert first["dur"] == EXECUTIONS[1][1] / 1e3  # the first steady execution


@pytest.mark.parametrize("case", ["other program", "damaged"])
def test_bad_profile_exits_2_with_one_line_and_the_estimates(tmp_path, case) -> None:
    if case == "other program":
        profile = str(_profile(tmp_path / "p", module="jit_train_step"))
        expected = "no execution of module jit_small"
    else:
        profile = str(tmp_path / "cut.zip")
        (tmp_path / "cut.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 40)
        expected = "not a readable nsys-jax archive"
    code, out, err = _run(str(SMALL), "--profile", profile)
    assert code == 2
    assert "add_fusion" in out  # the estimates still print
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert profile in lines[0]
    assert expected in lines[0]
    assert "Traceback" not in err


def test_a_profile_that_carries_its_hlo_is_costed_alone() -> None:
    # tw003.xplane.pb embeds the optimized HloProto of jit_forward_3d_conv (program 15)
    xplane = paths.DATA / "measured" / "xplane" / "tw003.xplane.pb"
    code, out, err = _run(str(xplane), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["module"] == "jit_forward_3d_conv"
    assert "304 cores" in doc["device"]  # the MI300X's compute units, from the device plane
    rows = {r["name"]: r for r in doc["kernels"]}
    assert set(rows) == {
        "input_transpose_fusion",
        "input_transpose_fusion.1",
        "loop_transpose_fusion",
        "cudnn-conv.1",
    }
    assert all("measured" in r for r in rows.values())
    assert doc["measured"]["program_id"] == 15


def test_the_library_takes_a_profile_too(tmp_path) -> None:
    import hloidx

    view = hloidx.cost(str(SMALL), profile=str(_profile(tmp_path / "p")))
    rows = {r["name"]: r for r in view.as_dict()["kernels"]}
    assert rows["add_fusion"]["measured"]["mean_ns"] == _mean(1)
    assert "measured step" in str(view)
