"""Alembic environment: async engines, batch mode on SQLite, one shared code path with the app.

The URL comes from ``config.attributes["url"]``, ``alembic -x url=...``, or the settings
(``PURGE_DATABASE_URL``). When the caller hands over a connection (``config.attributes["connection"]``,
as :mod:`app.adapters.db.migrate` does), migrations run on it inside the caller's transaction.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from app.adapters.db.migrate import run_with_migration_connection
from app.adapters.db.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("url") or context.get_x_argument(as_dictionary=True).get("url")
    if url:
        return str(url)
    from app.settings import get_settings

    return get_settings().database.url


def run_on_connection(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
elif (shared := config.attributes.get("connection")) is not None:
    run_on_connection(shared)
else:
    asyncio.run(run_with_migration_connection(_url(), run_on_connection))
