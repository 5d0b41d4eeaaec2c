"""`hloidx maps` relaxes the garbage collector's thresholds for one module, then restores them."""

from __future__ import annotations

import gc

from hloidx.cli.collector import RELAXED, relaxed_collector


def test_thresholds_are_relaxed_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with relaxed_collector():
        assert gc.get_threshold() == RELAXED
    assert gc.get_threshold() == before


def test_thresholds_are_restored_after_an_error() -> None:
    before = gc.get_threshold()
    try:
        with relaxed_collector():
            raise ValueError
    except ValueError:
        pass
    assert gc.get_threshold() == before
