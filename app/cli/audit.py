"""``kafka-purge audit verify``: verify the service's audit trail over the HTTP API, optionally against a
checkpoint kept outside the database (a file holding a checkpoint JWS, or the log lines around one).

Exit codes: 0 the trail verifies, 1 it is broken or the API refused, 2 invalid input (nothing sent).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from app.cli.client import answer_json, api_client, connection_options, run_client_command
from app.cli.input import InputError
from app.cli.output import say

# A compact JWS whose header is a JSON object: base64url of '{"' starts with "eyJ".
_COMPACT_JWS = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


def add_audit_commands(commands: Any) -> None:
    """Register ``audit verify`` on ``kafka-purge``'s sub-parsers."""
    audit = commands.add_parser("audit", help="the audit trail")
    actions = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help="verify the audit chain (exit 1 when it is broken)")
    connection_options(verify)
    verify.add_argument(
        "--checkpoint",
        type=Path,
        help="a file with a checkpoint from the service's log (its last checkpoint JWS is used)",
    )
    verify.set_defaults(handler=command_audit_verify)


def command_audit_verify(args: argparse.Namespace) -> int:
    return run_client_command(_verify, args)


def read_checkpoint(path: Path) -> str:
    """The last checkpoint JWS in ``path`` (a saved ``audit checkpoint ... jws=...`` log line will do)."""
    try:
        text = path.read_text()
    except (OSError, UnicodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    found = _COMPACT_JWS.findall(text)
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
    if args.output == "json":
        say(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0 if result["ok"] else 1


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
