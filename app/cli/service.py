"""The commands that run the service itself: ``serve``, ``migrate`` and ``demo``. What they need (the
settings, the database, the server) is imported when one of them runs, so the client commands start
without loading it."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.output import say

if TYPE_CHECKING:
    from app.settings import Settings

log = logging.getLogger("kafka_purge.cli")


def add_service_commands(commands: Any) -> None:
    """Register ``serve``, ``migrate`` and ``demo`` on ``kafka-purge``'s sub-parsers."""
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
    serve.set_defaults(handler=lambda args: run_service_command(command_serve, args))

    migrate = commands.add_parser("migrate", help="upgrade the database schema to the newest revision")
    migrate.set_defaults(handler=lambda args: run_service_command(command_migrate, args))

    demo = commands.add_parser(
        "demo", help="emulated 3-broker cluster with data, SQLite, dev tokens, service"
    )
    demo.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    demo.add_argument("--port", type=int, default=8080, help="listen port (default 8080; 0 = any free port)")
    demo.add_argument("--data-dir", type=Path, default=Path("data"), help="where the demo database lives")
    demo.set_defaults(handler=lambda args: run_service_command(command_demo, args))


def run_service_command(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``command``'s exit code; 2 with one line for a configuration the service cannot start with."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    from app.adapters.db.connectivity import DatabaseUnavailable
    from app.settings.diagnostics import UnsafeConfiguration, describe

    try:
        return command(args)
    except (ValidationError, SettingsError, UnsafeConfiguration) as exc:
        # One line naming the variable, never its value (it may be a secret).
        say(f"kafka-purge: {describe(exc, os.environ)}", err=True)
        return 2
    except DatabaseUnavailable as exc:
        say(f"kafka-purge: {exc}", err=True)
        return 2


def warn_unknown_variables() -> None:
    from app.settings.diagnostics import unknown_variable_warnings

    for warning in unknown_variable_warnings(os.environ):
        log.warning("%s", warning)


def service_settings() -> Settings:
    """The settings from the environment, after a warning for each PURGE_* variable nothing reads."""
    from app.settings import Settings

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
        say(f"kafka-purge demo: {exc}", err=True)
        return 1
