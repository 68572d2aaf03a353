"""The schema upgrade ``serve`` and ``migrate`` run before anything else touches the database."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from sqlalchemy.engine import make_url

from app.settings import Settings

log = logging.getLogger("kafka_purge.server")


def migrate_database(settings: Settings) -> None:
    """Upgrades the schema; a SQLite file's directory is created first (the default lives in ./data)."""
    from app.adapters.db.migrate import upgrade

    url = make_url(settings.database.url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(upgrade(settings.database.url))
    log.info("database schema is up to date at %s", url.render_as_string(hide_password=True))
