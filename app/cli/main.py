"""``kafka-purge``: run the service (``serve``), migrate the database (``migrate``), or try it (``demo``);
the client commands (``delete``, ``list``, ``acl``, ``policy``, ``audit``, ...) talk to a running service."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from pydantic import ValidationError
from pydantic_settings import SettingsError

from app.adapters.db.connectivity import DatabaseUnavailable
from app.cli.acls import add_acl_commands
from app.cli.audit import add_audit_commands
from app.cli.client import ENVIRONMENT_HELP
from app.cli.deletions import add_deletion_commands
from app.cli.exits import EXIT_CODES_HELP
from app.cli.policies import add_policy_commands
from app.logs import chosen_format, configure_logging
from app.settings import Settings
from app.settings_diagnostics import UnsafeConfiguration, describe, unknown_variable_warnings

log = logging.getLogger("kafka_purge.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-purge",
        description="Delete Kafka records on purpose: run, try or use the service.",
        epilog=f"{ENVIRONMENT_HELP}\n\n{EXIT_CODES_HELP}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the HTTP API and the executor (after migrating)")
    serve.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="listen port (default 8080; 0 = any free port)")
    mode = serve.add_mutually_exclusive_group()
    mode.add_argument("--api-only", action="store_true", help="serve HTTP without running the executor")
    mode.add_argument("--workers-only", action="store_true", help="run the executor without HTTP")
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        help="HTTP worker processes sharing the port, each with its own executor (default 1)",
    )
    serve.add_argument(
        "--access-log", action="store_true", help="log every HTTP request (off by default: it costs CPU)"
    )
    serve.set_defaults(handler=command_serve)

    migrate = commands.add_parser("migrate", help="upgrade the database schema to the newest revision")
    migrate.set_defaults(handler=command_migrate)

    demo = commands.add_parser(
        "demo", help="emulated 3-broker cluster with data, SQLite, dev tokens, service"
    )
    demo.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    demo.add_argument("--port", type=int, default=8080, help="listen port (default 8080; 0 = any free port)")
    demo.add_argument("--data-dir", type=Path, default=Path("data"), help="where the demo database lives")
    demo.set_defaults(handler=command_demo)
    add_deletion_commands(commands)
    add_acl_commands(commands)
    add_policy_commands(commands)
    add_audit_commands(commands)
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
    except (ValidationError, SettingsError, UnsafeConfiguration) as exc:
        # One line naming the variable, never its value (it may be a secret).
        print(f"kafka-purge: {describe(exc, os.environ)}", file=sys.stderr)
        return 2
    except DatabaseUnavailable as exc:
        print(f"kafka-purge: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. the port is taken
        print(f"kafka-purge: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def warn_unknown_variables() -> None:
    for warning in unknown_variable_warnings(os.environ):
        log.warning("%s", warning)


def service_settings() -> Settings:
    """The settings from the environment, after a warning for each PURGE_* variable nothing reads."""
    warn_unknown_variables()
    return Settings()


def command_serve(args: argparse.Namespace) -> int:
    from app.server.serve import serve

    serve(
        service_settings(),
        host=args.host,
        port=args.port,
        workers=args.workers,
        api_only=args.api_only,
        workers_only=args.workers_only,
        access_log=args.access_log,
    )
    return 0


def command_migrate(args: argparse.Namespace) -> int:
    from app.server.migrations import migrate_database

    migrate_database(service_settings())
    return 0


def command_demo(args: argparse.Namespace) -> int:
    from app.demo import run_demo

    warn_unknown_variables()
    try:
        return asyncio.run(run_demo(args.host, args.port, args.data_dir))
    except RuntimeError as exc:
        print(f"kafka-purge demo: {exc}", file=sys.stderr)
        return 1
