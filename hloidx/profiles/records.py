"""What a measured profile says about a program, whatever file it came from: its executions
(one run of one module on one GPU), the launches of each instruction inside them, and the
steady figures per instruction (warm-up executions dropped).

XLA names its work in every profile format the same way (``XlaModule:#hlo_module=<module>,
program_id=<id>#`` around an execution, ``hlo_op=<instruction>`` on a thunk or kernel), so
the readers turn their file into :class:`Execution` records and :func:`summarize` does the
rest. Nothing here knows of estimates.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..errors import HloidxError

#: a warm-up execution is one of the first ones and slower than this factor x the median
WARMUP_FACTOR = 1.1

MODULE_RANGE = re.compile(r"XlaModule:#(?:prefix=.*?,)?hlo_module=([^,#]+)(?:,program_id=(\d+))?#")
THUNK_RANGE = re.compile(r"Thunk:#(?:name=.*?,)?hlo_op=([^,#]+)")


class ProfileError(HloidxError):
    """A profile that cannot be read (the message names the file and what is wrong)."""


def module_key(text: str) -> tuple[str, int | None] | None:
    """``(module, program_id)`` of an ``XlaModule:#...#`` range name, else None."""
    m = MODULE_RANGE.search(text)
    if m is None:
        return None
    return m.group(1), None if m.group(2) is None else int(m.group(2))


def thunk_op(text: str) -> str | None:
    """The ``hlo_op`` of a ``Thunk:#...#`` range name, else None."""
    m = THUNK_RANGE.search(text)
    return None if m is None else m.group(1)


@dataclass(frozen=True)
class Launch:
    """One launch of one instruction: its thunk range, or its kernels taken together."""

    instruction: str
    start_ns: float
    duration_ns: float
    kernels: int = 1


@dataclass(frozen=True)
class Execution:
    """One execution of a module on one device."""

    module: str
    program_id: int | None
    device: str
    start_ns: float
    duration_ns: float
    launches: tuple[Launch, ...]


@dataclass(frozen=True)
class OpTiming:
    """An instruction's steady figures: mean per launch, launches per execution, samples."""

    instruction: str
    mean_ns: float
    per_step: float
    samples: int
    #: start of its first launch after the execution's start, in the first steady execution
    offset_ns: float | None = None
    kernels_per_launch: float = 1.0

    def as_json(self) -> dict[str, Any]:
        return {
            "mean_ns": round(self.mean_ns, 3),
            "per_step": round(self.per_step, 3),
            "samples": self.samples,
        }


@dataclass(frozen=True)
class ProgramProfile:
    """The steady figures of one program (module and program id) in a profile."""

    module: str
    program_id: int | None
    devices: tuple[str, ...]
    executions: int
    warmup: int
    step_ns: float | None
    ops: dict[str, OpTiming]
    #: the first steady execution's launches, in time order, for the measured timeline
    timeline: tuple[Launch, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        pid = "?" if self.program_id is None else str(self.program_id)
        return f"{self.module} (program_id {pid})"


@dataclass(frozen=True)
class Profile:
    """Everything read from one profile file."""

    path: str
    source: str
    programs: tuple[ProgramProfile, ...]
    #: the GPU as a GpuTargetConfigProto message (``parse_text_proto``'s dicts), if known
    device: dict[str, list[Any]] | None = None
    #: the optimized HLO each program ran, when the profile keeps it: (module, id) -> bytes
    hlo: dict[tuple[str, int | None], Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def program_for(self, module: str, program_id: int | None = None) -> ProgramProfile:
        """:func:`program_for` of this profile."""
        return program_for(self, module, program_id)


def warmup_count(durations: list[float]) -> int:
    """How many of the first executions are warm-up: the leading ones slower than
    ``WARMUP_FACTOR`` x the median of all (autotuning, compilation, first touches); the
    first one always when there are three or more."""
    if len(durations) < 2:
        return 0
    median = statistics.median(durations)
    n = 0
    while n < len(durations) - 1 and durations[n] > WARMUP_FACTOR * median:
        n += 1
    if n == 0 and len(durations) >= 3:
        n = 1
    return n


def summarize(
    executions: list[Execution], notes: tuple[str, ...] = (), warmup: int | None = None
) -> tuple[ProgramProfile, ...]:
    """Per (module, program id): warm-up executions dropped per device, then each
    instruction's mean per launch over the steady executions, its launches per execution,
    and the mean step. ``warmup``: drop this many per device instead of the rule."""
    groups: dict[tuple[str, int | None], dict[str, list[Execution]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for e in executions:
        groups[(e.module, e.program_id)][e.device].append(e)
    programs = []
    for (module, program_id), by_device in groups.items():
        steady: list[Execution] = []
        dropped = 0
        for runs in by_device.values():
            runs.sort(key=lambda e: e.start_ns)
            n = warmup_count([e.duration_ns for e in runs]) if warmup is None else warmup
            n = min(n, len(runs) - 1)
            dropped += n
            steady.extend(runs[n:])
        durations: dict[str, list[float]] = defaultdict(list)
        kernels: dict[str, int] = defaultdict(int)
        for e in steady:
            for launch in e.launches:
                durations[launch.instruction].append(launch.duration_ns)
                kernels[launch.instruction] += launch.kernels
        first = min(steady, key=lambda e: e.start_ns)
        offsets: dict[str, float] = {}
        for launch in first.launches:
            offsets.setdefault(launch.instruction, launch.start_ns - first.start_ns)
        ops = {
            name: OpTiming(
                name,
                sum(values) / len(values),
                len(values) / len(steady),
                len(values),
                offsets.get(name),
                kernels[name] / len(values),
            )
            for name, values in durations.items()
        }
        step = [e.duration_ns for e in steady if e.duration_ns > 0]
        programs.append(
            ProgramProfile(
                module,
                program_id,
                tuple(by_device),
                len(steady),
                dropped,
                sum(step) / len(step) if step else None,
                ops,
                tuple(sorted(first.launches, key=lambda launch: launch.start_ns)),
                notes,
            )
        )
    return tuple(programs)


def program_for(profile: Profile, module: str, program_id: int | None = None) -> ProgramProfile:
    """The profile's program of ``module`` (and ``program_id`` when given); with several
    program ids for one module name, the one with the most executions."""
    found = [
        p
        for p in profile.programs
        if p.module == module and (program_id is None or p.program_id == program_id)
    ]
    if not found:
        have = sorted({p.key for p in profile.programs})
        shown = ", ".join(have[:6]) + (f", ... ({len(have)} in all)" if len(have) > 6 else "")
        wanted = module if program_id is None else f"{module} (program_id {program_id})"
        raise ProfileError(
            f"{profile.path}: no execution of module {wanted} in this profile "
            f"(it has: {shown or 'no XLA module executions'})"
        )
    return max(found, key=lambda p: (p.executions, p.program_id or 0))
