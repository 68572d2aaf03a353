"""``kafka-purge certificate ID --out FILE`` fetches the signed erasure certificate of a finished deletion;
``kafka-purge certificate verify FILE --jwks URL|FILE`` verifies one offline, given the service's public
keys (a JWK set saved from ``/signing-keys``, or that URL): no database, no token."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

from app.certificates import (
    MEDIA_TYPE,
    InvalidCertificate,
    InvalidKeySet,
    VerifiedCertificate,
    key_set,
    verify_certificate,
)
from app.cli.client import ApiError, answer_json, api_client, connection_options, run_client_command
from app.cli.exits import Exit
from app.cli.input import InputError, read_text
from app.cli.output import emit_json, say, table

VERIFY = "verify"
USAGE = "kafka-purge certificate ID [--out FILE]\n       kafka-purge certificate verify FILE --jwks URL|FILE"


def add_certificate_commands(commands: Any) -> None:
    """Register ``certificate ID`` and ``certificate verify FILE`` on ``kafka-purge``'s sub-parsers."""
    command = commands.add_parser(
        "certificate",
        help="a finished deletion's signed erasure certificate; verify one offline",
        usage=USAGE,
        description=(
            "certificate ID: fetch the signed erasure certificate (a JWS) of a finished deletion.\n"
            "certificate verify FILE --jwks URL|FILE: verify one offline against the service's public\n"
            "keys (a JWK set saved from <url>/signing-keys, or that URL); exit 5 when it does not verify."
        ),
    )
    command.add_argument("target", metavar="ID|verify", help="the deletion's id, or verify")
    command.add_argument("file", nargs="?", metavar="FILE", help="with verify: the certificate file")
    command.add_argument(
        "--out", type=Path, metavar="FILE", help="write the certificate here (default stdout)"
    )
    command.add_argument(
        "--jwks",
        metavar="URL|FILE",
        help="with verify: the service's public keys (<url>/signing-keys or a file)",
    )
    connection_options(command)
    command.set_defaults(handler=lambda args: run_client_command(_certificate, args))


def _certificate(args: argparse.Namespace) -> int:
    if args.target == VERIFY:
        if args.file is None or args.jwks is None:
            raise InputError("certificate verify needs the certificate FILE and --jwks URL|FILE")
        if args.out is not None:
            raise InputError("--out goes with certificate ID (fetching), not with verify")
        return _verify(Path(args.file), args.jwks, args.format)
    if args.file is not None or args.jwks is not None:
        raise InputError(f"usage: {USAGE}")
    return _fetch(args)


def _fetch(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        response = client.get(f"/v1/deletions/{args.target}/certificate", headers={"Accept": MEDIA_TYPE})
    if response.status_code != 200:
        answer_json(response, 200)
    if args.out is None:
        say(response.text)
        return Exit.OK
    try:
        args.out.write_text(response.text + "\n", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {args.out}: {exc.strerror or exc.__class__.__name__}") from None
    say(f"certificate of deletion {args.target} written to {args.out}", err=True)
    return Exit.OK


def _verify(path: Path, jwks_source: str, output: str) -> int:
    token = read_text(path, "certificate file")
    try:
        keys = key_set(_jwks(jwks_source))
    except InvalidKeySet as exc:
        raise InputError(f"--jwks {jwks_source}: {exc}") from None
    try:
        verified = verify_certificate(token, keys)
    except InvalidCertificate as exc:
        say(f"kafka-purge: {path} does NOT verify: {exc}", err=True)
        return Exit.FAILED
    if output == "json":
        emit_json({"key_id": verified.key_id, "algorithm": verified.algorithm, "claims": verified.claims})
    else:
        _print(verified)
    return Exit.OK


def _jwks(source: str) -> Any:
    """The JWK set at ``source``: an http(s) URL (fetched, no token: the keys are public) or a file."""
    if source.startswith(("http://", "https://")):
        try:
            response = httpx2.get(source, timeout=30, follow_redirects=True)
        except httpx2.TransportError as exc:
            raise ApiError(
                f"cannot reach {source}: {exc or exc.__class__.__name__}", Exit.UNEXPECTED
            ) from exc
        if response.status_code != 200:
            raise ApiError(f"GET {source} answered {response.status_code}: not a JWK set", Exit.UNEXPECTED)
        text = response.text
    else:
        text = read_text(Path(source), "JWK set file")
    try:
        return json.loads(text)
    except ValueError:
        raise InputError(f'--jwks {source} is not JSON (a JWK set: {{"keys": [...]}})') from None


def _print(verified: VerifiedCertificate) -> None:
    claims = verified.claims
    deletion = claims["deletion"]
    issued = datetime.fromtimestamp(int(claims.get("iat", 0)), UTC).isoformat()
    say(f"verified: signed by key {verified.key_id} ({verified.algorithm})")
    say(f"issued by {claims.get('iss')} at {issued} (certificate {claims.get('jti')})")
    say(
        f"deletion {deletion.get('id')} on cluster {deletion.get('cluster')}: {deletion.get('status')}, "
        f"requested by {deletion.get('requester')} at {deletion.get('requested_at')}, "
        f"finished at {deletion.get('finished_at')}"
    )
    say(f"reason: {deletion.get('reason')}")
    approvers = [str(a.get("principal")) for a in deletion.get("approvers") or []]
    say(f"approvers: {', '.join(approvers) if approvers else 'none'}")
    headers = (
        "TOPIC",
        "PARTITION",
        "STATUS",
        "RESOLVED_OFFSET",
        "LOW_WATERMARK",
        "LEADER_LOG_START",
        "ERROR",
    )
    fields = ("topic", "partition", "status", "resolved_offset", "low_watermark", "leader_log_start_offset")
    rows = [
        [p.get(f) for f in fields] + [p.get("error_code") or ""] for p in deletion.get("partitions") or []
    ]
    table(headers, rows)
    for name, anchor in (claims.get("audit") or {}).items():
        if anchor:
            event = f"{anchor.get('action')} event {anchor.get('event_id')}"
            say(f"audit {name}: {event} hash {anchor.get('hash')}")
