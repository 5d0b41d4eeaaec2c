"""Symbolic core: expressions, intervals, indexing maps, their text format, simplifier,
verifier and utilization counts. Imports nothing of hloidx but ``source`` and ``errors``."""
