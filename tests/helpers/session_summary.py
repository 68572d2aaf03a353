"""Lines a test folder adds to the terminal summary (the real cluster's start-up time, where its logs
were kept), from the process that ran its tests.

A folder's conftest registers a function of whether a test failed; ``tests/conftest.py`` prints what
they return at the end of the run. Under pytest-xdist those tests ran in a worker: the worker sends its
lines to the controller in its ``workeroutput``, since the controller loads only the top conftest.
"""

from __future__ import annotations

from collections.abc import Callable

SOURCES: list[Callable[[bool], list[str]]] = []
FROM_WORKERS: list[str] = []
KEY = "kafka_purge_summary"


def lines(failed: bool) -> list[str]:
    return [line for source in SOURCES for line in source(failed)]
