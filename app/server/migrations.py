"""The schema upgrade ``serve`` and ``migrate`` run before anything else touches the database."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from sqlalchemy.engine import make_url

from app.adapters.db.connectivity import DatabaseUnavailable, check_connection
from app.settings import Settings
from app.urls import shown_url

log = logging.getLogger("kafka_purge.server")


def migrate_database(settings: Settings) -> None:
    """Upgrades the schema; a SQLite file's directory is created first (the default lives in ./data).

    Raises :class:`DatabaseUnavailable` when the database cannot be connected to."""
    url = make_url(settings.database.url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        folder = Path(url.database).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseUnavailable(
                f"cannot create the folder {folder} of the database {shown_url(url)}: {exc.strerror}; "
                "check the path in PURGE_DATABASE_URL and the service's permissions there"
            ) from None
    asyncio.run(_check_then_upgrade(settings.database.url))
    log.info("database schema is up to date at %s", shown_url(url))


async def _check_then_upgrade(url: str) -> None:
    from app.adapters.db.migrate import upgrade

    await check_connection(url)
    await upgrade(url)
