"""Client commands of ``kafka-purge`` over the HTTP API: ``delete``, ``preview``, ``status``, ``evidence``.

The token comes from ``PURGE_TOKEN``, or from the client-credentials grant (``--client-id`` /
``--client-secret`` or ``PURGE_CLIENT_ID`` / ``PURGE_CLIENT_SECRET``) at ``<url>/oauth/token`` unless
``--token-url`` names another issuer. Exit codes: 0 done, 1 a partition failed or the API refused,
2 invalid input (nothing sent).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from authlib.integrations.httpx_client import OAuth2Client, OAuthError

from app.cli.input import InputError, parse_offset_json, topic_entry
from app.cli.output import FAILED, PARTITION_HEADERS, TERMINAL, Progress, partition_rows, say, table

DEFAULT_URL = "http://127.0.0.1:8080"
POLL_INTERVAL_S = 0.5
PAGE = 1000


class ApiError(Exception):
    pass


def connection_options(parser: argparse.ArgumentParser) -> None:
    """Where the service is, how to get a token, and the output format: every client command takes them."""
    parser.add_argument("--url", default=os.environ.get("PURGE_URL", DEFAULT_URL), help="service base URL")
    parser.add_argument("--client-id", default=os.environ.get("PURGE_CLIENT_ID"))
    parser.add_argument("--client-secret", default=os.environ.get("PURGE_CLIENT_SECRET"))
    parser.add_argument("--token-url", help="OAuth2 token endpoint (default <url>/oauth/token)")
    parser.add_argument("--output", choices=("text", "json"), default="text")


def _request_options(parser: argparse.ArgumentParser) -> None:
    connection_options(parser)
    parser.add_argument("--cluster", required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--offset-json-file", type=Path, help="kafka-delete-records.sh JSON file")
    source.add_argument("--topic", help="one topic, with --to")
    parser.add_argument("--to", help="end | <offset> | @<RFC 3339 time or epoch ms> (with --topic)")
    parser.add_argument("--partition", type=int, help="one partition (default: every partition of --topic)")
    parser.add_argument("--reason", required=True)
    parser.add_argument("--leader-only", action="store_true")
    parser.add_argument("--timeout-ms", type=int)
    parser.add_argument("--allow-unconsumed", action="store_true")
    parser.add_argument("--ignore-group", action="append", default=[], dest="ignore_groups")


def add_client_commands(commands: Any) -> None:
    """Register the client commands on ``kafka-purge``'s sub-parsers."""
    delete = commands.add_parser("delete", help="request a deletion through the API")
    _request_options(delete)
    delete.add_argument("--dry-run", action="store_true", help="preview only")
    delete.add_argument("--wait", action="store_true", help="follow the deletion until it finishes")
    delete.set_defaults(handler=command_delete)
    preview = commands.add_parser("preview", help="what a deletion would do (nothing is sent)")
    _request_options(preview)
    preview.set_defaults(handler=command_preview, dry_run=True, wait=False)
    status = commands.add_parser("status", help="a deletion's status and partitions")
    connection_options(status)
    status.add_argument("id")
    status.set_defaults(handler=command_status)
    evidence = commands.add_parser("evidence", help="whether a deletion's records are gone now")
    connection_options(evidence)
    evidence.add_argument("id")
    evidence.set_defaults(handler=command_evidence)


@contextmanager
def api_client(args: argparse.Namespace) -> Iterator[httpx2.Client]:
    """An open HTTP client for ``--url`` carrying a bearer token: ``PURGE_TOKEN`` as it is, or one from
    the client-credentials grant through Authlib, which fetches a new one once it expires (``--wait``)."""
    base_url = args.url.rstrip("/")
    if token := os.environ.get("PURGE_TOKEN"):
        with httpx2.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            yield c
        return
    if not (args.client_id and args.client_secret):
        raise InputError("set PURGE_TOKEN, or --client-id and --client-secret (or PURGE_CLIENT_ID/SECRET)")
    client = OAuth2Client(
        args.client_id,
        args.client_secret,
        token_endpoint=args.token_url or f"{base_url}/oauth/token",
        grant_type="client_credentials",
        base_url=base_url,
        timeout=60,
    )
    with client:
        try:
            client.fetch_token()
        except (OAuthError, ValueError) as exc:
            raise ApiError(f"token request refused: {exc}") from exc
        yield client


def answer_json(response: httpx2.Response, *expected: int) -> Any:
    """The answer's JSON if its status is one of ``expected``; else ``ApiError`` with the problem's title,
    detail and its first 20 errors."""
    if response.status_code not in expected:
        try:
            problem = response.json()
            detail = f"{problem.get('title')}: {problem.get('detail')}"
            extras = problem.get("errors") or problem.get("groups")
            if extras:
                detail += "\n" + "\n".join(f"  {json.dumps(e)}" for e in extras[:20])
        except ValueError:
            detail = response.text[:300]
        raise ApiError(f"HTTP {response.status_code} {detail}")
    return response.json()


def _body(args: argparse.Namespace) -> dict[str, Any]:
    if args.offset_json_file is not None:
        entries = parse_offset_json(args.offset_json_file.read_text())
    else:
        if args.to is None:
            raise InputError("--topic needs --to end|<offset>|@<time>")
        entries = [topic_entry(args.topic, args.to, args.partition)]
    body: dict[str, Any] = {
        "cluster": args.cluster,
        "partitions": entries,
        "reason": args.reason,
        "leader_only": args.leader_only,
        "dry_run": bool(args.dry_run),
        "allow_unconsumed": args.allow_unconsumed,
        "ignore_groups": args.ignore_groups,
    }
    if args.timeout_ms is not None:
        body["timeout_ms"] = args.timeout_ms
    return body


def run_client_command(handler: Any, args: argparse.Namespace) -> int:
    """``handler``'s exit code; 2 for invalid input (nothing sent), 1 for a refusal or an HTTP error."""
    try:
        return int(handler(args))
    except InputError as exc:
        say(f"kafka-purge: {exc}", err=True)
        return 2
    except (ApiError, OAuthError, httpx2.HTTPError) as exc:
        say(f"kafka-purge: {exc}", err=True)
        return 1


def command_delete(args: argparse.Namespace) -> int:
    return run_client_command(_delete, args)


def command_preview(args: argparse.Namespace) -> int:
    return run_client_command(_delete, args)


def command_status(args: argparse.Namespace) -> int:
    return run_client_command(_status, args)


def command_evidence(args: argparse.Namespace) -> int:
    return run_client_command(_evidence, args)


def _delete(args: argparse.Namespace) -> int:
    body = _body(args)
    with api_client(args) as client:
        if body["dry_run"]:
            return _print_preview(args, answer_json(client.post("/v1/deletions", json=body), 200))
        deletion = answer_json(client.post("/v1/deletions", json=body), 202)
        if args.output == "text":
            say(f"deletion {deletion['id']} accepted: {deletion['partition_count']} partition(s)")
        if not args.wait:
            if args.output == "json":
                say(json.dumps(deletion, indent=2))
            return 0
        deletion = _wait(client, deletion["id"], quiet=args.output == "json")
        return _print_deletion(args, client, deletion)


def _wait(client: httpx2.Client, deletion_id: str, *, quiet: bool) -> dict[str, Any]:
    progress = None if quiet else Progress()
    try:
        while True:
            deletion: dict[str, Any] = answer_json(client.get(f"/v1/deletions/{deletion_id}"), 200)
            if progress:
                progress.show(deletion)
            if deletion["status"] in TERMINAL:
                return deletion
            time.sleep(POLL_INTERVAL_S)
    finally:
        if progress:
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
    if args.output == "json":
        say(json.dumps(deletion, indent=2))
    else:
        say(f"deletion {deletion['id']} on {deletion['cluster']}: {deletion['status']}")
        table(PARTITION_HEADERS, partition_rows(deletion["partitions"]))
    return 1 if deletion["status"] in FAILED else 0


def _status(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        return _print_deletion(args, client, answer_json(client.get(f"/v1/deletions/{args.id}"), 200))


def _print_preview(args: argparse.Namespace, preview: dict[str, Any]) -> int:
    if args.output == "json":
        say(json.dumps(preview, indent=2))
        return 0
    say(f"preview on {preview['cluster']}: {preview['records_deleted']} record(s) would be deleted")
    rows = [
        [
            p["topic"],
            p["partition"],
            p["resolved_offset"],
            p["log_start_offset"],
            p["high_watermark"],
            p["records_deleted"],
            p["predicted_outcome"],
            ", ".join(f"{g['group']}:{g['unread_records']}" for g in p["unconsumed_groups"]),
        ]
        for p in preview["partitions"]
    ]
    table(
        ("TOPIC", "PARTITION", "OFFSET", "LOG_START", "HIGH_WATERMARK", "DELETED", "OUTCOME", "UNREAD"), rows
    )
    for group in preview["unconsumed_groups"]:
        active = "active" if group["has_active_members"] else "no active members"
        say(
            f"group {group['group']} ({group['state']}, {active}): {group['unread_records']} unread record(s)"
        )
    for p in preview["partitions"]:
        checked = (p.get("cut_time") or {}).get("timestamps") or {}
        if checked.get("out_of_order"):
            say(
                f"warning: {p['topic']}-{p['partition']}: timestamps around the cut are out of order "
                f"({checked['newer_below_cut']} newer below, {checked['older_at_or_after_cut']} older above)"
            )
    for refusal in preview["refusals"]:
        say(f"would be refused: {refusal}")
    return 0


def _evidence(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        evidence = answer_json(client.get(f"/v1/deletions/{args.id}/evidence"), 200)
    if args.output == "json":
        say(json.dumps(evidence, indent=2))
    else:
        rows = [
            [p["topic"], p["partition"], p["resolved_offset"], p["log_start_offset"], p["verdict"]]
            for p in evidence["partitions"]
        ]
        table(("TOPIC", "PARTITION", "OFFSET", "LOG_START", "VERDICT"), rows)
        if event := evidence["requested_event"]:
            say(f"requested: audit event {event['event_id']} hash {event['hash']}")
        say(evidence["note"])
    return 0 if all(p["verdict"] == "deleted" for p in evidence["partitions"]) else 1
