"""Pausing Python's cyclic garbage collector around allocation-heavy work.

Preparing or analysing a 100k-message conversation allocates hundreds of
thousands of small objects; each allocation burst triggers collections that
walk the whole heap (the session itself is millions of objects), which costs
more than the work. The engine's values form no reference cycles, so pausing
the collector loses nothing; reference counting still frees memory at once.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block; restore its previous state after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
