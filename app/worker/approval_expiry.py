"""Expires approval requests in the background, where the executor runs: every poll interval (at most a
second) the pending requests whose time ran out end ``expired`` (``app.services.approvals.expiry``).
Several instances are safe: a request changes only while it is still pending."""

from __future__ import annotations

import logging

from app.services.approvals.expiry import expire_overdue
from app.services.runtime import Runtime
from app.worker.periodic import Periodic

log = logging.getLogger("kafka_purge.approvals")


class ApprovalExpiry:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        interval = min(max(runtime.settings.worker.poll_interval_seconds, 0.05), 1.0)
        self._periodic = Periodic(self.run_once, interval, name="approval expiry", log=log)

    async def start(self) -> None:
        await self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    async def run_once(self) -> int:
        return await expire_overdue(self._runtime)
