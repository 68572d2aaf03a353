"""``kafka-purge audit verify|export``: verify the service's audit trail over the HTTP API, optionally
against a checkpoint kept outside the database (a file holding a checkpoint JWS, or the log lines around
one), and export the trail as NDJSON."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, TextIO

from app.cli.client import answer_json, api_client, connection_options, run_client_command
from app.cli.exits import Exit
from app.cli.input import InputError, read_text
from app.cli.output import emit_json, say, table

# A compact JWS whose header is a JSON object: base64url of '{"' starts with "eyJ".
_COMPACT_JWS = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
TIME_HELP = "RFC 3339 with an offset, e.g. 2026-11-25T12:00:00Z"


def add_audit_commands(commands: Any) -> None:
    """Register ``audit verify`` and ``audit export`` on ``kafka-purge``'s sub-parsers."""
    audit = commands.add_parser("audit", help="the audit trail: verify, export")
    actions = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help="verify the audit chain (exit 5 when it is broken)")
    connection_options(verify)
    verify.add_argument(
        "--checkpoint",
        type=Path,
        help="a file with a checkpoint from the service's log (its last checkpoint JWS is used)",
    )
    verify.set_defaults(handler=lambda args: run_client_command(_verify, args))
    export = actions.add_parser("export", help="the audit events in chain order (NDJSON with --format json)")
    connection_options(export)
    export.add_argument("--since", help=f"events at or after this time ({TIME_HELP})")
    export.add_argument("--until", help=f"events before this time ({TIME_HELP})")
    export.add_argument("--action", help="only this action, e.g. deletion.requested")
    export.add_argument("--output-file", type=Path, help="write here instead of stdout")
    export.set_defaults(handler=lambda args: run_client_command(_export, args), format="json")


def read_checkpoint(path: Path) -> str:
    """The last checkpoint JWS in ``path`` (a saved ``audit checkpoint ... jws=...`` log line will do)."""
    found = _COMPACT_JWS.findall(read_text(path, "checkpoint file"))
    if not found:
        raise InputError(f"{path} holds no checkpoint (a compact JWS from an `audit checkpoint` log line)")
    return str(found[-1])


def _verify(args: argparse.Namespace) -> int:
    checkpoint = read_checkpoint(args.checkpoint) if args.checkpoint is not None else None
    with api_client(args) as client:
        if checkpoint is None:
            result = answer_json(client.get("/v1/audit/verify"), 200)
        else:
            result = answer_json(client.post("/v1/audit/verify", json={"checkpoint": checkpoint}), 200)
    if args.format == "json":
        emit_json(result)
    else:
        _print(result)
    return Exit.OK if result["ok"] else Exit.FAILED


def _print(result: dict[str, Any]) -> None:
    if result["ok"]:
        say(f"ok: {result['checked']} events verified up to the head (event {result['head_event_id']})")
    else:
        say(f"BROKEN at event {result['first_broken_id']}: {result['reason']}")
    checkpoint = result.get("checkpoint")
    if checkpoint is not None:
        say(
            f"checkpoint ({checkpoint['source']}): event {checkpoint['event_id']} signed at "
            f"{checkpoint['signed_at']} by key {checkpoint['key_id']}"
        )
    elif not result["checkpoints_enabled"]:
        say("checkpoints: off (the service has no audit signing key)")
    else:
        say("checkpoints: none yet")


def _export(args: argparse.Namespace) -> int:
    filters = {"since": args.since, "until": args.until, "action": args.action}
    params = {key: value for key, value in filters.items() if value is not None}
    out: TextIO = sys.stdout
    if args.output_file is not None:
        try:
            out = args.output_file.open("w", encoding="utf-8")
        except OSError as exc:
            raise InputError(
                f"cannot write {args.output_file}: {exc.strerror or exc.__class__.__name__}"
            ) from None
    try:
        with api_client(args) as client, client.stream("GET", "/v1/audit/export", params=params) as response:
            if response.status_code != 200:
                response.read()
                answer_json(response, 200)
            lines = (line for line in response.iter_lines() if line)
            if args.format == "json":
                for line in lines:
                    out.write(line + "\n")
            else:
                _export_table(lines, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return Exit.OK


def _export_table(lines: Any, out: TextIO) -> None:
    rows = []
    for line in lines:
        event = json.loads(line)
        rows.append(
            [
                event["id"],
                event["occurred_at"],
                event["action"],
                event["principal"],
                event.get("cluster"),
                event.get("deletion_id"),
            ]
        )
    table(("ID", "OCCURRED_AT", "ACTION", "PRINCIPAL", "CLUSTER", "DELETION"), rows, out)
