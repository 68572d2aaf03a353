"""Opening a ``Runtime`` and the background work beside it: one function for both deployments.

The app's lifespan (``app.main``) and ``serve --workers-only`` (``app.worker.standalone``) both open
their runtime here, so what runs in the background (the executor with its KIP-11 re-authorizer, the
retention scheduler, the audit checkpointer, the webhook dispatcher) is the same in a single process and
in a split deployment.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.kafka.cluster_acls import KafkaAclReader
from app.auth.permissions import build_authorization
from app.domain.ports import KafkaGateway
from app.services.deletions.group_commit import AcceptBatcher
from app.services.runtime import Runtime
from app.settings import Settings
from app.worker.approval_expiry import ApprovalExpiry
from app.worker.checkpointer import AuditCheckpointer
from app.worker.executor import Executor
from app.worker.scheduler import RetentionScheduler
from app.worker.webhooks import WebhookDispatcher


@dataclass(frozen=True)
class Workers:
    """The background work of an instance; None where it does not run (``serve --api-only``)."""

    executor: Executor | None
    scheduler: RetentionScheduler | None
    checkpointer: AuditCheckpointer | None
    webhooks: WebhookDispatcher | None = None


@dataclass(frozen=True)
class Opened:
    runtime: Runtime
    workers: Workers


@contextlib.asynccontextmanager
async def open_runtime(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    gateway: KafkaGateway,
    *,
    run_workers: bool = True,
) -> AsyncIterator[Opened]:
    """The runtime over an open database and gateway, with the executor, the retention scheduler, the
    audit checkpointer (when a signing key is configured) and the webhook dispatcher running unless
    ``run_workers`` is False.

    The group commit of accepted deletions is built here, over the
    executor it stores claimed rows for. Shut down in reverse: the rows the last group commit stored
    claimed are still sent before the executor stops.
    """
    async with contextlib.AsyncExitStack() as stack:
        reader = KafkaAclReader(settings.clusters)
        stack.push_async_callback(reader.close)
        kip11 = build_authorization(settings, sessionmaker, reader)
        executor = Executor(sessionmaker, gateway, settings, reauthorizer=kip11) if run_workers else None
        batcher = AcceptBatcher(sessionmaker, executor, max_partitions=settings.worker.claim_batch)
        runtime = Runtime(settings, sessionmaker, gateway, kip11, batcher, executor, kip11.sources)
        if executor is not None:
            await executor.start()
            stack.push_async_callback(executor.stop)
        stack.push_async_callback(batcher.close)
        workers = Workers(executor, None, None)
        if executor is not None:
            workers = Workers(executor, *await _start_beside_executor(stack, runtime, executor.instance_id))
        yield Opened(runtime, workers)


async def _start_beside_executor(
    stack: contextlib.AsyncExitStack, runtime: Runtime, instance_id: str
) -> tuple[RetentionScheduler, AuditCheckpointer | None, WebhookDispatcher]:
    """Retention sweeps, approval expiry, audit checkpoints and webhook deliveries run beside the executor."""
    scheduler = RetentionScheduler(runtime)
    await scheduler.start()
    stack.push_async_callback(scheduler.stop)
    expiry = ApprovalExpiry(runtime)
    await expiry.start()
    stack.push_async_callback(expiry.stop)
    checkpointer = None
    if runtime.audit_key is not None:
        checkpointer = AuditCheckpointer(runtime.sessionmaker, runtime.audit_key, runtime.settings.audit)
        await checkpointer.start()
        stack.push_async_callback(checkpointer.stop)
    webhooks = WebhookDispatcher(runtime.sessionmaker, runtime.settings.webhooks, instance_id=instance_id)
    await webhooks.start()
    stack.push_async_callback(webhooks.stop)
    return scheduler, checkpointer, webhooks
