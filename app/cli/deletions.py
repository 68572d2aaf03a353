"""Deletion commands of ``kafka-purge`` over the HTTP API: ``delete``, ``preview``, ``status``,
``evidence``, ``list`` and ``cancel``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import httpx2

from app.cli.client import answer_json, api_client, cluster_option, connection_options, run_client_command
from app.cli.exits import Exit, deletion_exit
from app.cli.input import (
    OFFSET_HELP,
    InputError,
    parse_offset_json,
    parse_partitions,
    read_text,
    topic_entries,
)
from app.cli.output import (
    PARTITION_HEADERS,
    TERMINAL,
    DeletionProgress,
    emit_json,
    partition_rows,
    say,
    table,
)
from app.cli.preview import confirmed, print_preview, refused
from app.cli.prompt import require_terminal

POLL_INTERVAL_S = 0.5
PAGE = 1000
PREVIEW_REASON = "preview from the kafka-purge command line"


def _request_options(parser: argparse.ArgumentParser, *, reason_required: bool) -> None:
    parser.add_argument("topic", nargs="?", metavar="TOPIC", help="the topic (or --file)")
    parser.add_argument(
        "-p", "--partitions", type=parse_partitions_arg, help="partitions, e.g. 0,1,2 (default: every one)"
    )
    parser.add_argument("-o", "--offset", help=OFFSET_HELP)
    parser.add_argument(
        "-f",
        "--file",
        "--offset-json-file",
        dest="file",
        type=Path,
        help='kafka-delete-records.sh offset JSON: {"partitions": [{"topic", "partition", "offset"}]}',
    )
    connection_options(parser)
    cluster_option(parser)
    parser.add_argument(
        "--reason",
        required=reason_required,
        default=None if reason_required else PREVIEW_REASON,
        help="why (kept in the audit trail)",
    )
    parser.add_argument(
        "--leader-only", action="store_true", help="wait for the leader only (DeleteRecords v3)"
    )
    parser.add_argument("--timeout-ms", type=int, help="the DeleteRecords timeout")
    parser.add_argument(
        "--allow-unconsumed", action="store_true", help="delete records some consumer group has not read"
    )
    parser.add_argument(
        "--ignore-group",
        action="append",
        default=[],
        dest="ignore_groups",
        metavar="GROUP",
        help="repeatable",
    )


def parse_partitions_arg(text: str) -> list[int]:
    try:
        return parse_partitions(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_deletion_commands(commands: Any) -> None:
    """Register the deletion commands on ``kafka-purge``'s sub-parsers."""
    delete = commands.add_parser(
        "delete",
        help="delete records (asks first, showing the preview)",
        description="Delete the records before an offset or time: TOPIC -p 0,1 -o N|end|@<time>, or --file.",
    )
    _request_options(delete, reason_required=True)
    delete.add_argument(
        "-y", "--yes", "--no-confirm", dest="yes", action="store_true", help="do not ask for confirmation"
    )
    delete.add_argument("--dry-run", action="store_true", help="preview only (as the preview command)")
    delete.add_argument("--wait", action="store_true", help="follow the deletion until it finishes")
    delete.set_defaults(handler=lambda args: run_client_command(_delete, args))
    preview = commands.add_parser(
        "preview", help="what a deletion would do (nothing is deleted)", description="The service's dry run."
    )
    _request_options(preview, reason_required=False)
    preview.set_defaults(
        handler=lambda args: run_client_command(_delete, args), dry_run=True, yes=True, wait=False
    )
    listing = commands.add_parser("list", help="deletions, newest first")
    connection_options(listing)
    listing.add_argument("-c", "--cluster", help="only this cluster")
    listing.add_argument("--topic", help="only deletions of this topic")
    listing.add_argument(
        "--status",
        choices=(
            "awaiting_approval",
            "approved",
            "pending",
            "in_progress",
            "succeeded",
            "partially_failed",
            "failed",
            "cancelled",
            "rejected",
            "expired",
        ),
        help="only deletions in this state",
    )
    listing.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    listing.set_defaults(handler=lambda args: run_client_command(_list, args))
    for name, handler, text in (
        ("status", _status, "a deletion's status and partitions"),
        ("evidence", _evidence, "whether a deletion's records are gone now"),
        ("cancel", _cancel, "cancel the partitions of a deletion not yet sent to Kafka"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("id", metavar="ID", help="the deletion's id")
        connection_options(command)
        command.set_defaults(handler=lambda args, h=handler: run_client_command(h, args))


def _entries(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.topic is None and args.file is None:
        raise InputError("name a TOPIC (with -o end|N|@<time>) or an offset JSON --file")
    if args.topic is not None and args.file is not None:
        raise InputError("name a TOPIC or an offset JSON --file, not both")
    if args.file is not None:
        if args.offset is not None or args.partitions:
            raise InputError("-p/-o go with a TOPIC; the --file names its own partitions and offsets")
        return parse_offset_json(read_text(args.file, "offset JSON file"))
    if args.offset is None:
        raise InputError(
            "-o/--offset is required with TOPIC: end, N or @<time> "
            f"(e.g. kafka-purge delete {args.topic} -o end)"
        )
    return topic_entries(args.topic, args.offset, args.partitions)


def request_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {
        "cluster": args.cluster,
        "partitions": _entries(args),
        "reason": args.reason,
        "leader_only": args.leader_only,
        "dry_run": bool(args.dry_run),
        "allow_unconsumed": args.allow_unconsumed,
        "ignore_groups": args.ignore_groups,
    }
    if args.timeout_ms is not None:
        body["timeout_ms"] = args.timeout_ms
    return body


def _delete(args: argparse.Namespace) -> int:
    body = request_body(args)
    asks = not (args.yes or body["dry_run"])
    if asks:
        require_terminal("deleting")
    with api_client(args) as client:
        if body["dry_run"] or asks:
            preview = answer_json(client.post("/v1/deletions", json={**body, "dry_run": True}), 200)
            if body["dry_run"]:
                if args.format == "json":
                    emit_json(preview)
                else:
                    print_preview(preview)
                return Exit.OK
            if preview["would_be_refused"]:
                refused(preview)
                return Exit.REFUSED
            if not confirmed(preview):
                say("Not deleted.", err=True)
                return Exit.REFUSED
        deletion = answer_json(client.post("/v1/deletions", json=body), 202)
        if args.format == "table":
            say(f"deletion {deletion['id']} accepted: {deletion['partition_count']} partition(s)")
        if not args.wait:
            if args.format == "json":
                emit_json(deletion)
            return Exit.OK
        deletion = _wait(client, deletion["id"])
        return _print_deletion(args, client, deletion)


def _wait(client: httpx2.Client, deletion_id: str) -> dict[str, Any]:
    progress = DeletionProgress()
    try:
        while True:
            deletion: dict[str, Any] = answer_json(client.get(f"/v1/deletions/{deletion_id}"), 200)
            progress.show(deletion)
            # Awaiting approval: waiting could take days (kafka-purge approvals shows it to approvers).
            if deletion["status"] in TERMINAL or deletion["status"] == "awaiting_approval":
                return deletion
            time.sleep(POLL_INTERVAL_S)
    finally:
        progress.close()


def _all_partitions(client: httpx2.Client, deletion_id: str) -> list[dict[str, Any]]:
    partitions: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": PAGE, **({"cursor": cursor} if cursor else {})}
        page = answer_json(client.get(f"/v1/deletions/{deletion_id}/partitions", params=params), 200)
        partitions.extend(page["items"])
        if not (cursor := page.get("next_cursor")):
            return partitions


def _print_deletion(args: argparse.Namespace, client: httpx2.Client, deletion: dict[str, Any]) -> int:
    deletion["partitions"] = _all_partitions(client, deletion["id"])
    deletion.pop("partitions_next", None)
    if args.format == "json":
        emit_json(deletion)
    else:
        say(f"deletion {deletion['id']} on {deletion['cluster']}: {deletion['status']}")
        table(PARTITION_HEADERS, partition_rows(deletion["partitions"]))
    return deletion_exit(deletion["status"])


def _status(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        return _print_deletion(args, client, answer_json(client.get(f"/v1/deletions/{args.id}"), 200))


def _cancel(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        deletion = answer_json(client.post(f"/v1/deletions/{args.id}/cancel"), 200)
        cancelled = deletion["counts"].get("cancelled", 0)
        if args.format == "table":
            say(f"{cancelled} partition(s) cancelled; the others were already sent to Kafka or done")
        return _print_deletion(args, client, deletion)


def _list(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InputError("--limit must be at least 1")
    filters = {"cluster": args.cluster, "topic": args.topic, "status": args.status}
    params: dict[str, Any] = {key: value for key, value in filters.items() if value is not None}
    items: list[dict[str, Any]] = []
    with api_client(args) as client:
        while len(items) < args.limit:
            page = answer_json(
                client.get("/v1/deletions", params={**params, "limit": min(args.limit, PAGE)}), 200
            )
            items.extend(page["items"])
            if not (cursor := page.get("next_cursor")):
                break
            params["cursor"] = cursor
    items = items[: args.limit]
    if args.format == "json":
        emit_json(items)
        return Exit.OK
    rows = [
        [
            d["id"],
            d["cluster"],
            d["status"],
            d["partition_count"],
            ",".join(d["topics"]),
            d["principal"],
            d["created_at"],
            d["reason"],
        ]
        for d in items
    ]
    table(("ID", "CLUSTER", "STATUS", "PARTITIONS", "TOPICS", "PRINCIPAL", "CREATED", "REASON"), rows)
    return Exit.OK


def _evidence(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        evidence = answer_json(client.get(f"/v1/deletions/{args.id}/evidence"), 200)
    if args.format == "json":
        emit_json(evidence)
    else:
        rows = [
            [p["topic"], p["partition"], p["resolved_offset"], p["log_start_offset"], p["verdict"]]
            for p in evidence["partitions"]
        ]
        table(("TOPIC", "PARTITION", "OFFSET", "LOG_START", "VERDICT"), rows)
        if event := evidence["requested_event"]:
            say(f"requested: audit event {event['event_id']} hash {event['hash']}")
        say(evidence["note"])
    return Exit.OK if all(p["verdict"] == "deleted" for p in evidence["partitions"]) else Exit.FAILED
