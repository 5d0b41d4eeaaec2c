"""Checking maps against independent evidence: expectation files and the provenance
interpreter (an HLO evaluator that shares no code with the op rules)."""
