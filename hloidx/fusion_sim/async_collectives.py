"""The partitioner's collectives as XLA:GPU leaves them in an optimized module: combined, then
asynchronous and scheduled to overlap the kernels around them.

- **Combining** (XLA's ``AllGatherCombiner`` / ``AllReduceCombiner``): collectives of one kind
  with the same replica groups (and the same gather dimension, or the same reducer) become one
  collective over several operands, in the computation's order, while the combined results
  stay within XLA:GPU's default threshold (``kDefault...CombineThreshold``, 30 MiB + 7 bytes)
  and 256 operands, and no member depends on another (reachability through the computation,
  as XLA's combiners test it). A combination that would close a cycle with another one makes
  the computation fall back to one collective each. A computation's root is never combined.
- **Asynchronous** (``xla_gpu_enable_async_*``, on by default): each collective becomes a
  ``-start`` / ``-done`` pair (an all-to-all: ``async-start`` calling a computation that holds
  it, as XLA writes it; all-to-alls are not combined). The computation is listed again as a
  list schedule: a start as soon as its operands are computed, a done only when nothing else
  can run, the rest in the order it had. This is the overlap XLA's latency-hiding scheduler
  aims for; the scheduler also bounds overlap by memory, which is not simulated.
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
#: made asynchronous; an all-to-all is wrapped in ``async-start`` and never combined
ASYNC_KINDS = frozenset({*COMBINE_THRESHOLD_BYTES, "all-to-all"})
_KEY_ATTRIBUTES = ("replica_groups", "dimensions", "to_apply", "use_global_device_ids")
_TOKEN = re.compile(r"[A-Za-z_][\w.\-]*")


@dataclass
class _Group:
    members: list[tuple[Instruction, list[str]]] = field(default_factory=list)
    result_bytes: int = 0
    #: bit of this group, and the groups it depends on (bits)
    bit: int = 0
    ancestors: int = 0
    #: the computation's root (its done is the root; never combined)
    root: bool = False


def _name_of(line: str) -> str:
    head = line[5:] if line.startswith("ROOT ") else line
    return head.split(" = ", 1)[0]


def schedule_collectives(
    lines: list[str],
    collectives: dict[str, tuple[Instruction, list[str]]],
    combine: bool = True,
    blocks: list[str] | None = None,
) -> list[str]:
    """``lines`` (one computation, in a valid order) with the named collectives combined and
    split into start/done pairs, then listed again: starts as soon as their operands are
    computed, dones only when nothing else can run; ``collectives`` maps a collective's name
    to its instruction and its operands' names as written; the computations an all-to-all's
    ``async-start`` calls are appended to ``blocks``."""
    if not collectives:
        return lines
    names = [_name_of(line) for line in lines]
    position = {name: n for n, name in enumerate(names)}
    deps: list[list[int]] = []
    for line in lines:
        rhs = line.split(" = ", 1)[1] if " = " in line else ""
        found = {position[t] for t in _TOKEN.findall(rhs) if t in position}
        deps.append(sorted(found))
    groups = _combine(lines, names, deps, collectives, combine)
    if not groups:
        return lines
    wrapped: list[str] = []
    scheduled = _list_schedule(lines, names, deps, groups, wrapped)
    if scheduled is None and combine:  # a combination closed a cycle: each on its own
        wrapped = []
        groups = _combine(lines, names, deps, collectives)
        scheduled = _list_schedule(lines, names, deps, groups, wrapped)
    if scheduled is None:
        return lines
    if blocks is not None:
        blocks.extend(wrapped)
    return scheduled


def _combine(lines, names, deps, collectives, combine: bool = False) -> dict[int, _Group]:
    """Line index of each asynchronous collective -> its group (XLA's combiners: one key,
    within the thresholds, no member depending on another)."""
    of: dict[int, _Group] = {}
    open_groups: dict[tuple, _Group] = {}
    ancestors = [0] * len(lines)
    bits = 0
    for n, name in enumerate(names):
        seen = 0
        for d in deps[n]:
            seen |= ancestors[d]
            if d in of:
                seen |= of[d].bit | of[d].ancestors
        ancestors[n] = seen
        if name not in collectives:
            continue
        is_root = lines[n].startswith("ROOT ")
        ins, _ = collectives[name]
        if ins.opcode not in ASYNC_KINDS:
            continue
        size = shape_bytes(ins.shape)
        key = (ins.opcode, *(ins.attributes.get(k) for k in _KEY_ATTRIBUTES))
        combinable = combine and ins.opcode in COMBINE_THRESHOLD_BYTES and not is_root
        group = open_groups.get(key) if combinable else None
        if group is not None and not (
            group.result_bytes + size <= COMBINE_THRESHOLD_BYTES.get(ins.opcode, 0)
            and len(group.members) < COMBINE_THRESHOLD_COUNT
            and not seen & group.bit
        ):
            group = None
        if group is None:
            bits += 1
            group = _Group(bit=1 << bits, root=is_root)
            if combinable:
                open_groups[key] = group
        group.members.append(collectives[name])
        group.result_bytes += size
        group.ancestors |= seen
        of[n] = group
    return of


def _list_schedule(lines, names, deps, of: dict[int, _Group], wrapped) -> list[str] | None:
    """A list schedule of the lines with each group's start and done as nodes: a start as
    soon as it can run, a done only when nothing else can; None on a cycle."""
    import heapq

    nodes: list[tuple[list[str], list[int]]] = []  # (text lines, node deps)
    node_of_line: list[int] = [0] * len(lines)
    group_nodes: dict[int, tuple[int, int]] = {}
    kinds: list[int] = []  # 0 start, 1 ordinary, 2 done, 3 root
    for n, line in enumerate(lines):
        group = of.get(n)
        if group is None:
            node_of_line[n] = len(nodes)
            nodes.append(([line], []))
            kinds.append(3 if line.startswith("ROOT ") else 1)
            continue
        if id(group) not in group_nodes:
            start_text, done_text = _pair(group, wrapped)
            group_nodes[id(group)] = (len(nodes), len(nodes) + 1)
            nodes.append(([start_text], []))
            kinds.append(0)
            if group.root:
                done_text = ["ROOT " + done_text[0]]
            nodes.append((done_text, [len(nodes) - 1]))
            kinds.append(3 if group.root else 2)
        node_of_line[n] = group_nodes[id(group)][1]
    for n in range(len(lines)):
        group = of.get(n)
        target = group_nodes[id(group)][0] if group is not None else node_of_line[n]
        nodes[target][1].extend(node_of_line[d] for d in deps[n])
    users: list[list[int]] = [[] for _ in nodes]
    waiting = [0] * len(nodes)
    for k, (_, node_deps) in enumerate(nodes):
        for d in set(node_deps):
            if d != k:
                users[d].append(k)
                waiting[k] += 1
    ready: list[tuple[int, int]] = []
    for k in range(len(nodes)):
        if waiting[k] == 0:
            heapq.heappush(ready, (kinds[k] if kinds[k] != 1 else 1, k))
    order: list[str] = []
    done = 0
    while ready:
        _, k = heapq.heappop(ready)
        order.extend(nodes[k][0])
        done += 1
        for u in users[k]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (kinds[u], u))
    return order if done == len(nodes) else None


def _pair(group: _Group, wrapped: list[str]) -> tuple[str, list[str]]:
    """The start line and the done lines (with a get-tuple-element per member when
    combined); each member's result keeps its name."""
    first, _ = group.members[0]
    if first.opcode == "all-to-all":
        return _async_wrapped(first, group.members[0][1], wrapped)
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


def _async_wrapped(ins: Instruction, operands: list[str], wrapped: list[str]):
    """XLA's form of an asynchronous all-to-all: ``async-start`` calling a computation that
    holds it, and ``async-done``."""
    comp = f"wrapped_{ins.name.replace('-', '_')}"
    params = "".join(
        f"  param_{j} = {format_shape(o.shape)} parameter({j})\n"
        for j, o in enumerate(ins.operands)
    )
    attrs = "".join(
        f", {k}={v}" for k, v in ins.attributes.items() if k not in ("sharding", "metadata")
    )
    inner = ", ".join(f"param_{j}" for j in range(len(ins.operands)))
    out = format_shape(ins.shape)
    wrapped.append(
        f"{comp} {{\n{params}  ROOT {ins.name}.1 = {out} all-to-all({inner}){attrs}\n}}\n"
    )
    sources = "(" + ", ".join(format_shape(o.shape) for o in ins.operands) + ")"
    start = (
        f"{ins.name}-start = ({sources}, {out}) async-start({', '.join(operands)}), calls={comp}"
    )
    return start, [f"{ins.name} = {out} async-done({ins.name}-start)"]
