"""Indexing rules by op family; importing this package registers them all, except the
families the registry imports the first time it is asked about one of their opcodes (each
loader below, with the opcodes its modules register; a test checks the lists): the custom-call
families (custom_calls, attention, cudnn_attention, for ``custom-call`` and ``fft``), the
data-dependent slicing (dynamic_slicing, gather_scatter) and the collectives. Most modules have
few of these ops or none, and the import of these families was a fifth of the package's
start-up."""

from ..rule_registry import register_lazy_family
from . import (  # noqa: F401
    async_ops,
    basic,
    reductions,
    shape_ops,
    windowed,
)


def load_custom_call_families() -> None:
    """Register the custom-call and fft rules (attention kernels, cuBLAS/cuDNN calls, ...)."""
    from . import attention, cudnn_attention, custom_calls  # noqa: F401


def load_data_dependent_slicing() -> None:
    """Register the rules of dynamic slices and updates, gathers and scatters."""
    from . import dynamic_slicing, gather_scatter  # noqa: F401


def load_collectives() -> None:
    """Register the rules of the collectives (all-gather, all-to-all, ...)."""
    from . import collectives  # noqa: F401


#: each loader with the opcodes its families register
LAZY_FAMILIES = {
    load_custom_call_families: ("custom-call", "fft"),
    load_data_dependent_slicing: ("dynamic-slice", "dynamic-update-slice", "gather", "scatter"),
    load_collectives: (
        "all-gather",
        "all-gather-start",
        "all-gather-done",
        "all-reduce-done",
        "collective-permute",
        "collective-permute-start",
        "collective-permute-done",
        "reduce-scatter",
        "all-to-all",
    ),
}
for _load, _opcodes in LAZY_FAMILIES.items():
    register_lazy_family(_load, *_opcodes)
