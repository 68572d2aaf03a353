"""``kafka-purge``: run the service (``serve``), migrate the database (``migrate``), or try it (``demo``);
the client commands (``delete``, ``list``, ``acl``, ``policy``, ``audit``, ...) talk to a running service."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from app.cli.acls import add_acl_commands
from app.cli.approvals import add_approval_commands
from app.cli.audit import add_audit_commands
from app.cli.certificates import add_certificate_commands
from app.cli.client import ENVIRONMENT_HELP
from app.cli.deletions import add_deletion_commands
from app.cli.exits import EXIT_CODES_HELP
from app.cli.policies import add_policy_commands
from app.cli.service import add_service_commands
from app.logs import chosen_format, configure_logging


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-purge",
        description="Delete Kafka records on purpose: run, try or use the service.",
        epilog=f"{ENVIRONMENT_HELP}\n\n{EXIT_CODES_HELP}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_service_commands(commands)
    add_deletion_commands(commands)
    add_acl_commands(commands)
    add_policy_commands(commands)
    add_approval_commands(commands)
    add_audit_commands(commands)
    add_certificate_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        configure_logging(args.log_level, chosen_format(os.environ, sys.stderr))
    except ValueError as exc:
        print(f"kafka-purge: {exc}", file=sys.stderr)
        return 2
    # Library chatter that says nothing to an operator at INFO: one line per HTTP call the demo makes,
    # one per Alembic plugin loaded. Their warnings and errors still show.
    for chatty in ("httpx", "httpx2", "alembic.runtime.plugins"):
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLogger().level))
    try:
        return int(args.handler(args))
    except OSError as exc:  # e.g. the port is taken
        print(f"kafka-purge: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
