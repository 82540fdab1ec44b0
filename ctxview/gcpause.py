"""Pausing Python's cyclic garbage collector around allocation-heavy work.

Preparing or analysing a 100k-message conversation allocates hundreds of
thousands of small objects; each allocation burst triggers collections that
walk the whole heap (the session itself is millions of objects), which costs
more than the work. The engine's values form no reference cycles, so pausing
the collector loses nothing; reference counting still frees memory at once.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["paused_gc"]


@contextmanager
def paused_gc(keep: bool = False) -> Iterator[None]:
    """Disable the cyclic collector for the block; restore its previous state after.

    `keep`: the block builds something that lives on (a loaded session). What it allocated sits in
    the youngest generation, so the first allocation after the block would start a collection that
    walks all of it (~40 ms for a 100 MB transcript) to find no garbage. Instead it is moved to the
    oldest generation as it stands: gc.freeze() then gc.unfreeze() relink the generation lists
    without walking them. Done only on the main thread and when nothing is frozen: unfreeze would
    thaw what someone froze (the inspector freezes its session and views from its main thread
    while a worker thread loads).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep and not gc.get_freeze_count() and threading.current_thread() is threading.main_thread():
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()
