"""gcpause.paused_gc: the collector's state is restored, and keep=True leaves nothing for a young collection."""

import gc
import weakref

from ctxview.gcpause import paused_gc


class _Node:
    def __init__(self) -> None:
        self.other = self


def test_restores_the_collector_state() -> None:
    assert gc.isenabled()
    with paused_gc(keep=True):
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc(keep=True):
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_keep_moves_what_the_block_built_to_the_oldest_generation() -> None:
    with paused_gc(keep=True):
        kept = [[i] for i in range(5000)]
        cycle = _Node()
    assert gc.get_count()[0] < 100  # no young collection pending over the 5000 lists
    assert gc.get_freeze_count() == 0  # nothing left frozen
    ref = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert ref() is None  # garbage made in the block is still collected
    assert len(kept) == 5000


def test_keep_leaves_objects_frozen_by_someone_else_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_gc(keep=True):
            [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
