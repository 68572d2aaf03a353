"""``python -m app`` is the ``kafka-purge`` command.

A Ctrl-C that arrives while the interpreter runs a callback of the import machinery is printed as
"Exception ignored" and lost (CPython reports exceptions raised in such callbacks and goes on). Until the
command's own code runs, SIGINT is noted as well as raised, and a noted one ends the command with 130.
"""

import signal
import sys
from types import FrameType

_interrupted = False


def _interrupt(signum: int, frame: FrameType | None) -> None:
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


_watching = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not when SIGINT is ignored
if _watching:
    signal.signal(signal.SIGINT, _interrupt)
try:
    from app.cli.main import main
except KeyboardInterrupt:
    sys.exit(130)
if _interrupted:
    sys.exit(130)
if _watching:
    signal.signal(signal.SIGINT, signal.default_int_handler)
sys.exit(main())
