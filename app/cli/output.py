"""Text output of the client commands: partition tables and a progress bar (plain lines off a TTY)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

BAR_WIDTH = 30
TERMINAL = {"succeeded", "partially_failed", "failed", "cancelled"}
FAILED = {"partially_failed", "failed"}


def say(text: str = "", *, err: bool = False) -> None:
    """One line on stdout (or stderr): the commands' output."""
    (sys.stderr if err else sys.stdout).write(f"{text}\n")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO = sys.stdout) -> None:
    cells = [[str(h) for h in headers], *[[("" if c is None else str(c)) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        out.write("\n")


def partition_rows(partitions: Sequence[dict[str, Any]]) -> list[list[Any]]:
    return [
        [
            p["topic"],
            p["partition"],
            p["resolved_offset"],
            p["status"],
            p.get("low_watermark"),
            p.get("error_code") or "",
            p.get("error_message") or "",
        ]
        for p in partitions
    ]


PARTITION_HEADERS = ("TOPIC", "PARTITION", "OFFSET", "STATUS", "LOW_WATERMARK", "ERROR", "MESSAGE")


class Progress:
    """A redrawn bar on a terminal; one line per change elsewhere (logs, CI)."""

    def __init__(self, out: TextIO = sys.stderr) -> None:
        self.out = out
        self.tty = out.isatty()
        self.last = ""

    def show(self, deletion: dict[str, Any]) -> None:
        counts = deletion.get("counts", {})
        total = deletion["partition_count"] or 1
        done = sum(n for status, n in counts.items() if status in {"succeeded", "failed", "cancelled"})
        summary = " ".join(f"{status}={n}" for status, n in sorted(counts.items()))
        line = f"{deletion['status']}: {done}/{total} partitions done ({summary})"
        if self.tty:
            filled = int(BAR_WIDTH * done / total)
            self.out.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {line}")
            self.out.flush()
        elif line != self.last:
            self.out.write(f"{line}\n")
            self.out.flush()
        self.last = line

    def close(self) -> None:
        if self.tty:
            self.out.write("\n")
