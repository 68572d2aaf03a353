"""A synthetic audit export shaped like kafka-purge's (requests, completion summaries, denials, other
actions), and a plain-Python recount of the compliance report's figures to check the Spark job against."""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CLUSTERS = ("east", "west")
TOPICS = ("orders", "payments", "clicks", "inter.a")
PRINCIPALS = ("User:alice", "User:bob", "User:carol")
START = datetime(2026, 11, 17, 22, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _event(
    moment: datetime,
    action: str,
    principal: str,
    cluster: str | None,
    deletion: str | None,
    details: dict[str, Any],
) -> dict[str, Any]:
    return {
        "occurred_at": moment,
        "principal": principal,
        "client_host": "10.0.0.1",
        "request_id": "r",
        "action": action,
        "cluster": cluster,
        "deletion_id": deletion,
        "details": details,
    }


def _deletion(
    rng: random.Random, index: int, moment: datetime, cuts: dict[tuple[str, str, int], int]
) -> list[dict[str, Any]]:
    cluster, principal = rng.choice(CLUSTERS), rng.choice(PRINCIPALS)
    chosen = rng.sample([(t, p) for t in TOPICS for p in range(4)], rng.randint(1, 3))
    partitions = []
    for topic, partition in chosen:
        key = (cluster, topic, partition)
        # Mostly forward, sometimes behind an earlier cut (a late or repeated request).
        cuts[key] = max(0, cuts.get(key, 0) + rng.randint(-50, 400))
        partitions.append(
            {
                "topic": topic,
                "partition": partition,
                "requested_offset": cuts[key],
                "resolved_offset": cuts[key],
            }
        )
    deletion = f"d-{index}"
    # The service lists requested partitions column by column; requests from before 2026-11-23 one object
    # each.
    requested: Any = partitions if index % 2 == 0 else _columns(partitions)
    details = {"reason": "test", "leader_only": False, "timeout_ms": 30000, "partitions": requested}
    events = [_event(moment, "deletion.requested", principal, cluster, deletion, details)]
    if rng.random() < 0.9:
        outcomes = [
            {
                **p,
                "status": "failed" if rng.random() < 0.08 else "succeeded",
                "low_watermark": p["resolved_offset"],
            }
            for p in partitions
        ]
        done = moment + timedelta(seconds=rng.uniform(0.05, 120))
        # The service lists outcomes column by column; events from before 2026-11-22 one object each.
        listed: Any = outcomes if index % 3 == 0 else _columns(outcomes)
        summary = {"status": "succeeded", "partitions": listed}
        events.append(_event(done, "deletion.completed", "kafka-purge:executor", cluster, deletion, summary))
    return events


def _columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    return {k: [row[k] for row in rows] for k in rows[0]}


def _denial(rng: random.Random, moment: datetime) -> dict[str, Any]:
    topics = sorted(rng.sample(TOPICS, rng.randint(1, 2)))
    details = {
        "principals": [],
        "host": "10.0.0.2",
        "operation": "DELETE",
        "resource_type": "TOPIC",
        "topics": topics,
    }
    return _event(moment, "authz.denied", rng.choice(PRINCIPALS), rng.choice(CLUSTERS), None, details)


def generate(path: Path, total: int, seed: int = 7) -> list[dict[str, Any]]:
    """Write ``total`` events as NDJSON in chain order (ids by time) and return them."""
    rng = random.Random(seed)
    cuts: dict[tuple[str, str, int], int] = {}
    events: list[dict[str, Any]] = []
    moment, index = START, 0
    while len(events) < total:
        moment += timedelta(seconds=rng.uniform(0.1, 12))
        roll = rng.random()
        if roll < 0.8:
            events.extend(_deletion(rng, index, moment, cuts))
            index += 1
        elif roll < 0.95:
            events.append(_denial(rng, moment))
        else:
            events.append(
                _event(moment, "policy.swept", "User:alice", "east", None, {"status": "nothing_to_delete"})
            )
    events = sorted(events[:total], key=lambda e: e["occurred_at"])
    with path.open("w", encoding="utf-8") as out:
        for number, event in enumerate(events, start=1):
            event["id"] = number
            out.write(
                json.dumps({**event, "occurred_at": stamp(event["occurred_at"])}, separators=(",", ":"))
                + "\n"
            )
    return events


def outcomes_of(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """A request's partitions or a completion summary's outcomes, one dict per partition, from either
    shape."""
    listed = summary["partitions"]
    if isinstance(listed, list):
        return listed
    return [dict(zip(listed, row, strict=True)) for row in zip(*listed.values(), strict=True)]


def recount(events: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """The report's figures computed directly (same definitions as the job's docstring)."""
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = defaultdict(lambda: defaultdict(int))
    owners: dict[str, tuple[str, str, str, datetime]] = {}
    for e in events:
        if e["action"] == "deletion.requested":
            day = stamp(e["occurred_at"])[:10]
            owners[e["deletion_id"]] = (e["cluster"], e["principal"], day, e["occurred_at"])
            per_topic: dict[str, int] = defaultdict(int)
            for p in outcomes_of(e["details"]):
                per_topic[p["topic"]] += 1
            for topic, count in per_topic.items():
                row = rows[(e["cluster"], topic, e["principal"], day)]
                row["requests"] += 1
                row["partitions_requested"] += count
        elif e["action"] == "authz.denied":
            for topic in e["details"]["topics"]:
                rows[(e["cluster"], topic, e["principal"], stamp(e["occurred_at"])[:10])]["denials"] += 1
    highest: dict[tuple[str, str, int], int] = {}
    seconds: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for e in sorted((e for e in events if e["action"] == "deletion.completed"), key=lambda e: e["id"]):
        cluster, principal, day, asked = owners[e["deletion_id"]]
        by_topic: dict[str, list[str]] = defaultdict(list)
        for p in outcomes_of(e["details"]):
            key, row = (cluster, p["topic"], p["partition"]), rows[(cluster, p["topic"], principal, day)]
            by_topic[p["topic"]].append(p["status"])
            if p["status"] == "succeeded":
                row["partitions_succeeded"] += 1
                row["records_deleted"] += max(p["resolved_offset"] - highest.get(key, 0), 0)
                highest[key] = max(highest.get(key, 0), p["resolved_offset"])
            elif p["status"] == "failed":
                row["partitions_failed"] += 1
        for topic, statuses in by_topic.items():
            if "failed" not in statuses:
                seconds[(cluster, topic, principal, day)].append((e["occurred_at"] - asked).total_seconds())
    for key, values in seconds.items():
        rows[key]["avg_seconds_to_replicated"] = sum(values) / len(values)
        rows[key]["max_seconds_to_replicated"] = max(values)
    return rows


def assert_report_matches(
    rows: list[dict[str, Any]], events: list[dict[str, Any]], metrics: Sequence[str]
) -> None:
    """Every report row holds the recount's figures, and the report has no row the recount lacks."""
    expected = recount(events)
    got = {(r["cluster"], r["topic"], r["principal"], r["day"]): r for r in rows}
    assert set(got) == set(expected)
    for key, figures in expected.items():
        row = got[key]
        for metric in metrics:
            want = figures.get(metric)
            if metric.endswith("_to_replicated"):
                assert (row[metric] is None) == (want is None), (key, metric)
                if want is not None:
                    assert math.isclose(row[metric], want, rel_tol=1e-9, abs_tol=1e-4), (key, metric)
            else:
                assert row[metric] == (want or 0), (key, metric)
