"""Kernels that update a buffer in place, as XLA:GPU runs them: which operand the output
aliases, what the kernel launches over, which bytes it reads and writes, and when XLA has to
copy an operand first.

Facts (openxla/xla):

- ``CanEmitFusedDynamicUpdateSliceInPlace`` (``xla/codegen/ir_emission_utils.cc``): every root
  is a dynamic-update-slice (DUS), possibly under a bitcast, with a single path to the root;
  its base (through one bitcast) is a parameter of the fusion; the parameter's other users are
  elementwise ops, bitcasts, tuples, or dynamic-slices of the update's shape at the DUS's
  start indices; every update has the same shape. Then ``InPlaceDynamicUpdateSliceFusion``
  (``in_place_dynamic_update_slice.cc``) launches one thread per update element (no unroll),
  reads the update and the start indices, writes the update into the output buffer, which is
  the base's buffer: the base is not read. Otherwise XLA emits the loop fusion, over the whole
  output, reading the base.
- ``ScatterFusion`` (``scatter.cc``): launches over the updates (or the indices, distributed
  over warps); each update element is combined with the operand element it lands on and
  written back into the output, which aliases the operand (``alias_info.cc``: a scatter's
  operand and output are an in-place pair): the updated rows are read once (not at all when
  the combiner keeps only the update) and written once.
- ``DynamicMemcpyFusion``: a dynamic-slice or DUS root (through a bitcast) of parameters,
  contiguous, with constant offsets (or marked ``__dynamic_memcpy`` by XLA's rewriter) is a
  device memcpy of the slice.
- ``copy_insertion.cc``: an in-place operand whose buffer cannot be reused (a constant, an
  entry parameter the module does not donate, a value read after the in-place kernel) is
  copied first; the copy is a kernel of its own (``copy_before``).

API: :func:`in_place_kernel` (the facts of one fusion or one-op fusion), :func:`copy_reason`
(why an operand is copied first), :func:`dus_fallback_reason` (why a DUS fusion is not in
place), :func:`aliased_operands` (the in-place pairs of any instruction).
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING

from ..hlo.element_types import element_bytes
from ..hlo.fusion import body_of, computation_outputs
from .backend_config import fusion_kind_of

if TYPE_CHECKING:
    from ..hlo.ir import Computation, Instruction, Shape

#: ops XLA lets a dynamic-update-slice's base parameter feed besides the DUS itself
_ELEMENTWISE_USERS = frozenset(
    {
        "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex", "convert",
        "copy", "cosine", "divide", "exponential", "exponential-minus-one", "floor", "imag",
        "is-finite", "log", "log-plus-one", "logistic", "maximum", "minimum", "multiply",
        "negate", "not", "or", "popcnt", "power", "real", "remainder", "round-nearest-afz",
        "round-nearest-even", "rsqrt", "select", "shift-left", "shift-right-arithmetic",
        "shift-right-logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor",
        "bitcast", "tuple",
    }
)  # fmt: skip


@dataclass(frozen=True)
class InPlaceKernel:
    """How XLA:GPU runs one in-place fusion.

    ``kind``: ``dynamic-update-slice``, ``scatter`` or ``memcpy``; ``emitter``: XLA's name
    for it; ``aliased``: the fusion operands whose buffer the output reuses (not read, except
    ``aliased_bytes_read``); ``launch_dims``: the shape its threads walk; ``reads_from``: the
    instructions of the fused computation whose output-to-input maps give everything else the
    kernel reads (the updates and the start indices); ``bytes_written``: what it writes;
    ``combiner``: a scatter, whose combiner runs once per update element."""

    kind: str
    emitter: str
    aliased: tuple[int, ...]
    launch_dims: tuple[int, ...]
    reads_from: tuple[Instruction, ...]
    aliased_bytes_read: int
    bytes_written: int
    detail: str
    #: the op whose own flops the kernel runs once per update element (a scatter's combiner)
    combiner: Instruction | None = None


def _array_bytes(shape: Shape, element_type: str | None = None) -> int:
    return shape.num_elements() * element_bytes(element_type or shape.element_type)


def _skip_bitcast(instr: Instruction) -> Instruction:
    while instr.opcode == "bitcast" and instr.operands:
        instr = instr.operands[0]
    return instr


_USERS: weakref.WeakKeyDictionary[Computation, dict[int, list[Instruction]]] = (
    weakref.WeakKeyDictionary()
)


def users_of(instr: Instruction) -> list[Instruction]:
    """The instructions of ``instr``'s computation that read it."""
    comp = instr.computation
    if comp is None:
        return []
    table = _USERS.get(comp)
    if table is None:
        table = {}
        for user in comp.instructions:
            for operand in user.operands:
                found = table.setdefault(id(operand), [])
                if not found or found[-1] is not user:
                    found.append(user)
        _USERS[comp] = table
    return table.get(id(instr), [])


def _dus_roots(body: Computation) -> list[Instruction] | None:
    roots = computation_outputs(body)
    found = [_skip_bitcast(r) for r in roots]
    if not found or any(r.opcode != "dynamic-update-slice" for r in found):
        return None
    return found


def dus_fallback_reason(fusion: Instruction) -> str:
    """Why XLA cannot emit the fusion's dynamic-update-slices in place ('' when it can)."""
    body = body_of(fusion)
    roots = _dus_roots(body)
    if roots is None:
        return "not every root is a dynamic-update-slice"
    update_shape = roots[0].operands[1].shape.dims
    root = body.root
    for dus in roots:
        node, users = dus, users_of(dus)
        while users:
            if len(users) > 1:
                return f"{dus.name} has more than one user"
            node = users[0]
            if node is root and node.opcode == "tuple":
                break
            if node.opcode != "bitcast":
                return f"{dus.name} reaches the root through a {node.opcode}"
            users = users_of(node)
        base = dus.operands[0]
        if base.opcode == "bitcast" and base.operands:
            base = base.operands[0]
        if base.opcode != "parameter":
            return f"the base of {dus.name} is computed in the fusion ({base.opcode})"
        why = _base_users_reason(base, dus, update_shape)
        if why:
            return why
        if dus.operands[1].shape.dims != update_shape:
            return "the dynamic-update-slices' updates differ in shape"
    return ""


def _base_users_reason(base: Instruction, dus: Instruction, update_shape) -> str:
    """XLA's breadth-first check of the base parameter's users (a race when updated in
    place otherwise)."""
    queue, seen = [base], {id(base), id(dus)}
    while queue:
        instr = queue.pop(0)
        for user in users_of(instr):
            if user.opcode == "dynamic-slice" and user.operands[0] is dus.operands[0]:
                starts, written = user.operands[1:], dus.operands[2:]
                same = len(starts) == len(written) and all(
                    a is b for a, b in zip(starts, written, strict=True)
                )
                if user.shape.dims == update_shape and (prod(update_shape) == 1 or same):
                    pass
                else:
                    return f"{user.name} reads the base at other offsets than {dus.name} writes"
            elif user is not dus and user.opcode == "dynamic-update-slice":
                return f"the base is updated by {user.name} too"
            elif (
                user is not dus
                and user.opcode != "dynamic-slice"
                and user.opcode not in _ELEMENTWISE_USERS
            ):
                return f"the base is read by a {user.opcode}"
            if id(user) not in seen:
                seen.add(id(user))
                queue.append(user)
    return ""


def _operand_index(fusion: Instruction, param: Instruction) -> int:
    number = param.parameter_number
    return number if number is not None and number < len(fusion.operands) else -1


def _memcpy(fusion: Instruction, body: Computation) -> InPlaceKernel | None:
    """XLA's ``DynamicMemcpyFusion``: a contiguous slice copied by the driver."""
    roots = computation_outputs(body)
    if len(roots) != 1:
        return None
    root = _skip_bitcast(roots[0])
    if root.opcode not in ("dynamic-slice", "dynamic-update-slice"):
        return None
    is_dus = root.opcode == "dynamic-update-slice"
    first_offset = 2 if is_dus else 1
    moved = root.operands[1].shape if is_dus else root.shape
    whole = root.operands[0].shape
    if any(_skip_bitcast(o).opcode != "parameter" for o in root.operands[:first_offset]):
        return None
    marked = fusion_kind_of(fusion) == "__dynamic_memcpy"
    offsets = root.operands[first_offset:]
    if not marked:
        for d, offset in enumerate(offsets):
            if moved.dims[d] != whole.dims[d] and offset.opcode != "constant":
                return None
    if not _contiguous(moved.dims, whole.dims):
        return None
    size = _array_bytes(moved, whole.element_type)
    source = _skip_bitcast(root.operands[1] if is_dus else root.operands[0])
    base = _operand_index(fusion, _skip_bitcast(root.operands[0]))
    return InPlaceKernel(
        "memcpy",
        "memcpy (XLA's DynamicMemcpyFusion)",
        (base,) if is_dus and base >= 0 else (),
        tuple(moved.dims),
        (source,),
        0,
        size,
        f"a device-to-device memcpy of {size} bytes"
        + (" into the base's buffer (updated in place)" if is_dus else ""),
    )


def _contiguous(part: tuple[int, ...], whole: tuple[int, ...]) -> bool:
    """A row-major slice is contiguous when every dimension after its first one larger than 1
    is whole."""
    k = next((d for d, p in enumerate(part) if p != 1), len(part))
    return all(part[d] == whole[d] for d in range(k + 1, len(part)))


def _dynamic_update_slice(fusion: Instruction, body: Computation) -> InPlaceKernel | None:
    roots = _dus_roots(body)
    if roots is None or dus_fallback_reason(fusion):
        return None
    aliased, reads, written = [], [], 0
    for dus in roots:
        base = _skip_bitcast(dus.operands[0])
        index = _operand_index(fusion, base)
        if index >= 0 and index not in aliased:
            aliased.append(index)
        reads.extend(dus.operands[1:])
        written += _array_bytes(dus.operands[1].shape, dus.shape.element_type)
    update = roots[0].operands[1].shape
    return InPlaceKernel(
        "dynamic-update-slice",
        "dynamic-update-slice (in place)",
        tuple(aliased),
        tuple(update.dims),
        tuple(reads),
        0,
        written,
        f"XLA's InPlaceDynamicUpdateSliceFusion: one thread per element of the update "
        f"{list(update.dims)}, written into the base's buffer, which is not read",
    )


def _keeps_only_update(scatter: Instruction) -> bool:
    """The combiner returns its second parameter (an assignment): the old value is not read."""
    comp = (scatter.called_computations.get("to_apply") or [None])[0]
    root = comp.root if comp is not None else None
    return root is not None and root.opcode == "parameter" and root.parameter_number == 1


def _scatter(fusion: Instruction, body: Computation) -> InPlaceKernel | None:
    roots = computation_outputs(body)
    if len(roots) != 1:
        return None
    scatter = _skip_bitcast(roots[0])
    if scatter.opcode != "scatter" or len(scatter.operands) != 3:
        return None
    operand, indices, updates = scatter.operands
    if _skip_bitcast(operand).opcode != "parameter":
        return None
    index = _operand_index(fusion, _skip_bitcast(operand))
    rows = _array_bytes(updates.shape, scatter.shape.element_type)
    read = 0 if _keeps_only_update(scatter) else rows
    how = "written" if read == 0 else "read, combined and written back"
    return InPlaceKernel(
        "scatter",
        "scatter (in place)",
        (index,) if index >= 0 else (),
        tuple(updates.shape.dims),
        (indices, updates),
        read,
        rows,
        f"XLA's ScatterFusion: threads walk the updates {list(updates.shape.dims)}; the "
        f"operand elements they land on are {how} in the operand's buffer (the rest of it "
        "is not touched)",
        scatter,
    )


def in_place_kernel(fusion: Instruction) -> InPlaceKernel | None:
    """How XLA:GPU runs ``fusion`` (a fusion, or a one-op fusion of an unfused DUS, scatter or
    dynamic-slice) when it is an in-place kernel or a memcpy; None otherwise."""
    kind = (fusion.fusion_kind or "").lower()
    if kind in ("kcustom", "custom") and fusion_kind_of(fusion) != "__dynamic_memcpy":
        return None
    body = body_of(fusion)
    return _memcpy(fusion, body) or _dynamic_update_slice(fusion, body) or _scatter(fusion, body)


def _donated_parameters(module) -> set[int]:
    """Entry parameters the module lets the outputs reuse (``input_output_alias``,
    ``buffer_donor``)."""
    found: set[int] = set()
    aliases = module.attributes.get("input_output_alias", "") if module is not None else ""
    for m in re.finditer(r":\s*\(\s*(\d+)", aliases):
        found.add(int(m.group(1)))
    donors = module.attributes.get("buffer_donor", "") if module is not None else ""
    for m in re.finditer(r"\(\s*(\d+)\s*,", donors):
        found.add(int(m.group(1)))
    return found


def copy_reason(instr: Instruction, operand: Instruction) -> str:
    """Why XLA's copy insertion copies ``operand`` before the in-place kernel ``instr`` (an
    entry-level instruction) updates it ('' when the kernel can update it where it is)."""
    value = _skip_bitcast(operand)
    if value.opcode == "constant":
        return f"{operand.name} is a constant (read-only)"
    comp = instr.computation
    if value.opcode == "parameter" and comp is not None and comp.is_entry:
        module = comp.module
        if value.parameter_number not in _donated_parameters(module):
            return f"{operand.name} is an entry parameter the module does not donate"
    if comp is None:
        return ""
    readers = [
        user
        for v in dict.fromkeys([operand, value])
        for user in users_of(v)
        if user is not instr and user.opcode != "bitcast"
    ]
    if not readers:
        return ""
    module = comp.module
    if module is not None and module.attributes.get("is_scheduled", "").lower() == "true":
        # the text's order is the schedule: a reader after the kernel needs the old value
        order = {id(i): k for k, i in enumerate(comp.instructions)}
        here = order.get(id(instr), -1)
        later = [u for u in readers if order.get(id(u), -1) > here]
    else:
        # before scheduling, copy insertion orders by dependencies: only a reader the kernel
        # depends on surely runs first
        before = _ancestors(instr)
        later = [u for u in readers if id(u) not in before]
    if later:
        return f"{operand.name} is still read by {later[0].name} after {instr.name} updates it"
    return ""


def _ancestors(instr: Instruction) -> set[int]:
    """The instructions ``instr`` depends on, transitively, in its computation."""
    seen: set[int] = set()
    stack = list(instr.operands)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(node.operands)
    return seen


def aliased_operands(instr: Instruction) -> tuple[int, ...]:
    """The operands whose buffer ``instr``'s output reuses (XLA's in-place pairs that hloidx
    models): a DUS's base, a scatter's operand, a custom call's ``output_to_operand_aliasing``,
    and an in-place fusion's aliased operands."""
    op = instr.opcode
    if op in ("dynamic-update-slice", "scatter"):
        return (0,)
    if op == "custom-call":
        text = instr.attributes.get("output_to_operand_aliasing", "")
        return tuple(sorted({int(m.group(1)) for m in re.finditer(r":\s*\(\s*(\d+)", text)}))
    if op == "fusion":
        found = in_place_kernel(instr)
        return found.aliased if found is not None else ()
    return ()
