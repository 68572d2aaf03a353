"""Shared fixtures: databases (SQLite and PostgreSQL, schema built by the migrations), settings, the
emulated Kafka cluster, and an HTTP client over the app with its lifespan run.

``db_url`` is parametrised, so every test that uses it runs on both databases. PostgreSQL tests get a
fresh database ``purge_test_<hex>`` on 127.0.0.1:5432 (user postgres), dropped afterwards.

``migrated_url`` copies a template that the migrations built once per test session and backend (a
PostgreSQL ``CREATE DATABASE … TEMPLATE``, a copied SQLite file): the same schema as a migration run
gives, at a fraction of its cost (about 0.1 s instead of 0.5 s a test). The migrations themselves are
tested from an empty database in tests/integration/db.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from helpers import hang_report, session_summary
from helpers.kafka_timing import SHORT_FETCH_WAIT_MS
from hypothesis import settings as hypothesis_settings
from pydantic import SecretStr
from sqlalchemy import make_url, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.adapters.db.migrate import upgrade
from app.adapters.db.session import create_engine, make_sessionmaker, write_transaction
from app.settings import AuthSettings, ClusterSettings, DatabaseSettings, Settings, WorkerSettings

# Property tests judge results, not speed: on a loaded 2-core machine one example can take longer than
# Hypothesis's default 200 ms deadline, which would fail a correct test.
hypothesis_settings.register_profile("kafka-purge", deadline=None)
hypothesis_settings.load_profile("kafka-purge")

# Under pytest-xdist (make test runs `--dist loadgroup`), the tests of one group run on one worker. A group
# is a file, so a module's fixtures start once; these folders are one group each, since their cluster,
# Connect worker and service start once per session.
ONE_GROUP_FOLDERS = ("tests/real_kafka/",)
# The groups are handed out in this order of folders, the longest files first (real Kafka, processes killed
# and restarted, the browser, schemathesis), so that no long file starts last while the other worker idles.
LONGEST_FIRST = ("tests/real_kafka/", "tests/e2e/", "tests/browser/", "tests/security/")

PG_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
DEV_CLIENTS = {"alice": "alice-secret", "bob": "bob-secret", "auditor": "auditor-secret"}


@asynccontextmanager
async def postgresql_database() -> AsyncIterator[str]:
    """A fresh, empty PostgreSQL database, dropped afterwards."""
    name = f"purge_test_{secrets.token_hex(6)}"
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        admin = await asyncpg.connect(PG_ADMIN_DSN)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@pytest.fixture(params=["sqlite", "postgresql"])
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database (no schema) on each backend."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'purge.db'}"
        return
    async with postgresql_database() as url:
        yield url


@pytest.fixture
async def postgresql_url() -> AsyncIterator[str]:
    """An empty PostgreSQL database (no schema), for tests of what only PostgreSQL does."""
    async with postgresql_database() as url:
        yield url


class Templates:
    """Databases the migrations built once per test session, one per backend, each made on first use."""

    def __init__(self, folder: Path) -> None:
        self.sqlite = folder / "template.db"
        self.postgresql = f"purge_template_{secrets.token_hex(6)}"
        self.built: set[str] = set()  # the backends whose template exists

    async def copy_to(self, url: str) -> None:
        """Give the database at ``url`` (a test may reach it through a proxy of its own) the schema."""
        target = make_url(url)
        if target.get_backend_name() == "sqlite":
            if "sqlite" not in self.built:
                await upgrade(f"sqlite+aiosqlite:///{self.sqlite}")
                self.built.add("sqlite")
            shutil.copyfile(self.sqlite, str(target.database))
            return
        admin = await asyncpg.connect(PG_ADMIN_DSN)
        try:
            if "postgresql" not in self.built:
                await admin.execute(f'CREATE DATABASE "{self.postgresql}"')
                await upgrade(f"postgresql+asyncpg://postgres@127.0.0.1:5432/{self.postgresql}")
                self.built.add("postgresql")
            await admin.execute(f'DROP DATABASE "{target.database}" WITH (FORCE)')
            await admin.execute(f'CREATE DATABASE "{target.database}" TEMPLATE "{self.postgresql}"')
        finally:
            await admin.close()

    async def drop(self) -> None:
        if "postgresql" in self.built:
            admin = await asyncpg.connect(PG_ADMIN_DSN)
            try:
                await admin.execute(f'DROP DATABASE IF EXISTS "{self.postgresql}" WITH (FORCE)')
            finally:
                await admin.close()


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Templates]:
    made = Templates(tmp_path_factory.mktemp("database-templates"))
    yield made
    asyncio.run(made.drop())


@pytest.fixture
async def migrated_url(db_url: str, templates: Templates) -> str:
    """``db_url`` with the schema the Alembic migrations build (never ``create_all``), copied from the
    session's template of its backend."""
    await templates.copy_to(db_url)
    return db_url


@pytest.fixture
async def engine(migrated_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(migrated_url)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


@pytest.fixture
def tamper(sessionmaker: async_sessionmaker[AsyncSession]) -> Callable[[str], Awaitable[None]]:
    """``await tamper(sql)``: run SQL the way a database owner could, past the audit table's
    append-only triggers (which are back in place afterwards)."""

    async def run(statement: str) -> None:
        async with write_transaction(sessionmaker) as session:
            if session.get_bind().dialect.name == "postgresql":
                await session.execute(text("ALTER TABLE audit_event DISABLE TRIGGER USER"))
                await session.execute(text(statement))
                await session.execute(text("ALTER TABLE audit_event ENABLE TRIGGER USER"))
                return
            query = text(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_event'"
            )
            triggers = (await session.execute(query)).all()
            for name, _ in triggers:
                await session.execute(text(f'DROP TRIGGER "{name}"'))
            await session.execute(text(statement))
            for _, sql in triggers:
                await session.execute(text(sql))

    return run


@pytest.fixture
def replica_fetch_wait_ms() -> float:
    """``replica.fetch.wait.max.ms`` of ``emulator``: shortened here; the DeleteRecords paths of the service
    override it with Kafka's 500 ms (tests/helpers/kafka_timing.py says which)."""
    return SHORT_FETCH_WAIT_MS


@pytest.fixture
def delete_records_max_version() -> int:
    """DeleteRecords versions ``emulator`` serves: 0-2 as Apache Kafka 3.9; modules that exercise the
    LeaderOnly draft (v3) override this with 3."""
    return 2


@pytest.fixture
def emulator_brokers() -> int:
    """How many brokers ``emulator`` has; modules about who may do what, not about replication,
    override this with 1."""
    return 3


@pytest.fixture
async def emulator(
    emulator_brokers: int, replica_fetch_wait_ms: float, delete_records_max_version: int
) -> AsyncIterator[Any]:
    """An emulated Kafka cluster on ephemeral ports (``emulator_brokers`` brokers); tests create their
    own topics."""
    from kafka_emulator import EmulatedCluster

    cluster = EmulatedCluster(
        brokers=emulator_brokers,
        replica_fetch_wait_max_ms=replica_fetch_wait_ms,
        delete_records_max_version=delete_records_max_version,
    )
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()


@pytest.fixture
def clusters(request: pytest.FixtureRequest) -> dict[str, ClusterSettings]:
    """A cluster named "demo" pointing at the emulator when the test uses one, else none."""
    if "emulator" not in request.fixturenames:
        return {}
    emulator = request.getfixturevalue("emulator")
    return {"demo": ClusterSettings(bootstrap_servers=emulator.bootstrap, request_timeout_ms=5_000)}


@pytest.fixture
def super_users() -> str:
    """``PURGE_SUPER_USERS`` of ``settings``. The API tests' clients are super users, so they test their own
    concern, not authorization; tests/integration/authz overrides this to decide from ACL bindings."""
    return "User:alice;User:bob;User:auditor"


@pytest.fixture
def settings(migrated_url: str, clusters: dict[str, ClusterSettings], super_users: str) -> Settings:
    return Settings(
        database=DatabaseSettings(url=migrated_url, pool_size=5),
        clusters=clusters,
        auth=AuthSettings(
            dev_issuer=True,
            dev_clients={client: SecretStr(secret) for client, secret in DEV_CLIENTS.items()},
            dev_client_groups={"auditor": ["auditors"]},
        ),
        worker=WorkerSettings(poll_interval_seconds=0.05, backoff_initial_ms=20, confirm_interval_ms=50),
        super_users=super_users,
    )


@pytest.fixture
def run_executor() -> bool:
    """Whether ``app_client``'s app runs the executor; override in a module for API-only tests."""
    return True


@pytest.fixture
async def app_client(settings: Settings, run_executor: bool) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client over the app (ASGI transport), with the app's lifespan run around it."""
    from app.main import create_app

    app = create_app(settings, run_executor=run_executor)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


@pytest.fixture
def token(app_client: httpx.AsyncClient) -> Callable[[str], Awaitable[str]]:
    """``await token("alice")``: a bearer token from the dev issuer for that client."""

    async def fetch(client_id: str = "alice") -> str:
        response = await app_client.post(
            "/oauth/token",
            data={"grant_type": "client_credentials"},
            auth=(client_id, DEV_CLIENTS[client_id]),
        )
        assert response.status_code == 200, response.text
        return str(response.json()["access_token"])

    return fetch


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def group(item: pytest.Item) -> str:
        folder = next((f for f in ONE_GROUP_FOLDERS if item.nodeid.startswith(f)), None)
        return folder or item.nodeid.split("::")[0]

    for item in items:
        item.add_marker(pytest.mark.xdist_group(group(item)))

    def rank(item: pytest.Item) -> int:
        return next((i for i, f in enumerate(LONGEST_FIRST) if item.nodeid.startswith(f)), len(LONGEST_FIRST))

    items.sort(key=rank)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    timer = hang_report.start_timer(item)
    try:
        return (yield)
    finally:
        if timer is not None:
            timer.cancel()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[pytest.TestReport]:
    report: pytest.TestReport = yield
    taken = item.stash.get(hang_report.TAKEN, [])
    if report.failed and taken:
        report.sections.append(("stacks shortly before the timeout", taken[-1]))
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)  # set in a pytest-xdist worker only
    if output is not None:
        output[session_summary.KEY] = session_summary.lines(session.testsfailed > 0)


def pytest_testnodedown(node: Any, error: object) -> None:
    session_summary.FROM_WORKERS.extend(node.workeroutput.get(session_summary.KEY, []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    failed = bool(terminalreporter.stats.get("failed") or terminalreporter.stats.get("error"))
    for line in [*session_summary.FROM_WORKERS, *session_summary.lines(failed)]:
        terminalreporter.write_line(line)
