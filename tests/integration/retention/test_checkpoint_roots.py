"""A Spark consumer's ``checkpoint_location`` must lie under ``PURGE_SPARK_CHECKPOINT_ROOTS`` (here: one
local root and ``s3://lake/checkpoints/``): other schemes, paths elsewhere, ``..`` and symlinks leading
out are refused with 422 and nothing is stored; the reader checks the real path again at every sweep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.kafka_records import produce
from helpers.retention import policy_body

from app.settings import Settings, SparkSettings
from app.worker.scheduler import RetentionScheduler

BASE = "/v1/clusters/demo/consumers"


def refused_locations(root: Path, outside: Path) -> list[str]:
    (root / "escape").symlink_to(outside, target_is_directory=True)
    return [
        "http://169.254.169.254/latest/meta-data/",
        "https://example.com/ckpt",
        "ftp://example.com/ckpt",
        f"file://{root}/q",
        "/etc",
        "/proc/self",
        "relative/q",
        f"{root}/../q",
        f"{root}/q/../../q",
        str(root / "escape"),
        str(root / "escape" / "q"),
        "s3://lake/other/q",
        "s3://lake/checkpoints/../q",
        "gs://lake/checkpoints/q",
        f"{root}/q\n",
    ]


async def test_locations_outside_the_roots_are_refused(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: Any, checkpoint_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for location in refused_locations(checkpoint_root, outside):
        body = {"name": "enricher", "kind": "spark", "checkpoint_location": location}
        response = await client.post(BASE, json=body, headers=alice)
        assert response.status_code == 403, (location, response.text)
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["type"] == "/problems/checkpoint-location-refused"
        assert response.json()["errors"][0]["pointer"] == "#/checkpoint_location"
    body = {"name": "enricher", "kind": "spark", "checkpoint_location": f"{checkpoint_root}/q\x00"}
    assert (await client.post(BASE, json=body, headers=alice)).status_code == 422  # the document says so
    assert (await client.get(BASE, headers=alice)).json()["items"] == []
    audit = (await client.get("/v1/audit", headers=alice)).json()["items"]
    assert not [e for e in audit if e["action"] == "consumer.registered"]

    for name, location in (("local", str(checkpoint_root / "q")), ("lake", "s3://lake/checkpoints/q")):
        body = {"name": name, "kind": "spark", "checkpoint_location": location}
        assert (await client.post(BASE, json=body, headers=alice)).status_code == 201, location


def write_checkpoint(folder: Path, offsets: dict[str, int]) -> None:
    for log in ("offsets", "commits"):
        (folder / log).mkdir(parents=True)
    entries = ", ".join(f'"{p}": {o}' for p, o in offsets.items())
    (folder / "offsets" / "0").write_text(f'v1\n{{}}\n{{"inter.a": {{{entries}}}}}', encoding="utf-8")
    (folder / "commits" / "0").write_text("v1\n{}", encoding="utf-8")


async def test_the_reader_checks_the_real_path_again(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    scheduler: RetentionScheduler,
    checkpoint_root: Path,
    tmp_path: Path,
) -> None:
    checkpoint = checkpoint_root / "enricher"
    write_checkpoint(checkpoint, {"0": 1, "1": 1})
    await produce(emulator, inter, {0: 10, 1: 10})
    body = {"name": "enricher", "kind": "spark", "checkpoint_location": str(checkpoint)}
    assert (await client.post(BASE, json=body, headers=alice)).status_code == 201
    # After registration the folder is swapped for a symlink to a checkpoint outside the root.
    write_checkpoint(tmp_path / "elsewhere", {"0": 9, "1": 9})
    checkpoint.rename(tmp_path / "moved")
    checkpoint.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    policy = policy_body(topics={"names": [inter]}, consumers={"spark": ["enricher"]})
    assert (await client.post("/v1/clusters/demo/policies", json=policy, headers=alice)).status_code == 201
    await scheduler.run_once()
    runs = await client.get("/v1/clusters/demo/policies/inter/runs", headers=alice)
    [run] = runs.json()["items"]
    assert (run["status"], run["skip_counts"]) == ("nothing_to_delete", {"offset_query_failed": 2})


@pytest.fixture
async def pull_mode_off(settings: Settings) -> Any:
    from app.main import create_app

    application = create_app(settings.model_copy(update={"spark": SparkSettings()}), run_executor=False)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield http


async def test_without_roots_pull_mode_is_off(
    pull_mode_off: httpx.AsyncClient, settings: Settings, checkpoint_root: Path, emulator: Any
) -> None:
    secret = settings.auth.dev_clients["alice"].get_secret_value()
    token = await pull_mode_off.post(
        "/oauth/token", data={"grant_type": "client_credentials"}, auth=("alice", secret)
    )
    alice = {"Authorization": f"Bearer {token.json()['access_token']}"}
    body = {"name": "enricher", "kind": "spark", "checkpoint_location": str(checkpoint_root / "q")}
    response = await pull_mode_off.post(BASE, json=body, headers=alice)
    assert response.status_code == 403, response.text
    assert response.json()["type"] == "/problems/checkpoint-location-refused"
    assert "pull mode is off" in response.json()["detail"]
    pushed = await pull_mode_off.post(BASE, json={"name": "enricher", "kind": "spark"}, headers=alice)
    assert pushed.status_code == 201, pushed.text
