"""The OpenAPI document against the service (schemathesis, every check it has), on SQLite and PostgreSQL.

The service runs as in production (``kafka-purge serve --api-only``, a process of its own) with a
cluster "demo" on a one-broker Kafka emulator: topics ``orders.us`` and ``orders.eu`` with records, and a
consumer group ``orders-billing`` that read them all (the document's examples name them), so a
schema-valid request can really be accepted. Schemathesis runs all its phases (examples, coverage,
fuzzing, stateful) with all its checks: no 5xx; only documented statuses, media types, headers and
bodies; schema-valid requests accepted and invalid ones refused; a missing required header or
credential refused; a 405 whose ``Allow`` lists exactly the path's methods; nothing readable after it
was deleted, and what was created readable.

It runs as a super user on both databases, and as a stranger with no binding on SQLite: the stranger is
refused before anything the databases do differently.

What the document cannot say is configured here, each with its reason; any failure fails the test:
- a schema-valid request may also answer 403, 404 and 409 (the API's statuses for what no schema can
  list: a resource the caller may not touch, a name that names nothing configured or created, or
  something another case of the run already created or changed) and 413 (a body within every
  ``maxLength`` and ``maxItems`` can still pass the byte limit).
- ``POST /oauth/token`` may answer 401: generated client credentials are no registered client's.
- a generated ``cursor`` is left out of schema-valid requests: a cursor is valid only when the service
  returned it (``app.api.pagination``); invalid ones are still sent as negative data.
- a schema-valid request with an ``Idempotency-Key`` gets a key of its own: a key already used with
  another body is refused (422, as the IETF Idempotency-Key draft says), and what a key was used with
  is the service's history, not the document's.

Bounded and derandomized: a fixed seed and ``EXAMPLES`` per operation and phase.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from helpers.offsets import commit, produce
from helpers.service_processes import database_url, service_env, start_service
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, events, from_schema

CLIENTS = {"alice": "alice-secret", "mallory": "mallory-secret"}
# (database, principal): the super user on both databases, the stranger (refused before anything the
# databases do differently) on one.
RUNS = {
    "sqlite-super user": ("sqlite", "alice"),
    "postgresql-super user": ("postgresql", "alice"),
    "sqlite-stranger": ("sqlite", "mallory"),
}
# What a schema-valid request may answer besides 2xx (the module's docstring says why).
ACCEPTED = ["2xx", "403", "404", "409", "413"]
TOKEN_ACCEPTED = ["2xx", "401"]
TOPICS = {"orders.us": 2, "orders.eu": 6}
RECORDS = 160  # per partition: past every offset the document's examples name
GROUP = "orders-billing"  # the examples' consumer group, at the end of every partition
EXAMPLES = 3
SEED = 29


@contextmanager
def running_service(db_url: str, cwd: Path) -> Iterator[str]:
    """``kafka-purge serve --api-only`` (a process of its own: it answers while this one generates the
    next cases) with a cluster "demo" on an emulator run in a thread here; the service's URL."""
    from kafka_emulator import EmulatedCluster

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    emulator = EmulatedCluster(brokers=1)

    async def start_emulator() -> None:
        await emulator.start()
        for topic, partitions in TOPICS.items():
            emulator.create_topic(topic, partitions=partitions, replication_factor=1)
            await produce(emulator, topic, dict.fromkeys(range(partitions), RECORDS))
            await commit(emulator, GROUP, {(topic, p): RECORDS for p in range(partitions)})

    asyncio.run_coroutine_threadsafe(start_emulator(), loop).result(120)
    env = {
        **service_env(db_url, emulator.bootstrap),
        "PURGE_AUTH_DEV_CLIENTS": json.dumps(CLIENTS),
        "PURGE_SUPER_USERS": "User:alice",
    }
    service = start_service(env, cwd, api_only=True)
    try:
        yield str(service.base)
    finally:
        service.process.kill()
        (cwd / "service.log").write_text("".join(service.process.lines))
        asyncio.run_coroutine_threadsafe(emulator.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


def _token(url: str, who: str) -> str:
    answer = httpx.post(
        f"{url}/oauth/token", data={"grant_type": "client_credentials"}, auth=(who, CLIENTS[who])
    )
    answer.raise_for_status()
    return str(answer.json()["access_token"])


def _config(token: str) -> SchemathesisConfig:
    return SchemathesisConfig.from_dict(
        {
            "seed": SEED,
            "headers": {"Authorization": f"Bearer {token}"},
            "generation": {"max-examples": EXAMPLES, "deterministic": True},
            "checks": {
                "enabled": True,
                "positive_data_acceptance": {"expected-statuses": ACCEPTED},
            },
            "operations": [
                {
                    "include-path": "/oauth/token",
                    "checks": {"positive_data_acceptance": {"expected-statuses": TOKEN_ACCEPTED}},
                }
            ],
            "continue-on-failure": True,
        }
    )


def _history_free(case: schemathesis.Case) -> schemathesis.Case:
    """A schema-valid case without what only the service's history makes valid: no generated cursor,
    a fresh Idempotency-Key."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return case
    if case.query:
        case.query.pop("cursor", None)
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
    return case


def failures(url: str, token: str) -> list[str]:
    """Every failed check of a whole run, one line each (operation, check, status, reproduction)."""
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json", config=_config(token))

    @schema.hook
    def map_case(context: Any, case: schemathesis.Case) -> schemathesis.Case:
        return _history_free(case)

    found: list[str] = []
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            for case_id, checks in event.recorder.checks.items():
                operation = event.recorder.cases[case_id].value.operation.label
                for check in checks:
                    info = check.failure_info
                    if check.status is Status.FAILURE and info:
                        found.append(
                            f"{check.name} | {operation} | {_answer(event, case_id)} | {info.code_sample}"
                        )
        elif isinstance(event, events.NonFatalError | events.FatalError):
            found.append(f"error: {event}")
    return sorted(set(found))


def _answer(event: events.ScenarioFinished | events.FuzzScenarioFinished, case_id: str) -> str:
    """The status and the start of the body the service answered the case with."""
    interaction = event.recorder.interactions.get(case_id)
    if interaction is None or interaction.response is None:
        return "no answer"
    return f"{interaction.response.status_code} {interaction.response.content[:200]!r}"


@pytest.fixture(params=RUNS.values(), ids=RUNS.keys())
async def run(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    """(an empty database's URL, the principal) of one run."""
    database, who = request.param
    async with database_url(database, tmp_path) as url:
        yield url, who


@pytest.mark.timeout(600)
# Hypothesis warns when it renders a large generated body; the body is still sent and judged.
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
def test_document_matches_behaviour(run: tuple[str, str], tmp_path: Path) -> None:
    db_url, who = run
    with running_service(db_url, tmp_path) as url:
        found = failures(url, _token(url, who))
    assert not found, f"{len(found)} failures:\n" + "\n".join(found)
