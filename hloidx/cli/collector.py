"""The garbage collector's thresholds while one module is analysed (`maps`, `summary`).

Analysing a module builds a few hundred thousand objects that live until the report is
written (the IR, maps, verdicts, the report's dicts) and frees few: at CPython's default
thresholds (700, 10, 10) the collector walks the live ones again and again, which was 40% of
``hloidx maps`` on a 55,000-instruction module. Larger thresholds keep the collector (and so
the reclaiming of any reference cycle) but run it far less often; peak memory did not change.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: (young generation, middle, old): a collection every 100,000 net allocations
RELAXED = (100_000, 50, 100)


#: whether the collector was enabled when :func:`relaxed_collector` paused it (a stack: blocks
#: may nest)
_ENABLED: list[bool] = []


@contextmanager
def relaxed_collector() -> Iterator[None]:
    """The block's collections at :data:`RELAXED` thresholds; none at all until
    :func:`keep_parsed` (the parse allocates millions of objects and frees almost none: the
    first collection after it walked them all, 3% of ``hloidx maps`` on a 59,000-instruction
    module)."""
    saved = gc.get_threshold()
    _ENABLED.append(gc.isenabled())
    gc.disable()
    gc.set_threshold(*RELAXED)
    try:
        yield
    finally:
        gc.unfreeze()  # what :func:`keep_parsed` set aside is collectable again
        gc.set_threshold(*saved)
        if _ENABLED.pop():
            gc.enable()


def keep_parsed() -> None:
    """Inside :func:`relaxed_collector`, once the module is parsed: every object alive now (the
    IR, the imported code) is set aside for the collector until the block ends. They live until
    the report is written anyway, and the collections during the analysis then walk only what
    the analysis made (the IR of a 40,000-instruction module is millions of objects: walking it
    in the middle generation's collections was 5% of ``hloidx maps``). At the block's end they
    are the collector's again, so that a module's cycles are reclaimed after its report
    (``hloidx maps`` over many files). The collector, paused since the block began, runs
    again."""
    gc.freeze()
    if _ENABLED and _ENABLED[-1]:
        gc.enable()
