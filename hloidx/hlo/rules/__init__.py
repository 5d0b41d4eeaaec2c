"""Indexing rules by op family; importing this package registers them all, except the
custom-call families (custom_calls, attention, cudnn_attention): the registry imports those
the first time it is asked about ``custom-call`` or ``fft`` (:func:`load_custom_call_families`,
handed to the registry below),
since most modules have neither and their import was a tenth of the package's start-up."""

from ..rule_registry import register_lazy_family
from . import (  # noqa: F401
    async_ops,
    basic,
    collectives,
    reductions,
    shape_ops,
    windowed,
)


def load_custom_call_families() -> None:
    """Register the custom-call and fft rules (attention kernels, cuBLAS/cuDNN calls, ...)."""
    from . import attention, cudnn_attention, custom_calls  # noqa: F401


register_lazy_family(load_custom_call_families, "custom-call", "fft")
