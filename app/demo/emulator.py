"""The demo's Kafka cluster: the project's emulator, run as a separate process (never imported)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import sys
from pathlib import Path

from app.server.processes import die_with_parent

READY_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 10.0


class EmulatorProcess:
    """``python -m kafka_emulator``; ready once it has printed its JSON line with the addresses."""

    def __init__(self, topology: Path, brokers: int = 3) -> None:
        self.topology = topology
        self.brokers = brokers
        self.bootstrap = ""
        self.control = ""
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        if importlib.util.find_spec("kafka_emulator") is None:
            # The kafka-purge wheel ships it as a top-level package beside ``app``.
            raise RuntimeError(
                "the demo runs the Kafka cluster emulator (package kafka_emulator, part of the kafka-purge "
                f"wheel), which {sys.executable} cannot import: reinstall kafka-purge in this environment"
            )
        command = [sys.executable, "-m", "kafka_emulator", "--brokers", str(self.brokers)]
        command += ["--config", str(self.topology)]
        # The demo shows LeaderOnly deletions, so its brokers serve the DeleteRecords v3 draft, which no
        # Apache Kafka release has (4.4 serves v0-2, the emulator's default).
        command += ["--delete-records-max-version", "3"]
        spawning = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *command,
                stdout=asyncio.subprocess.PIPE,
                # Its own session: Ctrl-C reaches only us, and we stop it after the service has drained.
                start_new_session=True,
                # If the demo itself is killed (no chance to stop it), the emulator goes too.
                preexec_fn=die_with_parent,
            )
        )
        try:
            self._process = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            # Cancelled while it connects the child's pipes, create_subprocess_exec waits for ever for the
            # child to exit (CPython 3.11: the transport only finishes once every pipe has disconnected).
            # So Ctrl-C lets the spawn finish, then stops the child.
            self._process = await spawning
            await self.stop()
            raise
        assert self._process.stdout is not None
        try:
            async with asyncio.timeout(READY_TIMEOUT_SECONDS):
                line = await self._process.stdout.readline()
            ready = json.loads(line)
            self.bootstrap, self.control = str(ready["bootstrap"]), str(ready["control"])
        except (TimeoutError, ValueError, KeyError) as exc:
            await self.stop()
            raise RuntimeError("the Kafka emulator did not start; see its messages above") from exc

    async def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            async with asyncio.timeout(STOP_TIMEOUT_SECONDS):
                await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
