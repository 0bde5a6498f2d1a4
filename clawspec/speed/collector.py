"""Python's cyclic garbage collector, paused while loading allocates what lives on. The one place
ClawSpec steers the collector.

A run does not also freeze the loaded contracts (`gc.freeze`, so that full collections skip
them): measured side by side at 10,000 scenarios, that changed no figure (docs/internals.md)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector.

    Loading allocates millions of small objects and frees almost none, so the collector would
    re-scan all of them again and again: more than half of the load time of a large suite.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What loading allocated lives on (the contracts): straight to the oldest generation
        # (freeze, then unfreeze, scans nothing) rather than young, where the first collection
        # after loading would scan all of it at once (~0.1 s at 10,000 scenarios).
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()
