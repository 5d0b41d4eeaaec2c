"""The bad-input battery: >= 1,000 broken HLO files and >= 500 broken or extreme maps.

Every input runs through the real command-line entry point (``hloidx.cli.main.main``) in-process
with a per-input time limit. Each must end with exit code 0 (valid input) or 2 (a located
diagnostic on stderr), never a traceback, never a hang, never unbounded enumeration; and in a
file with one broken instruction, every instruction that does not depend on it is still
reported.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
from pathlib import Path

import pytest
from battery_inputs import hlo_cases, map_cases

from hloidx.cli.main import main

PER_INPUT_SECONDS = 20
_LOCATED = re.compile(r"^[^\s:][^:]*:\d+:\d+: error: ", re.MULTILINE)


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, PER_INPUT_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(args)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 2)
    except _Hang:
        code = -1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


HLO_CASES = hlo_cases()
MAP_CASES = map_cases()


def test_battery_sizes():
    assert len(HLO_CASES) >= 1000
    assert len(MAP_CASES) >= 500


def _check(code: int, out: str, err: str, label: str) -> None:
    assert code != -1, f"{label}: no answer within {PER_INPUT_SECONDS} s"
    assert "Traceback" not in err, f"{label}: traceback\n{err[-2000:]}"
    assert "Traceback" not in out, f"{label}: traceback\n{out[-2000:]}"
    assert code in (0, 2), f"{label}: exit code {code}\n{err[-2000:]}"
    if code == 2:
        assert _LOCATED.search(err), f"{label}: unlocated error\n{err[-800:]}"


@pytest.mark.slow
def test_hlo_battery(tmp_path: Path):
    failures = []
    for k, case in enumerate(HLO_CASES):
        path = tmp_path / f"case{k}.hlo"
        path.write_bytes(case.data)
        args = ["maps", str(path), "--format", "json"]
        if k % 10:
            args.append("--no-verify")
        code, out, err = run_cli(args)
        try:
            _check(code, out, err, case.name)
            if out:
                doc = json.loads(out)
                assert doc["schema_version"] == 1
            if case.broken_line and out:
                _check_partial(case, json.loads(out))
        except AssertionError as failure:
            failures.append(str(failure))
    assert not failures, (
        f"{len(failures)} of {len(HLO_CASES)} inputs failed; first:\n" + "\n\n".join(failures[:5])
    )


def _check_partial(case, doc) -> None:
    """With one broken instruction, everything that does not read it is still reported."""
    from hloidx.hlo.syntax import parse_hlo

    original = parse_hlo(
        case.data.decode("utf-8", "replace").replace("f32[2 @@ broken(", "", 1), "orig"
    )
    broken = None
    for instr in original.instructions():
        if instr.span is not None and instr.span.line == case.broken_line:
            broken = instr
    if broken is None:
        return
    tainted = {id(broken)}
    changed = True
    while changed:
        changed = False
        for instr in original.instructions():
            if id(instr) in tainted:
                continue
            calls = [c for comps in instr.called_computations.values() for c in comps]
            if any(id(o) in tainted for o in instr.operands) or any(
                id(i) in tainted for c in calls for i in c.instructions
            ):
                tainted.add(id(instr))
                changed = True
    expected = {i.name for i in original.instructions() if id(i) not in tainted}
    reported = {i["name"] for i in doc["instructions"]}
    missing = expected - reported
    assert not missing, (
        f"{case.name}: instructions not reported after one broken line: {sorted(missing)[:5]}"
    )


@pytest.mark.slow
def test_map_battery():
    failures = []
    for label, text in MAP_CASES:
        code, out, err = run_cli(
            ["simplify", "--format", "json", "--", text]
            if text.startswith("-")
            else ["simplify", "--format", "json", text]
        )
        try:
            _check(code, out, err, label)
            if code == 0:
                doc = json.loads(out)
                assert doc["verdict"]["kind"] != "refuted", f"{label}: refuted\n{out}"
        except AssertionError as failure:
            failures.append(str(failure))
    assert not failures, f"{len(failures)} of {len(MAP_CASES)} maps failed; first:\n" + "\n\n".join(
        failures[:5]
    )
