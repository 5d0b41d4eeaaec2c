"""Indexing rules by op family; importing this package registers them all."""

from . import basic, collectives, custom_calls, reductions, shape_ops, windowed  # noqa: F401
