"""Asking before a change that cannot be undone, the way rpk and kafka-acls.sh do: only on a terminal,
unless ``--yes``; a script without ``--yes`` is refused rather than left waiting or guessed for."""

from __future__ import annotations

import sys

from app.cli.input import InputError


def require_terminal(action: str) -> None:
    """``InputError`` (usage) when stdin is not a terminal to answer a question on."""
    if not sys.stdin.isatty():
        raise InputError(
            f"not {action}: there is no terminal to confirm on (stdin is not a TTY); "
            "pass --yes (or --no-confirm) to go ahead without asking"
        )


def ask(question: str) -> bool:
    """``question [y/N]`` on stderr; only ``y`` or ``yes`` is a yes (Enter, EOF and anything else: no)."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):
        sys.stderr.write("\n")
    return answer.strip().lower() in {"y", "yes"}
