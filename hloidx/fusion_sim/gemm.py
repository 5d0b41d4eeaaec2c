"""XLA's ``GemmRewriter``: a dot becomes a cuBLAS call (``__cublas$gemm``), folding the
epilogue cuBLAS computes for free: a matrix bias (``add(dot, bias)``, bias of the dot's
shape and the dot's only user: ``beta = 1``, the output written over the bias) and a scaling
by a constant (``multiply(dot, broadcast(constant))``: ``alpha``).

hloidx models every dot as cuBLAS. XLA's ``GemmFusion`` would make Triton GEMM fusions of
some (on Ampere and later), and its autotuner then picks Triton or cuBLAS by measuring: that
choice cannot be made from the text, and the GEMM's time comes from the same table either way.
Activation epilogues (``cublasLt``'s RELU/GELU) are not folded: they stay loop fusions.
"""

from __future__ import annotations

import json

from ..hlo.ir import Instruction


def _dims(values) -> list[str]:
    return [str(v) for v in values]


def _config(dot: Instruction, alpha: float, beta: float) -> str:
    numbers = dot.dot_dimension_numbers
    config = {
        "gemm_backend_config": {
            "alpha_real": alpha,
            "alpha_imag": 0,
            "beta": beta,
            "dot_dimension_numbers": {
                "lhs_contracting_dimensions": _dims(numbers.lhs_contracting),
                "rhs_contracting_dimensions": _dims(numbers.rhs_contracting),
                "lhs_batch_dimensions": _dims(numbers.lhs_batch),
                "rhs_batch_dimensions": _dims(numbers.rhs_batch),
            },
            "epilogue": "DEFAULT",
        }
    }
    return json.dumps(config, separators=(",", ":"))


def _constant_scalar(ins: Instruction) -> float | None:
    while ins.opcode in ("broadcast", "reshape", "bitcast", "convert"):
        ins = ins.operands[0]
    if ins.opcode == "constant" and ins.shape.is_array and not ins.shape.dims:
        try:
            return float((ins.literal or "").strip())
        except ValueError:
            return None
    return None


def rewrite_gemms(
    instrs: list[Instruction], outputs: set[int]
) -> tuple[list[Instruction], dict[int, Instruction]]:
    """The instructions with each dot replaced by a cuBLAS custom-call (operands rewired in
    place: these are the simulation's own copies), and the replacements by the id of the
    value they stand for."""
    users: dict[int, list[Instruction]] = {}
    for ins in instrs:
        for o in ins.operands:
            users.setdefault(id(o), []).append(ins)
    replaced: dict[int, Instruction] = {}
    dropped: set[int] = set()
    for ins in instrs:
        if ins.opcode != "dot" or not ins.shape.is_array:
            continue
        alpha, beta = 1.0, 0.0
        operands = list(ins.operands[:2])
        last = ins
        for _ in range(2):
            following = users.get(id(last), [])
            if len(following) != 1 or id(last) in outputs or id(following[0]) in outputs:
                break
            user = following[0]
            if id(user) in replaced or id(user) in dropped:
                break  # already the epilogue of another dot
            other = [o for o in user.operands if o is not last]
            if len(other) != 1 or user.shape.dims != ins.shape.dims:
                break
            if user.opcode == "multiply" and beta == 0 and _constant_scalar(other[0]) is not None:
                alpha *= _constant_scalar(other[0]) or 0.0
            elif user.opcode == "add" and beta == 0 and other[0].opcode != "broadcast":
                beta = 1.0
                operands.append(other[0])
            else:
                break
            dropped.add(id(last))
            last = user
        call = Instruction(
            name=ins.name,
            opcode="custom-call",
            shape=last.shape,
            operands=operands,
            attributes={
                "custom_call_target": '"__cublas$gemm"',
                "backend_config": _config(ins, alpha, beta),
            },
            computation=ins.computation,
        )
        replaced[id(last)] = call
        if last is not ins:
            dropped.add(id(ins))
            dropped.discard(id(last))
            dropped.add(id(last))
    if not replaced:
        return instrs, replaced
    out = []
    for ins in instrs:
        if id(ins) in replaced:
            call = replaced[id(ins)]
            call.operands = [replaced.get(id(o), o) for o in call.operands]
            out.append(call)
            continue
        if id(ins) in dropped:
            continue
        ins.operands = [replaced.get(id(o), o) for o in ins.operands]
        out.append(ins)
    return out, replaced
