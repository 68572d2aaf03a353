"""Shared fixtures: databases (SQLite and PostgreSQL, schema built by the migrations), settings, the
emulated Kafka cluster, and an HTTP client over the app with its lifespan run.

``backend`` is parametrised, so every test that uses a database (``db_url``, ``migrated_url``) runs on
both. An empty PostgreSQL database (``db_url``) is a fresh ``purge_test_<hex>`` on 127.0.0.1:5432 (user
postgres), dropped afterwards.

``migrated_url`` comes from a template that the migrations built once per test session and backend: a
copied SQLite file, a PostgreSQL database reused from test to test and truncated after each
(tests/helpers/databases.py says what that saves and how a test that changed the schema is caught).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import databases, hang_report, session_summary
from helpers.databases import Templates, postgresql_database
from helpers.kafka_timing import SHORT_FETCH_WAIT_MS
from hypothesis import settings as hypothesis_settings
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

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
# The groups are handed out in this order, the longest first (real Kafka, the schemathesis runs, Swagger
# UI's examples in Chromium, processes killed and restarted, the browser, security), so that no long file
# starts last while the other worker idles. The Makefile keeps pytest-xdist from reordering them.
LONGEST_FIRST = (
    "tests/real_kafka/",
    "tests/security/test_schemathesis.py",
    "tests/browser/test_docs_examples.py",
    "tests/e2e/",
    "tests/browser/",
    "tests/security/",
)

DEV_CLIENTS = {"alice": "alice-secret", "bob": "bob-secret", "auditor": "auditor-secret"}


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """The database backend: a test that uses a database runs on both."""
    return str(request.param)


@pytest.fixture
async def db_url(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database (no schema) on each backend."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'purge.db'}"
        return
    async with postgresql_database() as url:
        yield url


@pytest.fixture
async def postgresql_url() -> AsyncIterator[str]:
    """An empty PostgreSQL database (no schema), for tests of what only PostgreSQL does."""
    async with postgresql_database() as url:
        yield url


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Templates]:
    made = Templates(tmp_path_factory.mktemp("database-templates"))
    yield made
    asyncio.run(made.drop())


@pytest.fixture
async def postgresql_migrated_url(templates: Templates) -> AsyncIterator[str]:
    """A PostgreSQL database with the migrations' schema, for tests of what only PostgreSQL does."""
    async with templates.postgresql_database() as url:
        yield url


@pytest.fixture
async def migrated_url(backend: str, tmp_path: Path, templates: Templates) -> AsyncIterator[str]:
    """A database of each backend with the schema the Alembic migrations build (never ``create_all``),
    from the session's template of its backend (tests/helpers/databases.py)."""
    if backend == "sqlite":
        yield await templates.sqlite_copy(tmp_path / "purge.db")
        return
    async with templates.postgresql_database() as url:
        yield url


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
    asyncio.run(databases.drop_left())
    output = getattr(session.config, "workeroutput", None)  # set in a pytest-xdist worker only
    if output is not None:
        output[session_summary.KEY] = session_summary.lines(session.testsfailed > 0)


def pytest_testnodedown(node: Any, error: object) -> None:
    session_summary.FROM_WORKERS.extend(node.workeroutput.get(session_summary.KEY, []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    failed = bool(terminalreporter.stats.get("failed") or terminalreporter.stats.get("error"))
    for line in [*session_summary.FROM_WORKERS, *session_summary.lines(failed)]:
        terminalreporter.write_line(line)
