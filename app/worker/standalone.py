"""The background work of a process without the HTTP app (``kafka-purge serve --workers-only``).

It runs what the app's lifespan runs next to the API — the executor, the retention scheduler and the
audit checkpointer (when a signing key is configured) — with
the same KIP-11 authorization the app builds, so sends are re-authorized and sweeps run as their
policies' owners here too.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.kafka.acls import KafkaAclReader
from app.api.deps import Services
from app.auth.authorization import build_authorization
from app.domain.ports import KafkaGateway
from app.settings import Settings
from app.worker.checkpointer import AuditCheckpointer
from app.worker.executor import Executor
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
    reader = KafkaAclReader(settings.clusters)
    try:
        authorization = build_authorization(settings, sessionmaker, reader)
        executor = Executor(sessionmaker, gateway, settings, reauthorizer=authorization)
        services = Services(settings, sessionmaker, gateway, authorization, executor, authorization.sources)
        scheduler = RetentionScheduler(services)
        key = services.audit_key
        checkpointer = AuditCheckpointer(sessionmaker, key, settings.audit) if key is not None else None
        await executor.start()
        try:
            await scheduler.start()
            if checkpointer is not None:
                await checkpointer.start()
            try:
                yield Workers(executor, scheduler, checkpointer)
            finally:
                if checkpointer is not None:
                    await checkpointer.stop()
                await scheduler.stop()
                await services.accepting.close()
        finally:
            await executor.stop()
    finally:
        await reader.close()
