"""Accepting asks for the topics' metadata and their cleanup.policy at once
(``app.services.deletions.plan``): the
answer is still decided by the metadata first (unknown partitions: 422 whatever the configs read says),
then by the configs (compact-only topics)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from helpers.api import assert_problem, deletion_body

MISSING = {"pointer": "#/partitions/1", "detail": "unknown topic or partition missing-0"}


@pytest.fixture
def run_executor() -> bool:
    return False


def _compacted(emulator: Any) -> str:
    emulator.create_topic(
        "compacted", partitions=1, replication_factor=3, configs={"cleanup.policy": "compact"}
    )
    return "compacted"


async def test_an_unknown_topic_next_to_a_compact_one_lists_the_unknown_partition(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    # DescribeConfigs fails for "missing" while the metadata is read; the 404 is about the metadata.
    topic = _compacted(emulator)
    for fields in ({}, {"dry_run": True}):
        body = deletion_body((topic, 0, 0), ("missing", 0, 0), **fields)
        problem = assert_problem(await app_client.post("/v1/deletions", json=body, headers=alice), 404)
        assert problem["type"] == "/problems/topic-not-found"
        assert problem["unknown_count"] == 1
        assert problem["errors"] == [MISSING]
    whole = deletion_body()
    whole["partitions"] = [{"topic": topic, "offset": 0}, {"topic": "missing", "offset": 0}]
    problem = assert_problem(await app_client.post("/v1/deletions", json=whole, headers=alice), 404)
    assert problem["errors"] == [
        {"pointer": "#/partitions/1", "detail": "unknown topic or partition missing"}
    ]


async def test_a_compact_only_topic_is_refused_naming_its_policy(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    topic = _compacted(emulator)
    named = deletion_body((topic, 0, 0))
    whole = deletion_body()
    whole["partitions"] = [{"topic": topic, "offset": 0}]
    for body in (named, whole):
        problem = assert_problem(await app_client.post("/v1/deletions", json=body, headers=alice), 422)
        [error] = problem["errors"]
        assert error["pointer"] == "#/partitions/0"
        assert f"{topic} has cleanup.policy=compact" in error["detail"]
