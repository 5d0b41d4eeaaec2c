"""The partitioner's collectives as XLA:GPU leaves them in an optimized module: combined, then
asynchronous and scheduled to overlap the kernels around them.

- **Combining** (XLA's ``AllGatherCombiner`` / ``AllReduceCombiner``): collectives of one kind
  with the same replica groups (and the same gather dimension, or the same reducer) become one
  collective over several operands, in the computation's order, while the combined result
  stays within XLA:GPU's default threshold (``kDefault...CombineThreshold``, 30 MiB + 7 bytes
  of results) and 256 operands, and no member depends on another. Independence is tested
  conservatively: every member's operands are ready before any member's result is used.
- **Asynchronous** (``xla_gpu_enable_async_*``, on by default): each collective becomes a
  ``-start`` / ``-done`` pair. As XLA's latency-hiding scheduler places them to hide
  communication, the start goes right after its operands are computed and the done right
  before the first use of a result; the step view then runs the kernels in between beside the
  collective. (XLA's scheduler also bounds overlap by memory; that bound is not simulated.)

A collective whose operand is another collective keeps its place and is not combined. An
all-to-all stays synchronous (XLA wraps it in ``async-start``, which is not written here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..hlo.ir import Instruction
from ..hlo.printer import format_shape
from ..perf.fusion_model import shape_bytes

#: XLA:GPU's default combine thresholds (``collective_utils.h``), bytes of the results
COMBINE_THRESHOLD_BYTES = {
    "all-gather": 30 * 1024 * 1024 + 7,
    "all-reduce": 30 * 1024 * 1024 + 7,
}
#: the combiners' default limit on operands per combined collective
COMBINE_THRESHOLD_COUNT = 256
ASYNC_KINDS = frozenset(COMBINE_THRESHOLD_BYTES)
_KEY_ATTRIBUTES = ("replica_groups", "dimensions", "to_apply", "use_global_device_ids")
_TOKEN = re.compile(r"[A-Za-z_][\w.\-]*")


@dataclass
class _Group:
    members: list[tuple[Instruction, list[str]]] = field(default_factory=list)
    ready: int = -1
    first_use: int = 1 << 60
    result_bytes: int = 0
    movable: bool = True


def _name_of(line: str) -> str:
    head = line[5:] if line.startswith("ROOT ") else line
    return head.split(" = ", 1)[0]


def schedule_collectives(
    lines: list[str],
    collectives: dict[str, tuple[Instruction, list[str]]],
    combine: bool = True,
) -> list[str]:
    """``lines`` (one computation, in a valid order) with the named collectives combined and
    split into start/done pairs; ``collectives`` maps a collective's name to its instruction
    and its operands' names as written."""
    if not collectives:
        return lines
    defined = {_name_of(line): n for n, line in enumerate(lines)}
    first_use: dict[str, int] = {}
    for n, line in enumerate(lines):
        rhs = line.split(" = ", 1)[1] if " = " in line else ""
        for token in _TOKEN.findall(rhs):
            if token in collectives and token not in first_use:
                first_use[token] = n
    groups: list[_Group] = []
    open_groups: dict[tuple, _Group] = {}
    moved: set[int] = set()
    for n, line in enumerate(lines):
        name = _name_of(line)
        if name not in collectives or line.startswith("ROOT "):
            continue
        ins, operands = collectives[name]
        if ins.opcode not in ASYNC_KINDS:
            continue
        moved.add(n)
        chained = any(o in collectives for o in operands)
        ready = n - 1 if chained else max((defined.get(o, -1) for o in operands), default=-1)
        use = first_use.get(name, len(lines))
        size = shape_bytes(ins.shape)
        key = (ins.opcode, *(ins.attributes.get(k) for k in _KEY_ATTRIBUTES))
        group = open_groups.get(key) if combine and not chained else None
        if group is not None and not (
            group.result_bytes + size <= COMBINE_THRESHOLD_BYTES[ins.opcode]
            and len(group.members) < COMBINE_THRESHOLD_COUNT
            and max(group.ready, ready) < min(group.first_use, use)
        ):
            group = None
        if group is None:
            group = _Group(movable=not chained)
            groups.append(group)
            if combine and not chained:
                open_groups[key] = group
        group.members.append((ins, operands))
        group.ready = max(group.ready, ready)
        group.first_use = min(group.first_use, use)
        group.result_bytes += size
    starts: dict[int, list[tuple[str, _Group]]] = {}
    dones: dict[int, list[tuple[str, _Group]]] = {}
    for group in groups:
        start_text, done_text = _pair(group)
        starts.setdefault(group.ready + 1, []).append((start_text, group))
        dones.setdefault(group.first_use, []).append((done_text, group))
    result: list[str] = []
    started: set[int] = set()
    for n in range(len(lines) + 1):
        waiting = []
        for text, group in dones.get(n, []):
            if id(group) in started:
                result.extend(text)
            else:
                waiting.extend(text)
        for text, group in starts.get(n, []):
            result.append(text)
            started.add(id(group))
        result.extend(waiting)
        if n < len(lines) and n not in moved:
            result.append(lines[n])
    return result


def _pair(group: _Group) -> tuple[str, list[str]]:
    """The start line and the done lines (with a get-tuple-element per member when
    combined); each member's result keeps its name."""
    first, _ = group.members[0]
    op = first.opcode
    stem = first.name
    outs = [format_shape(ins.shape) for ins, _ in group.members]
    ins_shapes = [format_shape(ins.operands[0].shape) for ins, _ in group.members]
    operands = ", ".join(name for _, names in group.members for name in names)
    attrs = "".join(
        f", {k}={v}" for k, v in first.attributes.items() if k not in ("sharding", "metadata")
    )
    combined = len(group.members) > 1
    out = "(" + ", ".join(outs) + ")" if combined else outs[0]
    if op == "all-gather":
        sources = "(" + ", ".join(ins_shapes) + ")" if combined else ins_shapes[0]
        start_shape = f"({sources}, {out})"
    else:
        start_shape = out
    start_name = f"{stem}-start"
    start = f"{start_name} = {start_shape} {op}-start({operands}){attrs}"
    if not combined:
        return start, [f"{stem} = {out} {op}-done({start_name})"]
    done_name = f"{stem}-done"
    done = [f"{done_name} = {out} {op}-done({start_name})"]
    for index, (ins, _) in enumerate(group.members):
        shape = format_shape(ins.shape)
        done.append(f"{ins.name} = {shape} get-tuple-element({done_name}), index={index}")
    return start, done
