"""The ``kafka-purge`` command, as ``python -m app`` and as the installed console script (``run``).

A Ctrl-C that arrives while the interpreter runs a callback of the import machinery is printed as
"Exception ignored" and lost (CPython reports exceptions raised in such callbacks and goes on). Until the
command's own code is imported, SIGINT is noted as well as raised, and a noted one ends the command with
130. This module imports nothing of the command before ``run`` installs that, so both ways in are covered.
"""

import signal
import sys
from types import FrameType

_interrupted = False


def _interrupt(signum: int, frame: FrameType | None) -> None:
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def run() -> int:
    watching = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not when SIGINT is ignored
    if watching:
        signal.signal(signal.SIGINT, _interrupt)
    try:
        from app.cli.main import main
    except KeyboardInterrupt:
        return 130
    if _interrupted:
        return 130
    if watching:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return main()


if __name__ == "__main__":
    sys.exit(run())
