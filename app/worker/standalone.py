"""The background work of a process without the HTTP app (``kafka-purge serve --workers-only``).

It opens the runtime through ``app.worker.lifecycle.open_runtime``, as the app's lifespan does, so the
executor (re-authorizing each send), the retention scheduler (sweeping as the policies' owners) and the
audit checkpointer (when a signing key is configured) run exactly as they do next to the API.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.domain.ports import KafkaGateway
from app.settings import Settings
from app.worker.checkpointer import AuditCheckpointer
from app.worker.executor import Executor
from app.worker.lifecycle import open_runtime
from app.worker.scheduler import RetentionScheduler


@dataclass(frozen=True)
class Workers:
    executor: Executor
    scheduler: RetentionScheduler
    checkpointer: AuditCheckpointer | None


@contextlib.asynccontextmanager
async def standalone_workers(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], gateway: KafkaGateway
) -> AsyncIterator[Workers]:
    async with open_runtime(settings, sessionmaker, gateway) as opened:
        executor, scheduler = opened.workers.executor, opened.workers.scheduler
        assert executor is not None  # run_workers is on
        assert scheduler is not None
        yield Workers(executor, scheduler, opened.workers.checkpointer)
