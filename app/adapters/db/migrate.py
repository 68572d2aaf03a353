"""Run the Alembic migrations from Python: used by ``kafka-purge migrate``, ``serve`` and the tests.

Everything runs in one transaction on one connection: PostgreSQL takes an advisory lock first so two
instances starting together do not migrate at once; SQLite takes its write lock (BEGIN IMMEDIATE), runs
with foreign keys off (batch mode recreates tables) and checks them before committing.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TypeVar

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection

from app.adapters.db.session import BEGIN_IMMEDIATE, create_engine

# Any constant works; it only has to be the same in every instance of the service.
ADVISORY_LOCK_KEY = 0x6B707572  # "kpur"

T = TypeVar("T")


class ForeignKeyViolation(RuntimeError):
    pass


def migrations_dir() -> Path:
    """The Alembic script directory (env.py, the template, versions/), shipped as package data beside
    this module, so an installed wheel migrates from any working directory."""
    location = resources.files("app.adapters.db") / "migrations"
    if not isinstance(location, Path):  # Alembic reads its scripts from the file system.
        raise RuntimeError(f"the migrations must be installed as files, not inside {location!r}")
    return location


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["connection"] = connection
    return config


async def run_with_migration_connection(url: str, work: Callable[[Connection], T]) -> T:
    """Run ``work`` on a migration connection inside one transaction, committed when it returns."""
    engine = create_engine(url, pool_size=1, foreign_keys=False)
    try:
        async with engine.connect() as conn:
            conn = await conn.execution_options(**{BEGIN_IMMEDIATE: True})
            async with conn.begin():
                if conn.dialect.name == "postgresql":
                    await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
                result = await conn.run_sync(work)
                if conn.dialect.name == "sqlite":
                    violations = (await conn.exec_driver_sql("PRAGMA foreign_key_check")).fetchall()
                    if violations:
                        raise ForeignKeyViolation(f"migration left {len(violations)} foreign key violations")
            return result
    finally:
        await engine.dispose()


async def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the database at ``url`` to ``revision`` (default: the newest)."""
    await run_with_migration_connection(url, lambda conn: command.upgrade(alembic_config(conn), revision))


async def downgrade(url: str, revision: str) -> None:
    await run_with_migration_connection(url, lambda conn: command.downgrade(alembic_config(conn), revision))


async def current_revision(url: str) -> str | None:
    return await run_with_migration_connection(
        url, lambda conn: MigrationContext.configure(conn).get_current_revision()
    )


def head_revisions() -> tuple[str, ...]:
    return tuple(ScriptDirectory.from_config(alembic_config()).get_heads())
