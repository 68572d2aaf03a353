"""Signs audit checkpoints in the background, where the executor runs (the app, ``--workers-only``).

A checkpoint is due when the head has moved ``checkpoint_every_events`` events past the newest
checkpoint, or has moved at all and the newest is ``checkpoint_seconds`` old (or there is none). Before
signing, the links since the newest checkpoint are verified (the head is signed only over an intact
chain, and only from a stored checkpoint whose own signature verifies). Each checkpoint is stored and
written to the log (one line with the JWS), so that a copy lives outside the database.

Several instances on one database are safe: one checkpoint per event id (a unique key, the loser's
insert does nothing), and an instance that finds a newer checkpoint than its own reading just skips.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import AuditCheckpoint
from app.adapters.db.repositories import audit as repo
from app.adapters.db.session import read_session, write_transaction
from app.audit.checkpoints import Checkpoint, CheckpointKey, InvalidCheckpoint
from app.audit.verify import GENESIS, Link, walk_chain
from app.settings import AuditSettings
from app.worker.periodic import Periodic

log = logging.getLogger("kafka_purge.audit")

MAX_TICK_SECONDS = 1.0


class AuditCheckpointer:
    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], key: CheckpointKey, settings: AuditSettings
    ) -> None:
        self._sessionmaker = sessionmaker
        self._key = key
        self._every_events = settings.checkpoint_every_events
        self._seconds = settings.checkpoint_seconds
        self._periodic = Periodic(
            self.run_once, min(self._seconds, MAX_TICK_SECONDS), name="audit checkpointer", log=log
        )

    async def start(self) -> None:
        await self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    def _due(self, head: Link, last: AuditCheckpoint | None, now: datetime) -> bool:
        if head.id == 0 or (last is not None and last.event_id >= head.id):
            return False
        if last is None or head.id - last.event_id >= self._every_events:
            return True
        return (now - last.signed_at).total_seconds() >= self._seconds

    def _start(self, last: AuditCheckpoint | None) -> Link | None:
        """Where to verify from: the newest checkpoint if it is this key's and verifies (None if it does
        not: the head is never signed then), the genesis when there is none or another key signed it."""
        if last is None or last.key_id != self._key.key_id:
            return GENESIS
        try:
            signed = self._key.read(last.jws)
        except InvalidCheckpoint:
            return None
        if (signed.event_id, signed.event_hash) != (last.event_id, last.event_hash):
            return None
        return Link(signed.event_id, signed.event_hash)

    async def run_once(self, now: datetime | None = None) -> Checkpoint | None:
        """Sign and store a checkpoint of the head if one is due; the checkpoint, or None."""
        now = now or datetime.now(UTC)
        async with read_session(self._sessionmaker) as session:
            head = await repo.read_head(session)
            last = await repo.last_checkpoint(session)
            if head is None or not self._due(Link(*head), last, now):
                return None
            start = self._start(last)
            result = await walk_chain(session, start, Link(*head)) if start is not None else None
        if result is None or not result.ok:
            reason = result.reason if result is not None else "the newest stored checkpoint does not verify"
            log.error("audit checkpoint refused: the audit chain is broken: %s", reason)
            return None
        checkpoint = self._key.sign(head[0], head[1], now)
        async with write_transaction(self._sessionmaker) as session:
            stored = await repo.add_checkpoint(
                session,
                event_id=checkpoint.event_id,
                event_hash=checkpoint.event_hash,
                signed_at=checkpoint.signed_at,
                key_id=checkpoint.key_id,
                jws=checkpoint.jws,
            )
        if not stored:
            return None
        log.info("audit checkpoint event_id=%d jws=%s", checkpoint.event_id, checkpoint.jws)
        return checkpoint
