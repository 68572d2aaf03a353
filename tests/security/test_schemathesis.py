"""Generated requests over the whole OpenAPI document (schemathesis), every operation, as two principals: a
super user (the input gets past authorization to validation and storage) and a stranger with no binding
(every refusal path). In-process on SQLite: no 5xx, only documented statuses and media types, responses
that match their schemas, invalid input refused.

No cluster is configured, so valid deletions end in a 404 (unknown cluster) after full validation.
Positive-data acceptance is not checked: valid-looking requests are still refused on purpose (unknown
cluster -> 404; ``1.0`` is an integer to JSON Schema but not to this API). Bounded: 15 examples per
operation, principal and mode, derandomized (about 50 s on two cores).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import Unsatisfiable
from pydantic import SecretStr
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from app.adapters.db.migrate import upgrade
from app.main import create_app
from app.settings import AuthSettings, DatabaseSettings, Settings

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
CLIENTS = {"alice": "alice-secret", "mallory": "mallory-secret"}
PRINCIPALS = {"super user": "alice", "stranger": "mallory"}
EXAMPLES = 15
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@pytest.mark.parametrize("who", PRINCIPALS.values(), ids=PRINCIPALS.keys())
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_generated_requests(tmp_path: Path, mode: GenerationMode, who: str) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'st.db'}"
    asyncio.run(upgrade(url))
    settings = Settings(
        database=DatabaseSettings(url=url),
        auth=AuthSettings(
            dev_issuer=True, dev_clients={client: SecretStr(secret) for client, secret in CLIENTS.items()}
        ),
        super_users="User:alice",
    )
    app = create_app(settings, run_executor=False)
    checks = CHECKS + ([negative_data_rejection] if mode is GenerationMode.NEGATIVE else [])
    failures: list[str] = []
    operations = 0
    with TestClient(app) as client:
        answer = client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=(who, CLIENTS[who])
        )
        headers = {"Authorization": f"Bearer {answer.json()['access_token']}"}
        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
        for result in schema.get_all_operations():
            operation = result.ok()
            operations += 1

            @given(case=operation.as_strategy(generation_mode=mode))
            @hypothesis_settings(
                max_examples=EXAMPLES,
                deadline=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
            def check(case: schemathesis.Case) -> None:
                case.headers = {**(case.headers or {}), **headers}
                case.validate_response(case.call(), checks=checks)

            try:
                check()
            except Unsatisfiable:
                continue  # no way to make this operation's input invalid (it has none)
            except BaseException as exc:
                failures.append(f"{operation.label}: {str(exc)[:800]}")
    documented = sum(len(METHODS & item.keys()) for item in app.openapi()["paths"].values())
    assert operations == documented, "every operation of the document is generated for"
    assert not failures, "\n\n".join(failures)
