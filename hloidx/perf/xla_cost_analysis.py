"""XLA's ``HloCostAnalysis`` with ``GpuHloCostAnalysis``'s overrides: each instruction's flops,
transcendentals, bytes accessed, per-operand bytes and utilization, output bytes and IR size,
as XLA:GPU's classic performance model reads them (openxla at
1e203b533f9702298d8b17ef1281e880132614bf: ``xla/service/hlo_cost_analysis.cc`` and
``xla/service/gpu/model/gpu_hlo_cost_analysis.cc``).

XLA's counting is kept as it is, quirks included: an elementwise op costs its op profile's clock
cycles per element (``sm_86`` by default); a fusion's flops are each fused instruction's flops
times its utilization (the share of its elements the roots need, rounded up to whole elements);
a fusion parameter is read ``size × utilization`` bytes; a fusion output is written at full size
except a ``dynamic-update-slice`` root, which writes its update (a ``bitcast`` of one is written
whole); a scatter inside a fusion leaves the fused operand at utilization 1, so a scatter fusion
reads and writes its whole operand; constants of more than 8 elements count as memory reads.
Values are stored as 32-bit floats where XLA stores them (its ``Properties`` are ``float``).
"""

from __future__ import annotations

from collections import defaultdict
from math import prod
from typing import TYPE_CHECKING

from ..hlo.element_types import element_bytes
from .flops import convolution_flops
from .op_profiles import DEFAULT_FLOPS_PER_ELEMENT, DEFAULT_PROFILE, OP_PROFILES
from .xla_collective_costs import (
    all_gather,
    all_reduce,
    async_start,
    custom_call_props,
    reduce_scatter,
)
from .xla_cost_base import (
    COPIED,
    FLOP_ELEMENTWISE,
    Props,
    array_leaf_bytes,
    elements_recursive,
    f32,
    first_array,
    post_order,
    shape_size,
    transpose_is_bitcast,
)
from .xla_cost_base import operand_key as _operand
from .xla_cost_base import out_key as _out
from .xla_cost_base import util_key as _util
from .xla_fusion_costs import fusion_props

if TYPE_CHECKING:
    from ..hlo.ir import Computation, Instruction, Shape


class GpuCostAnalysis:
    """``GpuHloCostAnalysis`` over the computations it is asked about (each analysed once)."""

    def __init__(
        self,
        profile: str = DEFAULT_PROFILE,
        count_multiple_input_accesses: bool = True,
        op_profile: dict[tuple[str, str], int] | None = None,
        module_attributes: dict[str, str] | None = None,
    ) -> None:
        self.profile = profile
        self.count_multiple = count_multiple_input_accesses
        table = OP_PROFILES.get(profile, OP_PROFILES[DEFAULT_PROFILE])
        self.op_profile = table if op_profile is None else op_profile
        self.module_attributes = module_attributes
        self.properties: dict[int, Props] = {}
        self.sums: dict[int, Props] = {}
        self.elementwise_use_roots: dict[int, set[int]] = {}
        self.root_utilizations: dict[int, float] = defaultdict(float)
        self._by_id: dict[int, Instruction] = {}

    # -- queries (XLA's names) -------------------------------------------------------------
    def _get(self, instr: Instruction, key) -> float:
        props = self.properties.get(id(instr))
        if props is None:
            self.analyze(instr.computation)
            props = self.properties.get(id(instr), Props())
        return props[key]

    def flop_count(self, instr: Instruction) -> int:
        return int(self._get(instr, "flops"))

    def transcendental_count(self, instr: Instruction) -> int:
        return int(self._get(instr, "transcendentals"))

    def bytes_accessed(self, instr: Instruction) -> int:
        return int(self._get(instr, "bytes"))

    def operand_bytes_accessed(self, instr: Instruction, k: int, index=()) -> int:
        return int(self._get(instr, _operand(k, tuple(index))))

    def operand_utilization(self, instr: Instruction, k: int) -> float:
        return self._get(instr, _util(k))

    def output_bytes_accessed(self, instr: Instruction, index=()) -> int:
        return int(self._get(instr, _out(tuple(index))))

    def bytes_transferred(self, instr: Instruction) -> float:
        return self._get(instr, "transferred")

    def ir_size(self, instr: Instruction) -> float:
        return self._get(instr, "ir_size")

    def total(self, comp: Computation, key: str) -> float:
        """A computation's sum of one property (``flop_count()``, ``bytes_accessed()``)."""
        return self.analyze(comp)[key]

    def common_elementwise_utilization(self, a: Instruction, b: Instruction) -> float:
        roots_b = self.elementwise_use_roots.get(id(b), set())
        mine = self.elementwise_use_roots.get(id(a), ())
        return f32(sum(self.root_utilizations[r] for r in mine if r in roots_b))

    def shape_size(self, shape: Shape) -> int:
        return shape_size(shape)

    # -- the visit -------------------------------------------------------------------------
    def analyze(self, comp: Computation | None) -> Props:
        """Every instruction of ``comp`` visited once; the computation's sum of properties."""
        if comp is None:
            return Props()
        found = self.sums.get(id(comp))
        if found is not None:
            return found
        total = Props()
        self.sums[id(comp)] = total
        for instr in post_order(comp):
            if id(instr) in self.properties:
                props = self.properties[id(instr)]
            else:
                props = self.visit(instr)
            for key, value in props.items():
                if key in ("utilization",):
                    continue
                total[key] += value
        return total

    def visit(self, instr: Instruction) -> Props:
        props = self.preprocess(instr)
        handler = getattr(self, "_" + instr.opcode.replace("-", "_"), None)
        if instr.opcode in ("gather", "scatter"):
            handler = getattr(self, instr.opcode)
        if instr.opcode in FLOP_ELEMENTWISE:
            handler = self._elementwise
        if handler is not None:
            props = handler(instr, props) or props
        self._by_id[id(instr)] = instr
        self.properties[id(instr)] = props
        return props

    def preprocess(self, instr: Instruction) -> Props:
        props = Props()
        out = shape_size(instr.shape)
        total = float(out)
        props[_out()] = float(out)
        for k, operand in enumerate(instr.operands):
            size = shape_size(operand.shape)
            total += size
            props[_operand(k)] = float(size)
            props[_util(k)] = 1.0
        props["bytes"] = total
        props["ir_size"] = 1.0
        return props

    def _sub(self, comp: Computation | None) -> Props:
        """``ProcessSubcomputation``: the properties a caller copies (flops, transcendentals)."""
        total = self.analyze(comp)
        return Props({k: v for k, v in total.items() if k in COPIED})

    def _called(self, instr: Instruction, key: str = "to_apply") -> Computation | None:
        found = instr.called_computations.get(key) or instr.called_computations.get("calls")
        return found[0] if found else None

    # -- handlers --------------------------------------------------------------------------
    def flops_per_element(self, opcode: str, element_type: str) -> int:
        return self.op_profile.get((opcode, element_type.lower()), DEFAULT_FLOPS_PER_ELEMENT)

    def elementwise_flops(self, opcode: str, shape: Shape) -> int:
        et = first_array(shape).element_type
        return self.flops_per_element(opcode, et) * elements_recursive(shape)

    def _elementwise(self, instr: Instruction, p: Props) -> None:
        p["flops"] = float(self.elementwise_flops(instr.opcode, instr.shape))

    def _zero(self, instr: Instruction, p: Props) -> None:
        p["bytes"] = 0.0
        p[_out()] = 0.0
        for k in range(len(instr.operands)):
            p[_operand(k)] = 0.0

    _parameter = _constant = _after_all = _add_dependency = _domain = _zero
    _bitcast = _get_tuple_element = _zero

    def _rng(self, instr: Instruction, p: Props) -> None:
        p["transcendentals"] = float(instr.shape.num_elements())

    def _rng_bit_generator(self, instr: Instruction, p: Props) -> None:
        p["transcendentals"] = float(elements_recursive(instr.shape))

    def _slice(self, instr: Instruction, p: Props) -> None:
        out = shape_size(instr.shape)
        p["bytes"] = 2.0 * out
        p[_out()] = float(out)
        p[_operand(0)] = float(out)
        p[_util(0)] = f32(instr.shape.num_elements() / instr.operands[0].shape.num_elements())

    def _dynamic_slice(self, instr: Instruction, p: Props) -> None:
        out = shape_size(instr.shape)
        index = shape_size(instr.operands[1].shape) if len(instr.operands) > 1 else 0
        p["bytes"] = 2.0 * out + index
        p[_out()] = float(out)
        p[_operand(0)] = float(out)
        if len(instr.operands) > 1:
            p[_operand(1)] = float(index)
        p[_util(0)] = f32(instr.shape.num_elements() / instr.operands[0].shape.num_elements())

    def _dynamic_update_slice(self, instr: Instruction, p: Props) -> None:
        update = shape_size(instr.operands[1].shape)
        index = shape_size(instr.operands[2].shape) if len(instr.operands) > 2 else 0
        n_update = instr.operands[1].shape.num_elements()
        n_out = instr.shape.num_elements()
        p["bytes"] = 2.0 * update + index
        p[_out()] = float(update)  # operand 0 aliases the output
        p[_operand(0)] = 0.0
        p[_operand(1)] = float(update)
        if len(instr.operands) > 2:
            p[_operand(2)] = float(index)
        p[_util(0)] = f32((n_out - n_update) / n_out) if n_out else 0.0

    def _tuple(self, instr: Instruction, p: Props) -> None:
        size = shape_size(instr.shape)
        p["bytes"] = float(size)
        p[_out()] = float(size)
        for k in range(len(instr.operands)):
            p[_operand(k)] = 0.0

    def _transpose(self, instr: Instruction, p: Props) -> None:
        if instr.operands and transpose_is_bitcast(instr):
            p["bytes"] = 0.0
            p[_out()] = 0.0
            p[_operand(0)] = 0.0

    def _broadcast(self, instr: Instruction, p: Props) -> None:
        if self.count_multiple:
            p[_operand(0)] = float(shape_size(instr.shape))
            n_in = instr.operands[0].shape.num_elements()
            p[_util(0)] = f32(instr.shape.num_elements() / n_in) if n_in else 0.0

    def _dot(self, instr: Instruction, p: Props) -> None:
        dnums = instr.dot_dimension_numbers
        lhs = instr.operands[0].shape
        width = prod(lhs.dims[d] for d in dnums.lhs_contracting)
        p["flops"] = float(2 * first_array(instr.shape).num_elements() * width)

    def _convolution(self, instr: Instruction, p: Props) -> None:
        p["flops"] = float(convolution_flops(instr))

    def _map(self, instr: Instruction, p: Props) -> None:
        n = instr.shape.num_elements()
        for key, value in self._sub(self._called(instr)).items():
            p[key] = f32(value * n)

    def _reduce(self, instr: Instruction, p: Props) -> None:
        out_shape = first_array(instr.shape)
        count = instr.operands[0].shape.num_elements() - out_shape.num_elements()
        for key, value in self._sub(self._called(instr)).items():
            p[key] = f32(value * count)
        # GpuHloCostAnalysis::HandleReduce
        out = float(sum(shape_size(s) for s in instr.shape.leaves() if s.is_array))
        p[_out()] = out
        inputs = len(instr.operands) // 2
        total = out + sum(p[_operand(k)] for k in range(inputs))
        n_out = out_shape.num_elements()
        for k in range(inputs, len(instr.operands)):
            init = float(n_out * shape_size(instr.operands[k].shape))
            p[_operand(k)] = init
            p[_util(k)] = float(n_out)
            total += init
        p["bytes"] = total

    def _reduce_window(self, instr: Instruction, p: Props) -> None:
        window = instr.window or ()
        window_count = prod(w.size for w in window)
        out = first_array(instr.shape)
        n_out = out.num_elements()
        count = (window_count - 1) * n_out
        reducing = [w for w in window if w.size != 1]
        padded = [w for w in window if w.pad_low or w.pad_high]
        if len(reducing) == 1 and len(padded) == 1 and not instr.shape.is_tuple:
            for d, w in enumerate(window):
                if w.size != 1 and w.pad_low and w.pad_low == w.pad_high == (w.size - 1) // 2:
                    if w.size == 2 * w.pad_low + 1 and w.pad_low == out.dims[d] - 1:
                        window_count = out.dims[d]
                        count = n_out // window_count + window_count - 1
                    break
        if self.count_multiple:
            operand = instr.operands[0].shape
            p[_util(0)] = f32(n_out * window_count / operand.num_elements())
            p[_operand(0)] = float(n_out * window_count * element_bytes(operand.element_type))
        for key, value in self._sub(self._called(instr)).items():
            p[key] = f32(value * count)

    def _select_and_scatter(self, instr: Instruction, p: Props) -> None:
        called = instr.called_computations
        source = instr.operands[1].shape.num_elements()
        window = prod(w.size for w in (instr.window or ()))
        for key, value in self._sub((called.get("select") or [None])[0]).items():
            p[key] += f32(value * source * (window - 1))
        for key, value in self._sub((called.get("scatter") or [None])[0]).items():
            p[key] += f32(value * source)

    def gather(self, instr: Instruction, p: Props) -> Props:
        out = shape_size(instr.shape)
        index = shape_size(instr.operands[1].shape)
        p["bytes"] = 2.0 * out + index
        p[_operand(0)] = float(out)
        p[_operand(1)] = float(index)
        p[_util(0)] = f32(instr.shape.num_elements() / instr.operands[0].shape.num_elements())
        p[_out()] = float(out)
        return p

    def scatter(self, instr: Instruction, p: Props) -> Props:
        n = len(instr.operands) // 2
        updates = instr.operands[n + 1 :]
        total_update = 0
        for k, update in enumerate(updates):
            size = shape_size(update.shape)
            p[_operand(k)] = float(size)
            p[_operand(n + 1 + k)] = float(size)
            total_update += size
        index = shape_size(instr.operands[n].shape)
        p[_operand(n)] = float(index)
        p["bytes"] = 3.0 * total_update + index
        p[_out()] = float(total_update)
        count = updates[0].shape.num_elements() if updates else 0
        for key, value in self._sub(self._called(instr)).items():
            p[key] = f32(value * count)
        return p

    def _sort(self, instr: Instruction, p: Props) -> None:
        n = instr.operands[0].shape.num_elements()
        p["flops"] = float(n * max(0, (n - 1).bit_length()))

    def _fft(self, instr: Instruction, p: Props) -> None:
        from ..hlo.attributes import parse_int_list

        lengths = parse_int_list(instr.attributes.get("fft_length", "{}")) or ()
        logs = prod(max(0, int(d).bit_length() - 1) for d in lengths)
        p["flops"] = float(2 * 4 * logs * first_array(instr.operands[0].shape).num_elements())

    def _concatenate(self, instr: Instruction, p: Props) -> None:
        axis = (instr.dimensions or (0,))[0]
        per = 400 if axis > 0 and instr.operands[0].shape.dims[axis] & 31 else 6
        p["flops"] = float(per * elements_recursive(instr.shape))

    def _call(self, instr: Instruction, p: Props) -> Props:
        return Props(self.analyze(self._called(instr)))

    def _while(self, instr: Instruction, p: Props) -> Props:
        called = instr.called_computations
        out = Props()
        for key in ("body", "condition"):
            for comp in called.get(key, []):
                for k, v in self.analyze(comp).items():
                    out[k] += v
        return out

    def _conditional(self, instr: Instruction, p: Props) -> Props:
        out: Props | None = None
        for comp in instr.called_computations.get("branch_computations", []):
            props = self.analyze(comp)
            if out is None:
                out = Props(props)
            else:
                for k, v in props.items():
                    out[k] = max(out[k], v)
        return out or Props()

    def _custom_call(self, instr: Instruction, p: Props) -> Props:

        return custom_call_props(self, instr, p)

    def _all_reduce(self, instr: Instruction, p: Props) -> None:
        all_reduce(self, instr, p)

    def _all_reduce_start(self, instr: Instruction, p: Props) -> Props:
        transferred = float(array_leaf_bytes(instr.shape))
        p["flops"] = float(self.reducer_flops(instr))
        p["bytes"] = transferred
        p["transferred"] = transferred
        return p

    def reducer_flops(self, instr: Instruction) -> int:
        comp = self._called(instr)
        root = comp.root if comp is not None else None
        if root is None:
            return 0
        return self.elementwise_flops(root.opcode, instr.shape)

    def _all_gather(self, instr: Instruction, p: Props) -> None:

        all_gather(self, instr, p, array_leaf_bytes(instr.shape))

    def _all_gather_start(self, instr: Instruction, p: Props) -> None:

        all_gather(self, instr, p, array_leaf_bytes(instr.shape, skip_index=0))

    def _reduce_scatter(self, instr: Instruction, p: Props) -> None:

        reduce_scatter(self, instr, p)

    def _all_to_all(self, instr: Instruction, p: Props) -> None:
        p["transferred"] = float(array_leaf_bytes(instr.shape))

    def _async_start(self, instr: Instruction, p: Props) -> Props:

        return async_start(self, instr, p)

    def _fusion(self, instr: Instruction, p: Props) -> Props:

        return fusion_props(self, instr)
