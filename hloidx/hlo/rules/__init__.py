"""Indexing rules by op family; importing this package registers them all."""

from . import (  # noqa: F401
    async_ops,
    attention,
    basic,
    collectives,
    cudnn_attention,
    custom_calls,
    reductions,
    shape_ops,
    windowed,
)
