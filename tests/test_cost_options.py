"""``hloidx cost``'s device and collective options (issue 36): --list-devices, --device with
XLA's spec names, --device-spec, --gpus-per-node, --collective-config."""

from __future__ import annotations

import json

import paths
from click.testing import CliRunner
from test_gpu_specs import H100_SXM, XLA_SPEC_NAMES

from hloidx.cli.main import cli

SAMPLE = paths.ROOT / "samples" / "step" / "allgather_overlap.hlo"


def _cost(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["cost", *args])
    return result.exit_code, result.output


def _collective(*args: str) -> dict:
    code, out = _cost(str(SAMPLE), "--format", "json", "--device", "h100", *args)
    assert code == 0, out
    doc = json.loads(out)
    (row,) = [r for r in doc["kernels"] if r["name"] == "ag-start"]
    return row


def test_list_devices_names_every_device_with_its_source() -> None:
    code, out = _cost("--list-devices", "--format", "json")
    assert code == 0, out
    rows = {r["name"]: r for r in json.loads(out)["devices"]}
    assert set(rows) >= set(XLA_SPEC_NAMES)
    assert {"h100", "a100", "rtx-a6000"} <= set(rows)
    assert rows["b200"]["compute_capability"] == "sm_100"
    assert "gpu_specs/b200.txtpb" in rows["b200"]["source"]
    code, text = _cost("--list-devices")
    assert code == 0
    assert all(name in text for name in XLA_SPEC_NAMES)


def test_a_spec_file_gives_what_the_same_shipped_spec_gives(tmp_path) -> None:
    spec = tmp_path / "my_h100.txtpb"
    spec.write_text(H100_SXM)
    mine = _cost(str(SAMPLE), "--device-spec", str(spec), "--format", "json")
    shipped = _cost(str(SAMPLE), "--device", "h100_sxm", "--format", "json")
    assert mine[0] == shipped[0] == 0
    a, b = json.loads(mine[1]), json.loads(shipped[1])
    assert a["step"] == b["step"]
    assert [k["exec_time_ns"] for k in a["kernels"]] == [k["exec_time_ns"] for k in b["kernels"]]


def test_a_damaged_spec_file_is_a_located_error(tmp_path) -> None:
    spec = tmp_path / "bad.txtpb"
    spec.write_text("gpu_device_info {\n  core_count: 132\n  }\n}\n")
    code, out = _cost(str(SAMPLE), "--device-spec", str(spec))
    assert code == 2
    assert "bad.txtpb:4:1" in out


def test_gpus_per_node_decides_single_or_multi_host() -> None:
    # the all-gather's group is 8 devices: one host of 8, two hosts of 4
    assert _collective()["communication"] == "single-host"
    assert _collective("--gpus-per-node", "4")["communication"] == "multi-host"


def test_collective_config_reaches_the_network_model() -> None:
    slow = _collective("--gpus-per-node", "4", "--collective-config", "rtt_us=100")
    fast = _collective("--gpus-per-node", "4", "--collective-config", "rtt_us=1")
    assert slow["exec_time_ns"] > fast["exec_time_ns"]


def test_bad_collective_config_and_device_are_usage_errors() -> None:
    code, out = _cost(str(SAMPLE), "--collective-config", "no_such_option=1")
    assert code == 2
    assert "nccl_op_launch_us" in out
    code, out = _cost(str(SAMPLE), "--collective-config", "rtt_us=fast")
    assert code == 2
    assert "not a positive whole number" in out
    code, out = _cost(str(SAMPLE), "--device", "h200")
    assert code == 2
    assert "b200" in out


def test_a_collective_without_an_estimate_says_why() -> None:
    # XLA measured NCCL on sm_90 and sm_100 only: on one host of an A6000 it has no estimate
    code, out = _cost(str(SAMPLE), "--device", "rtx-a6000", "--model", "xla")
    assert code == 0, out
    assert "communication: not estimated (1 collective)" in out
    assert "not estimated: ag-start: single-host collective: XLA has no measured table" in out
    row = _collective_on("rtx-a6000", "--model", "xla")
    assert row["exec_time_ns"] is None
    assert "no measured table for sm_86" in row["notes"][0]


def _collective_on(device: str, *args: str) -> dict:
    code, out = _cost(str(SAMPLE), "--format", "json", "--device", device, *args)
    assert code == 0, out
    return next(r for r in json.loads(out)["kernels"] if r["name"] == "ag-start")


def test_a_gzip_compressed_module_is_read_through(tmp_path) -> None:
    # XLA's benchmark steps ship as .hlo.gz (bench/data/): every command reads them as they are
    import gzip

    packed = tmp_path / "step.hlo.gz"
    packed.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    assert _cost(str(packed), "--format", "json") == _cost(str(SAMPLE), "--format", "json")
    runner = CliRunner()
    plain = runner.invoke(cli, ["maps", str(SAMPLE), "--format", "json"])
    read = runner.invoke(cli, ["maps", str(packed), "--format", "json"])
    assert read.exit_code == plain.exit_code == 0
    assert json.loads(read.output)["instructions"] == json.loads(plain.output)["instructions"]
    damaged = tmp_path / "damaged.hlo.gz"
    damaged.write_bytes(gzip.compress(SAMPLE.read_bytes())[:40])
    code, out = _cost(str(damaged))
    assert code == 2
    assert "damaged gzip" in out
