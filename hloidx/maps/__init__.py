"""Symbolic core: expressions, intervals, indexing maps, their text format, simplifier,
verifier and utilization counts. Imports nothing of hloidx but ``source`` and ``errors``."""

# Expr's operators and str() are attached by the builders module (the node classes cannot
# import their builders without a circle); loading it with the package means every node, even
# one made through ``maps.nodes`` alone, has them.
from . import builders as _builders  # noqa: F401
