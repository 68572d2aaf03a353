"""The tests' databases: empty ones, and migrated ones taken from templates the migrations built once per
test session (and pytest-xdist worker), one per backend.

A migrated SQLite database is a copy of the template file. A migrated PostgreSQL database is reused from
test to test: after a test, its connections are ended, every table's rows are deleted, its sequences
restart and the template's rows (the audit chain's genesis, Alembic's version) are put back. On this
machine a ``DROP DATABASE`` costs 0.3-1 s, a ``CREATE DATABASE … TEMPLATE`` 0.05-0.25 s and a
``TRUNCATE`` of every table 0.5-0.75 s (a new file per table and index); the reset costs 20-50 ms. A
test that changed the schema (a trigger disabled and not re-enabled, a column added) leaves a database
whose schema no longer matches the template's: that one is dropped, not reused. The migrations
themselves are tested from an empty database (tests/integration/db/test_migrations.py).
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from app.adapters.db.migrate import upgrade

PG_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/{}"

# One line per schema object of the public schema (columns, relations with their grants, indexes,
# constraints, triggers with their enabled state, functions) and the database's own settings.
SCHEMA_FINGERPRINT = """
SELECT md5(string_agg(line, E'\\n' ORDER BY line)) FROM (
    SELECT format('column %s.%s %s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                  a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) AS line
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT format('relation %s %s %s', relname, relkind, relacl) FROM pg_class
     WHERE relnamespace = 'public'::regnamespace
    UNION ALL
    SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
    UNION ALL
    SELECT format('constraint %s %s', conname, pg_get_constraintdef(oid)) FROM pg_constraint
     WHERE connamespace = 'public'::regnamespace
    UNION ALL
    SELECT format('trigger %s %s', pg_get_triggerdef(oid), tgenabled) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL
    SELECT 'function ' || pg_get_functiondef(oid) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
    UNION ALL
    SELECT 'setting ' || array_to_string(setconfig, ',') FROM pg_db_role_setting
     WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
    UNION ALL
    SELECT 'schema ' || nspname FROM pg_namespace
     WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
) AS schema
"""
TERMINATE = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1"
RESTART_SEQUENCES = """
SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false) FROM pg_sequences
 WHERE schemaname = 'public'
"""
RESTORE = "INSERT INTO {table} SELECT * FROM json_populate_recordset(NULL::{table}, $1::json)"
LEFT: list[str] = []  # databases no test uses any more, dropped at the end of the session
TABLES = "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'"


@asynccontextmanager
async def postgresql_database(prefix: str = "purge_test") -> AsyncIterator[str]:
    """A fresh, empty PostgreSQL database; its connections end with the context, the database with the
    session (``drop_left``)."""
    name = await create(prefix)
    try:
        yield PG_URL.format(name)
    finally:
        await leave(name)


async def create(prefix: str) -> str:
    """The name of a new, empty PostgreSQL database; ``leave`` it when done."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    await _admin(f'CREATE DATABASE "{name}"')
    return name


async def leave(name: str) -> None:
    """End the connections to the database ``name``; ``drop_left`` drops it at the end of the session."""
    await _admin_fetch(TERMINATE, name)
    LEFT.append(name)


async def drop_left() -> None:
    """Drop the databases left in this session. Each ``DROP DATABASE`` forces a
    checkpoint of the whole server: done while the tests run, it waits for what they have written; at the
    end, with little left to write, it is quick."""
    if LEFT:
        await _admin(*(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' for name in LEFT))
        LEFT.clear()


async def _admin_fetch(query: str, *arguments: object) -> None:
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await admin.fetch(query, *arguments)
    finally:
        await admin.close()


async def _admin(*statements: str) -> None:
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        for statement in statements:
            await admin.execute(statement)
    finally:
        await admin.close()


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Templates:
    """Migrated databases for a test session, the templates made on first use."""

    def __init__(self, folder: Path) -> None:
        self.sqlite = folder / "template.db"
        self.postgresql = f"purge_template_{secrets.token_hex(6)}"
        self.built: set[str] = set()  # the backends whose template exists
        self._fingerprint = ""
        self._rows: dict[str, str] = {}  # table -> its rows in the template, as JSON
        self._idle: list[str] = []  # migrated PostgreSQL databases ready for a test
        self._made: set[str] = set()  # every PostgreSQL database made here and not dropped yet

    async def sqlite_copy(self, path: Path) -> str:
        if "sqlite" not in self.built:
            await upgrade(f"sqlite+aiosqlite:///{self.sqlite}")
            self.built.add("sqlite")
        shutil.copyfile(self.sqlite, path)
        return f"sqlite+aiosqlite:///{path}"

    @asynccontextmanager
    async def postgresql_database(self) -> AsyncIterator[str]:
        """A migrated PostgreSQL database for one test: reused, reset afterwards (or dropped)."""
        await self._build_postgresql()
        if self._idle:
            name = self._idle.pop()
        else:
            name = f"purge_test_{secrets.token_hex(6)}"
            await _admin(f'CREATE DATABASE "{name}" TEMPLATE "{self.postgresql}"')
            self._made.add(name)
        try:
            yield PG_URL.format(name)
        finally:
            if await self._reset(name):
                self._idle.append(name)
            else:
                self._made.discard(name)
                LEFT.append(name)

    async def _build_postgresql(self) -> None:
        if "postgresql" in self.built:
            return
        await _admin(f'CREATE DATABASE "{self.postgresql}"')
        self._made.add(self.postgresql)
        await upgrade(PG_URL.format(self.postgresql))
        template = await asyncpg.connect(PG_URL.format(self.postgresql).replace("+asyncpg", ""))
        try:
            self._fingerprint = await template.fetchval(SCHEMA_FINGERPRINT)
            for (table,) in await template.fetch(TABLES):
                rows = await template.fetchval(f"SELECT json_agg(t) FROM {_quoted(table)} AS t")
                if rows is not None:
                    self._rows[table] = rows
        finally:
            await template.close()
        self.built.add("postgresql")

    async def _reset(self, name: str) -> bool:
        """Give ``name`` the template's rows again; False when its schema is no longer the template's."""
        # What the test left connected (an engine not disposed, a killed process's backend) ends here.
        await _admin_fetch(TERMINATE, name)
        database = await asyncpg.connect(PG_URL.format(name).replace("+asyncpg", ""))
        try:
            if await database.fetchval(SCHEMA_FINGERPRINT) != self._fingerprint:
                return False
            async with database.transaction():
                # replica: no trigger fires, neither the audit trail's append-only ones nor foreign keys'.
                await database.execute("SET LOCAL session_replication_role = replica")
                for (table,) in await database.fetch(TABLES):
                    await database.execute(f"DELETE FROM {_quoted(table)}")
                await database.execute(RESTART_SEQUENCES)
                for table, rows in self._rows.items():
                    await database.execute(RESTORE.format(table=_quoted(table)), rows)
            return True
        finally:
            await database.close()

    async def drop(self) -> None:
        if self._made:
            await _admin(*(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' for name in self._made))
