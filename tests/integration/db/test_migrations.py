"""The Alembic chain: one head, a full down/up cycle with data in the tables, and no drift from models.py."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from app.adapters.db.migrate import current_revision, downgrade, head_revisions, upgrade
from app.adapters.db.models import AuditHead, Base, Deletion, PartitionDeletion
from app.adapters.db.session import create_engine, make_sessionmaker, write_transaction

TABLES = {"deletion", "partition_deletion", "audit_event", "audit_head", "audit_checkpoint"}
# An event past the audit head (whose last_event_id is 0 on a new database): refused from revision 0009.
PAST_THE_HEAD = (
    "INSERT INTO audit_event (id, occurred_at, principal, action, details, prev_hash, hash) "
    "VALUES (:id, '2026-11-25 12:00:00', 'User:mallory', 'acl.created', '{}', :prev_hash, :hash)"
)


def test_single_head() -> None:
    assert len(head_revisions()) == 1


async def _table_names(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def _insert_deletion(url: str) -> str:
    engine = create_engine(url)
    now = datetime.now(UTC)
    deletion_id = str(uuid.uuid4())
    try:
        async with write_transaction(make_sessionmaker(engine)) as session:
            session.add(
                Deletion(
                    id=deletion_id,
                    cluster="demo",
                    principal="User:alice",
                    client_host="127.0.0.1",
                    request_id="r1",
                    reason="test",
                    leader_only=False,
                    timeout_ms=30000,
                    status="pending",
                    partition_count=1,
                    topics=["orders"],
                    created_at=now,
                    updated_at=now,
                )
            )
            await session.flush()
            session.add(
                PartitionDeletion(
                    deletion_id=deletion_id,
                    topic="orders",
                    partition=0,
                    requested_offset=5,
                    resolved_offset=5,
                    status="pending",
                    next_attempt_at=now,
                    updated_at=now,
                )
            )
        return deletion_id
    finally:
        await engine.dispose()


async def test_upgrade_downgrade_upgrade_with_data(db_url: str) -> None:
    await upgrade(db_url)
    assert await current_revision(db_url) == head_revisions()[0]
    assert await _table_names(db_url) >= TABLES
    await _insert_deletion(db_url)

    await downgrade(db_url, "base")
    assert await current_revision(db_url) is None
    assert not TABLES & await _table_names(db_url)

    await upgrade(db_url)
    engine = create_engine(db_url)
    try:
        async with make_sessionmaker(engine)() as session:
            head = (await session.execute(select(AuditHead))).scalar_one()
            assert (head.id, head.last_event_id, head.last_hash) == (1, 0, "0" * 64)
            assert (await session.execute(select(Deletion))).first() is None
    finally:
        await engine.dispose()
    assert await _insert_deletion(db_url)


async def _insert_past_the_head(url: str, event_id: int, prev_hash: str = "0" * 64) -> None:
    engine = create_engine(url)
    try:
        async with write_transaction(make_sessionmaker(engine)) as session:
            params = {"id": event_id, "prev_hash": prev_hash, "hash": f"forged-{event_id}"}
            await session.execute(text(PAST_THE_HEAD), params)
    finally:
        await engine.dispose()


async def test_audit_next_link_trigger_downgrades_and_upgrades(db_url: str) -> None:
    await upgrade(db_url)
    with pytest.raises(DBAPIError, match="next link"):
        await _insert_past_the_head(db_url, 1)

    await downgrade(db_url, "0008_audit_details_lz4")
    assert "audit_checkpoint" not in await _table_names(db_url)
    await _insert_past_the_head(db_url, 1)  # no trigger below 0009

    await upgrade(db_url)
    assert "audit_checkpoint" in await _table_names(db_url)
    with pytest.raises(DBAPIError, match="next link"):
        await _insert_past_the_head(db_url, 2, "forged-1")


async def test_datetimes_come_back_aware_utc(migrated_url: str) -> None:
    deletion_id = await _insert_deletion(migrated_url)
    engine = create_engine(migrated_url)
    try:
        async with make_sessionmaker(engine)() as session:
            deletion = await session.get(Deletion, deletion_id)
            assert deletion is not None
            assert deletion.created_at.tzinfo is not None
            assert deletion.created_at.utcoffset() == UTC.utcoffset(None)
    finally:
        await engine.dispose()


async def test_no_drift_between_models_and_migrations(migrated_url: str) -> None:
    def diff(conn: Connection) -> list[Any]:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "render_as_batch": conn.dialect.name == "sqlite"}
        )
        return list(compare_metadata(context, Base.metadata))

    engine = create_engine(migrated_url)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(diff) == []
    finally:
        await engine.dispose()


async def test_audit_details_are_compressed_with_lz4_on_postgresql(migrated_url: str) -> None:
    """Where the server has LZ4, a big completion summary is compressed with it (cheaper than pglz)."""
    if not migrated_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: SQLite stores JSON as plain text")
    engine = create_engine(migrated_url)
    try:
        async with engine.connect() as conn:
            available = await conn.scalar(
                text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
            )
            method = await conn.scalar(
                text(
                    "SELECT attcompression::text FROM pg_attribute "
                    "WHERE attrelid = 'audit_event'::regclass AND attname = 'details'"
                )
            )
    finally:
        await engine.dispose()
    assert method == ("l" if available else "")
