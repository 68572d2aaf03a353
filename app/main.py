"""The application factory and its lifespan. Nothing here opens a connection at import time.

``create_app(settings)`` wires routers, problem handlers, middleware and authentication. The lifespan
opens the database engine and the Kafka gateway, then the ``Runtime`` (``app.state.runtime``) through
``app.worker.lifecycle.open_runtime``, as ``serve --workers-only`` does: with the executor, the retention
scheduler and the audit checkpointer unless ``run_executor=False`` (``serve --api-only``). Migrations
are not run implicitly: ``kafka-purge serve`` and ``kafka-purge migrate`` run them before the app
starts; ``run_migrations=True`` is for embedding.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from fastapi import FastAPI

from app import auth
from app.adapters.db.migrate import upgrade
from app.adapters.db.session import create_engine, make_sessionmaker, open_connections
from app.adapters.kafka import KafkaClusters
from app.api.docs import install_docs
from app.api.guards import CanReadAudit
from app.api.middleware import (
    BodyDeadlineMiddleware,
    BodySizeLimitMiddleware,
    ControlCharacterMiddleware,
    MetricsMiddleware,
    RequestIdMiddleware,
)
from app.api.openapi_document import install_openapi
from app.api.problem_pages import router as problem_pages
from app.api.problems import install_problem_handlers
from app.api.routers import (
    acls,
    approval_rules,
    approvals,
    audit,
    audit_export,
    certificates,
    consumers,
    deletions,
    health,
    offsets,
    partitions,
    policies,
    webhooks,
)
from app.auth.principals import Memberships
from app.domain.ports import KafkaGateway
from app.schemas.common import problem_responses
from app.settings import Settings, get_settings
from app.worker.lifecycle import open_runtime

DESCRIPTION = (
    "Delete Kafka records on purpose: authorized, audited, durable DeleteRecords as a service. "
    "Errors are RFC 9457 problem+json."
)


async def _cancelled(task: asyncio.Task[None]) -> None:
    """Stop a start-up task that may still be running."""
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def create_app(
    settings: Settings | None = None,
    *,
    run_executor: bool = True,
    run_migrations: bool = False,
    gateway: KafkaGateway | None = None,
) -> FastAPI:
    """The service. ``gateway`` defaults to the Kafka clusters of ``settings``; the authorization is
    always KIP-11 ACLs per cluster (``app.auth.permissions``)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if run_migrations:
                await upgrade(settings.database.url)
            engine = create_engine(
                settings.database.url, pool_size=settings.database.pool_size, echo=settings.database.echo
            )
            stack.push_async_callback(engine.dispose)
            stack.push_async_callback(_cancelled, asyncio.create_task(open_connections(engine)))
            kafka = gateway
            if kafka is None:
                clusters = KafkaClusters(settings.clusters)
                await clusters.start()
                stack.push_async_callback(clusters.close)
                kafka = clusters
            opened = await stack.enter_async_context(
                open_runtime(
                    settings,
                    make_sessionmaker(engine),
                    kafka,
                    run_workers=run_executor,
                )
            )
            app.state.runtime = opened.runtime
            # Requesters' groups as their tokens report them, for four-eyes approval's decisions.
            app.state.auth.memberships = Memberships(opened.runtime.sessionmaker)
            app.state.scheduler = opened.workers.scheduler
            yield

    # The documentation routes are the service's own (app.api.docs): assets served locally, no CDN.
    app = FastAPI(
        title="kafka-purge",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    _install(app, settings)
    return app


def _install(app: FastAPI, settings: Settings) -> None:
    """Error handlers, authentication, documentation, routers and middleware."""
    install_problem_handlers(app)
    auth.install(app, settings)
    install_docs(app)
    app.include_router(problem_pages)
    for module in (
        deletions,
        partitions,
        offsets,
        certificates,
        acls,
        health,
        consumers,
        policies,
        approval_rules,
        approvals,
        webhooks,
    ):
        app.include_router(module.router)
    # The audit trail spans every cluster: reading it needs DESCRIBE on CLUSTER of each.
    for module in (audit_export, audit):
        app.include_router(module.router, dependencies=[CanReadAudit], responses=problem_responses(403))
    # Added innermost first: the request id is set before anything can answer, even a 413.
    app.add_middleware(ControlCharacterMiddleware)
    app.add_middleware(BodySizeLimitMiddleware, max_body_bytes=settings.limits.max_body_bytes)
    app.add_middleware(BodyDeadlineMiddleware, timeout_seconds=settings.limits.body_timeout_seconds)
    app.add_middleware(MetricsMiddleware)
    app.add_middleware(RequestIdMiddleware)
    install_openapi(app, settings.limits)
