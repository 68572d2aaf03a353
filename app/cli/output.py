"""Output of the client commands: JSON, tables (rich, columns as rpk prints them) and a progress bar that
rich redraws in place on a terminal (one plain line per change elsewhere: logs, CI)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

TERMINAL = {"succeeded", "partially_failed", "failed", "cancelled", "rejected", "expired"}
DONE_PARTITION = ("succeeded", "failed", "cancelled")
# Partition states in the order a deletion moves through them (the progress line shows them so).
STATE_ORDER = (
    "awaiting_approval",
    "pending",
    "in_progress",
    "leader_truncated",
    "succeeded",
    "failed",
    "cancelled",
)
WIDE = 1000  # off a terminal, tables are never wrapped


def say(text: str = "", *, err: bool = False) -> None:
    """One line on stdout (or stderr): the commands' output."""
    (sys.stderr if err else sys.stdout).write(f"{text}\n")


def emit_json(document: Any) -> None:
    say(json.dumps(document, indent=2))


def _console(out: TextIO) -> Console:
    return Console(file=out, width=None if out.isatty() else WIDE, highlight=False, soft_wrap=False)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO | None = None) -> None:
    """Columns separated by spaces, no borders; lines carry no trailing blanks."""
    out = out or sys.stdout
    grid = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for header in headers:
        grid.add_column(header, overflow="fold")
    for row in rows:
        grid.add_row(*("" if cell is None else str(cell) for cell in row))
    console = _console(out)
    with console.capture() as captured:
        console.print(grid)
    out.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


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


def progress_text(deletion: dict[str, Any]) -> tuple[int, int, str]:
    """Partitions done, their total and the non-zero counts by state, all from the same ``counts`` (the
    deletion's own status may trail them by a moment, so it is not shown beside them)."""
    counts: dict[str, int] = deletion.get("counts") or {}
    total = max(deletion.get("partition_count") or 0, sum(counts.values()), 1)
    done = sum(counts.get(state, 0) for state in DONE_PARTITION)
    states = [s for s in STATE_ORDER if counts.get(s)] + sorted(set(counts) - set(STATE_ORDER))
    summary = ", ".join(f"{state.replace('_', ' ')} {counts[state]}" for state in states if counts[state])
    return done, total, summary


class DeletionProgress:
    """A bar redrawn in place on a terminal (rich erases the line it redraws); elsewhere one line per
    change."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self.last = ""
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def show(self, deletion: dict[str, Any]) -> None:
        done, total, summary = progress_text(deletion)
        if self.out.isatty():
            self._draw(done, total, summary)
            return
        line = f"{done}/{total} partitions done ({summary})"
        if line != self.last:
            self.out.write(f"{line}\n")
            self.out.flush()
        self.last = line

    def _draw(self, done: int, total: int, summary: str) -> None:
        if self.bar is None or self.task is None:
            self.bar = Progress(
                BarColumn(bar_width=30),
                MofNCompleteColumn(),
                TextColumn("partitions done"),
                TextColumn("[dim]{task.description}"),
                console=_console(self.out),
                auto_refresh=False,
            )
            self.task = self.bar.add_task(summary, total=total, completed=done)
            self.bar.start()
        self.bar.update(self.task, completed=done, total=total, description=summary)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
