"""The tests' reused PostgreSQL databases (tests/helpers/databases.py): a test finds the template's rows and
nothing another test left, and a database whose schema a test changed is dropped, not handed out again."""

from __future__ import annotations

import asyncpg
import pytest
from helpers import databases
from helpers.databases import Templates


def _dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg", "postgresql")


async def _one(templates: Templates, statement: str) -> str:
    async with templates.postgresql_database() as url:
        connection = await asyncpg.connect(_dsn(url))
        try:
            await connection.execute(statement)
        finally:
            await connection.close()
    return url


async def test_the_next_test_finds_the_templates_rows_only(templates: Templates) -> None:
    await _one(
        templates,
        "SET session_replication_role = replica; DELETE FROM audit_head; "
        "INSERT INTO webhook (id, url, event_types, secret, cluster, created_at, updated_at, created_by, "
        "enabled, description) SELECT 'w', 'http://x', '[]', 's', 'c', now(), now(), 'p', true, ''",
    )
    async with templates.postgresql_database() as url:
        connection = await asyncpg.connect(_dsn(url))
        try:
            assert await connection.fetchval("SELECT count(*) FROM webhook") == 0
            assert await connection.fetch("SELECT id, last_event_id FROM audit_head") == [(1, 0)]
            assert await connection.fetchval("SELECT version_num FROM alembic_version")
            # The sequences start again: the next audit event is number 1.
            assert await connection.fetchval("SELECT nextval('audit_event_id_seq')") == 1
        finally:
            await connection.close()


@pytest.mark.parametrize(
    "change",
    [
        "ALTER TABLE audit_event DISABLE TRIGGER audit_event_append_only",
        "ALTER TABLE deletion ADD COLUMN extra integer",
        "DROP INDEX ix_audit_event_action",
    ],
)
async def test_a_database_whose_schema_changed_is_not_handed_out_again(
    templates: Templates, change: str
) -> None:
    changed = await _one(templates, change)
    async with templates.postgresql_database() as url:
        assert url != changed
    assert changed.rsplit("/", 1)[1] in databases.LEFT  # dropped at the end of the session
