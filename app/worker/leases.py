"""Keeping a sent batch's leases: renewed every third of the lease while its rows wait for an answer or
a write, so no other instance claims them meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories.claims import Claim
from app.adapters.db.session import write_transaction
from app.worker import metrics

log = logging.getLogger("kafka_purge.worker")


@contextlib.asynccontextmanager
async def leases_kept(
    sessionmaker: async_sessionmaker[AsyncSession],
    owner: str,
    lease_seconds: float,
    leased: Callable[[], Sequence[Claim]],
) -> AsyncIterator[None]:
    """Renew the leases of ``leased()`` (the rows still held) until the block ends."""
    renewer = asyncio.create_task(_renew(sessionmaker, owner, lease_seconds, leased))
    try:
        yield
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer


async def _renew(
    sessionmaker: async_sessionmaker[AsyncSession],
    owner: str,
    lease_seconds: float,
    leased: Callable[[], Sequence[Claim]],
) -> None:
    while True:
        await asyncio.sleep(lease_seconds / 3)
        if not (claims := leased()):
            continue
        try:
            async with write_transaction(sessionmaker) as session:
                held = await repo.renew_leases(
                    session, owner=owner, claims=claims, now=datetime.now(UTC), lease_seconds=lease_seconds
                )
        except Exception:  # keep renewing: a lost lease only costs a harmless resend
            log.exception("renewing %d leases failed", len(claims))
            continue
        if held < len(claims):
            metrics.LOST_LEASES.inc(len(claims) - held)
            log.warning("lost %d of %d leases to another claim", len(claims) - held, len(claims))
