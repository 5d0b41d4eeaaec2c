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


def test_what_is_kept_after_parsing_is_collectable_again_after_the_block() -> None:
    from hloidx.cli.collector import keep_parsed

    with relaxed_collector():
        keep_parsed()
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_a_cycle_kept_during_one_module_is_reclaimed_after_it() -> None:
    import weakref

    from hloidx.cli.collector import keep_parsed

    class Node:
        pass

    with relaxed_collector():
        node = Node()
        node.self = node  # a cycle, as the IR's instructions and computations make
        alive = weakref.ref(node)
        keep_parsed()
        del node
        gc.collect()
        assert alive() is not None  # set aside while the module is analysed
    gc.collect()
    assert alive() is None
