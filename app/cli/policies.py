"""``kafka-purge policy list|create|runs``: retention policies of a cluster, which delete what the named
consumers have consumed, and their sweeps."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.client import answer_json, api_client, cluster_option, connection_options, run_client_command
from app.cli.exits import Exit
from app.cli.input import InputError
from app.cli.output import emit_json, say, table
from app.cli.topic_selection import add_topic_options, names, shown_topics, topic_selection


def add_policy_commands(commands: Any) -> None:
    """Register ``policy list|create|runs`` on ``kafka-purge``'s sub-parsers."""
    policy = commands.add_parser("policy", help="retention policies: list, create, runs")
    actions = policy.add_subparsers(dest="policy_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="the cluster's policies you may see")
    create = actions.add_parser("create", help="a policy deleting what its consumers have consumed")
    runs = actions.add_parser("runs", help="a policy's sweeps, newest first")
    for command in (listing, create, runs):
        connection_options(command)
        cluster_option(command)
    listing.set_defaults(handler=lambda args: run_client_command(_list, args))
    create.add_argument("name", metavar="NAME")
    add_topic_options(create)
    create.add_argument(
        "--groups", type=names, default=[], help="consumer groups that must have read, e.g. g1,g2"
    )
    create.add_argument(
        "--spark", type=names, default=[], help="registered Spark consumers that must have read"
    )
    create.add_argument("--all-groups", action="store_true", help="every consumer group of each topic")
    create.add_argument("--min-age-seconds", type=int, help="keep records younger than this (default 0)")
    create.add_argument(
        "--min-records", type=int, help="sweep a partition only when this many can go (default 1)"
    )
    create.add_argument("--interval-seconds", type=int, help="time between sweeps (default 300)")
    create.add_argument(
        "--leader-only", action="store_true", help="wait for the leader only (DeleteRecords v3)"
    )
    create.add_argument("--disabled", action="store_true", help="create it without sweeping yet")
    create.set_defaults(handler=lambda args: run_client_command(_create, args))
    runs.add_argument("name", metavar="NAME")
    runs.add_argument("--limit", type=int, help="at most this many runs")
    runs.set_defaults(handler=lambda args: run_client_command(_runs, args))


def _list(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        items = answer_json(client.get(f"/v1/clusters/{args.cluster}/policies"), 200)["items"]
    if args.format == "json":
        emit_json(items)
        return Exit.OK
    rows = [
        [
            p["name"],
            shown_topics(p["topics"]),
            _consumers(p["consumers"]),
            p["min_age_seconds"],
            p["interval_seconds"],
            "yes" if p["enabled"] else "no",
            p["owner"],
            p["last_run_at"] or "",
            p["next_run_at"],
        ]
        for p in items
    ]
    table(
        (
            "NAME",
            "TOPICS",
            "CONSUMERS",
            "MIN_AGE_S",
            "INTERVAL_S",
            "ENABLED",
            "OWNER",
            "LAST_RUN",
            "NEXT_RUN",
        ),
        rows,
    )
    return Exit.OK


def _consumers(consumers: dict[str, Any] | str) -> str:
    if isinstance(consumers, str):
        return "all groups"
    named = [f"group {g}" for g in consumers.get("groups", [])] + [
        f"spark {s}" for s in consumers.get("spark", [])
    ]
    return ", ".join(named)


def _create(args: argparse.Namespace) -> int:
    if args.all_groups == bool(args.groups or args.spark):
        raise InputError("name the consumers: --groups and/or --spark, or --all-groups")
    topics = topic_selection(args)
    body: dict[str, Any] = {
        "name": args.name,
        "topics": topics,
        "consumers": "all_groups" if args.all_groups else {"groups": args.groups, "spark": args.spark},
        "leader_only": args.leader_only,
        "enabled": not args.disabled,
    }
    for field in ("min_age_seconds", "min_records", "interval_seconds"):
        if getattr(args, field) is not None:
            body[field] = getattr(args, field)
    with api_client(args) as client:
        policy = answer_json(client.post(f"/v1/clusters/{args.cluster}/policies", json=body), 201)
    if args.format == "json":
        emit_json(policy)
    else:
        say(f"policy {policy['name']} created on {policy['cluster']}; first sweep at {policy['next_run_at']}")
    return Exit.OK


def _runs(args: argparse.Namespace) -> int:
    params = {} if args.limit is None else {"limit": args.limit}
    with api_client(args) as client:
        path = f"/v1/clusters/{args.cluster}/policies/{args.name}/runs"
        items = answer_json(client.get(path, params=params), 200)["items"]
    if args.format == "json":
        emit_json(items)
        return Exit.OK
    rows = [
        [
            r["id"],
            r["started_at"],
            r["status"],
            r["partitions_matched"],
            r["partitions_planned"],
            r["partitions_skipped"],
            ", ".join(f"{k} {v}" for k, v in sorted(r["skip_counts"].items())),
            r["deletion_id"] or "",
            r["error"] or "",
        ]
        for r in items
    ]
    headers = (
        "RUN",
        "STARTED",
        "STATUS",
        "MATCHED",
        "PLANNED",
        "SKIPPED",
        "SKIP_REASONS",
        "DELETION",
        "ERROR",
    )
    table(headers, rows)
    return Exit.OK
