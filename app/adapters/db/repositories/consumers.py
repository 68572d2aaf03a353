"""Consumers and their reported progress. Repositories flush; the caller commits.

Progress rules per partition: the first report sets the position; a later batch of the same query moves
it forward only (a duplicate, older or out-of-order batch changes nothing, so retries are idempotent on
(query_id, batch_id)); a report from another query (the consumer was re-pointed at a new checkpoint and
starts over) replaces the position even when lower, since the new query needs what it has not read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.retention_models import Consumer, ConsumerProgress
from app.domain.ports import TopicPartition


@dataclass(frozen=True)
class ProgressUpdate:
    query_id: str
    run_id: str
    batch_id: int
    offsets: Mapping[TopicPartition, int]


@dataclass(frozen=True)
class ProgressOutcome:
    applied: int
    ignored: int
    query_changed: bool


async def get_consumer(
    session: AsyncSession, cluster: str, name: str, *, lock: bool = False
) -> Consumer | None:
    query = select(Consumer).where(Consumer.cluster == cluster, Consumer.name == name)
    if lock and session.get_bind().dialect.name != "sqlite":
        query = query.with_for_update()
    return (await session.execute(query)).scalar_one_or_none()


async def list_consumers(
    session: AsyncSession, cluster: str, names: Sequence[str] | None = None
) -> list[Consumer]:
    query = select(Consumer).where(Consumer.cluster == cluster)
    if names is not None:
        query = query.where(Consumer.name.in_(list(names)))
    return list((await session.execute(query.order_by(Consumer.name))).scalars())


async def progress_rows(session: AsyncSession, consumer_ids: Sequence[str]) -> list[ConsumerProgress]:
    if not consumer_ids:
        return []
    query = (
        select(ConsumerProgress)
        .where(ConsumerProgress.consumer_id.in_(list(consumer_ids)))
        .order_by(ConsumerProgress.consumer_id, ConsumerProgress.topic, ConsumerProgress.partition)
    )
    return list((await session.execute(query)).scalars())


async def positions(
    session: AsyncSession, consumer_ids: Sequence[str]
) -> dict[str, dict[TopicPartition, int]]:
    """Each consumer's reported position per partition."""
    result: dict[str, dict[TopicPartition, int]] = {cid: {} for cid in consumer_ids}
    for row in await progress_rows(session, consumer_ids):
        result[row.consumer_id][TopicPartition(row.topic, row.partition)] = row.offset
    return result


def _apply(row: ConsumerProgress, update: ProgressUpdate, offset: int, now: datetime) -> bool:
    if row.query_id == update.query_id:
        if update.batch_id <= row.batch_id:
            return False
        row.offset = max(row.offset, offset)
    else:
        row.offset = offset
    row.query_id, row.run_id, row.batch_id, row.updated_at = (
        update.query_id,
        update.run_id,
        update.batch_id,
        now,
    )
    return True


async def record_progress(
    session: AsyncSession, consumer: Consumer, update: ProgressUpdate, now: datetime
) -> ProgressOutcome:
    topics = sorted({tp.topic for tp in update.offsets})
    query = select(ConsumerProgress).where(
        ConsumerProgress.consumer_id == consumer.id, ConsumerProgress.topic.in_(topics)
    )
    existing = {TopicPartition(r.topic, r.partition): r for r in (await session.execute(query)).scalars()}
    applied = ignored = 0
    query_changed = any(row.query_id != update.query_id for row in existing.values())
    for tp, offset in sorted(update.offsets.items()):
        row = existing.get(tp)
        if row is None:
            session.add(
                ConsumerProgress(
                    consumer_id=consumer.id,
                    topic=tp.topic,
                    partition=tp.partition,
                    offset=offset,
                    query_id=update.query_id,
                    run_id=update.run_id,
                    batch_id=update.batch_id,
                    updated_at=now,
                )
            )
            applied += 1
        elif _apply(row, update, offset, now):
            applied += 1
        else:
            ignored += 1
    if applied:
        consumer.updated_at = now
    await session.flush()
    return ProgressOutcome(applied, ignored, query_changed)
