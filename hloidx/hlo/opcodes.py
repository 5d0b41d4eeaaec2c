"""Every opcode XLA has, with its operand count, from XLA's ``xla/hlo/ir/hlo_opcode.h``.

An instruction whose opcode is not here is not HLO: XLA's parser rejects it. An opcode that is
here but has no indexing rule in hloidx (``custom-call``, ``fft``, ``scan``, ...) is valid HLO
whose operands hloidx reports as UNDEFINED.
"""

from __future__ import annotations

# operand count: opcodes (continuation lines start with spaces); "variadic": any count
_TABLE = """
0: constant iota parameter partition-id replica-id rng-get-and-update-state
1: abs acos acosh all-gather-done all-reduce-done asin asinh async-done atan atanh bitcast
    bitcast-convert broadcast cbrt ceil cholesky collective-permute-done convert copy
    copy-done copy-start cosh cosine count-leading-zeros domain erf exponential
    exponential-minus-one fft floor get-dimension-size get-tuple-element imag infeed
    is-finite log log-plus-one logistic negate not opt-barrier popcnt real recv recv-done
    reduce-precision reshape reverse rng-bit-generator round-nearest-afz round-nearest-even
    rsqrt send-done shuffle sign sine sinh slice sqrt tan tanh topk transpose while
2: add add-dependency and atan2 compare complex divide dot gather maximum minimum mulhi
    multiply or outfeed pad power remainder send set-dimension-size shift-left
    shift-right-arithmetic shift-right-logical stochastic-convert subtract triangular-solve
    xor
3: batch-norm-training clamp ragged-dot select select-and-scatter
4: scaled-dot
5: batch-norm-grad batch-norm-inference
6: ragged-all-to-all
variadic: after-all all-gather all-gather-start all-reduce all-reduce-start all-to-all
    async-start async-update call collective-broadcast collective-permute
    collective-permute-start collective-reduce concatenate conditional convolution
    custom-call dynamic-reshape dynamic-slice dynamic-update-slice fusion map reduce
    reduce-scatter reduce-window rng scan scatter sort tuple
"""


def _parse(table: str) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    arity: int | None = None
    for line in table.strip().splitlines():
        if not line.startswith(" "):
            label, line = line.split(":", 1)
            arity = None if label == "variadic" else int(label)
        for opcode in line.split():
            out[opcode] = arity
    return out


#: opcode -> fixed operand count, or None for a variadic opcode
XLA_OPCODES: dict[str, int | None] = _parse(_TABLE)


def is_xla_opcode(opcode: str) -> bool:
    return opcode in XLA_OPCODES


#: the phases of an asynchronous op: ``async-start``, ``async-update``, ``async-done``
ASYNC_PHASES = ("start", "update", "done")


def async_sugar(opcode: str) -> tuple[str, str] | None:
    """``(wrapped opcode, phase)`` when ``opcode`` is XLA's short form of an async wrapper.

    XLA prints ``async-start(...), calls=%c`` whose computation holds one ``reduce-scatter``
    as ``reduce-scatter-start(...)``, with the wrapped op's attributes inline (likewise
    ``-update`` and ``-done``). Opcodes that are real ops (``all-gather-start``,
    ``copy-start``, ...) are not sugar.
    """
    if opcode in XLA_OPCODES:
        return None
    base, _, phase = opcode.rpartition("-")
    if phase not in ASYNC_PHASES or base not in XLA_OPCODES or base.startswith("async"):
        return None
    return base, phase
