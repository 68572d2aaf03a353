"""Child processes that never outlive the process that started them."""

from __future__ import annotations

import contextlib
import ctypes
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Linux: this process gets SIGTERM when its parent dies, even by ``kill -9``.

    Called in a child right after fork (``preexec_fn``, or a forked worker); elsewhere a no-op.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
