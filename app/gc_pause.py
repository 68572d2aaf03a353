"""Python's cyclic garbage collector kept off the hot paths: paused while a preview of a deletion is
built (``collection_paused``), and kept away from the objects a serving process starts with
(``freeze_startup_objects``).

A preview of 10,000 partitions and 50 consumer groups allocates about a million short-lived objects
(decoded offsets, impacts, the JSON text) and keeps a few hundred thousand of them until the answer is
sent. None of them form reference cycles, so reference counting frees them all; the cyclic collector
would only run several full collections over the whole heap meanwhile. ``bench/preview_bench.py``
(10,000 partitions, 50 groups; target under 2 s per preview) measured 1.08 s of service CPU per preview
with the pause and 2.14 s without it, over 1 s of it in collections.

Concurrent callers share one pause: the collector is enabled again when the last of them finishes,
unless it was disabled before the first.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_holders = 0
_was_enabled = False


@contextmanager
def collection_paused() -> Iterator[None]:
    global _holders, _was_enabled
    if _holders == 0:
        _was_enabled = gc.isenabled()
        gc.disable()
    _holders += 1
    try:
        yield
    finally:
        _holders -= 1
        if _holders == 0 and _was_enabled:
            gc.enable()


# The youngest generation is collected after 7,000 net allocations instead of CPython's 700.
YOUNG_THRESHOLD = 7000


def freeze_startup_objects() -> None:
    """Move everything alive at start-up (imported modules, the app, its routes and schemas) out of the
    cyclic collector's reach, as CPython's docs advise before forking workers (``gc.freeze``): a full
    collection then scans only what requests allocate, not the whole framework. Forked workers inherit
    the frozen generation and do not touch those pages, so they also stay shared. The young generation
    is then collected ten times less often: a request's objects are freed by reference counting when it
    ends, and at CPython's threshold of 700 a collection comes every few requests and traverses the ones
    still in flight, which age into the older generations and are traversed again.

    What it buys (``bench/service_bench.py``'s API load, PostgreSQL, 2 HTTP workers, api-only, the same
    run back to back on this machine): without it small POSTs ran at 368/s with a p99 of 312 ms and
    GETs at 841/s with a p99 of 248 ms; see ``bench/README.md`` for the figures with it.
    """
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)
