"""Test helper: a child process (the service, the emulator) whose output lines are collected in the
background, and stopped like an operator would (SIGTERM, then SIGKILL if it does not go)."""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

START_SECONDS = 60.0


class Process:
    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.popen = subprocess.Popen(
            args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line)

    def wait_for_line(self, pattern: str, seconds: float = START_SECONDS) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if match := re.search(pattern, line):
                    return match
            assert self.popen.poll() is None, "".join(self.lines)
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r}:\n{''.join(self.lines)}")

    def stop(self, seconds: float = 30.0) -> int:
        """SIGTERM and the exit code; SIGKILL (and its code) if it is still running after ``seconds``."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                return self.popen.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                self.popen.kill()
        return self.popen.wait()


@contextlib.contextmanager
def running(args: list[str], env: dict[str, str], cwd: Path) -> Iterator[Process]:
    process = Process(args, env, cwd)
    try:
        yield process
    finally:
        process.stop()
