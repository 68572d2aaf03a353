"""``kafka-purge``: run the service (``serve``), migrate the database (``migrate``), or try it (``demo``);
the client commands (``delete``, ``status``, ``audit verify``, ...) talk to a running service."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import uvicorn
from pydantic import ValidationError
from pydantic_settings import SettingsError
from sqlalchemy.engine import make_url

from app.cli_audit import add_audit_commands
from app.cli_client import add_client_commands
from app.collection import freeze_startup_objects
from app.processes import die_with_parent
from app.settings import Settings

log = logging.getLogger("kafka_purge.cli")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-purge", description="Delete Kafka records on purpose: run, try or use the service."
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
    add_client_commands(commands)
    add_audit_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # Library chatter that says nothing to an operator at INFO: one line per HTTP call the demo makes,
    # one per Alembic plugin loaded. Their warnings and errors still show.
    for chatty in ("httpx", "alembic.runtime.plugins"):
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLogger().level))
    try:
        return int(args.handler(args))
    except (ValidationError, SettingsError) as exc:
        # Both name the setting and never its value (settings hide their input in errors).
        print(f"kafka-purge: invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. the port is taken
        print(f"kafka-purge: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def command_serve(args: argparse.Namespace) -> int:
    settings = Settings()
    migrate_database(settings)
    if args.workers_only:
        asyncio.run(run_workers(settings))
    else:
        sock = bind_socket(args.host, args.port)
        server = make_server(settings, start_executor=not args.api_only, access_log=args.access_log)
        serve_forked(server, sock, max(1, args.workers), start_executor=not args.api_only)
    return 0


def command_migrate(args: argparse.Namespace) -> int:
    migrate_database(Settings())
    return 0


def command_demo(args: argparse.Namespace) -> int:
    from app.demo import run_demo

    try:
        return asyncio.run(run_demo(args.host, args.port, args.data_dir))
    except RuntimeError as exc:
        print(f"kafka-purge demo: {exc}", file=sys.stderr)
        return 1


def migrate_database(settings: Settings) -> None:
    """Upgrades the schema; a SQLite file's directory is created first (the default lives in ./data)."""
    from app.adapters.db.migrate import upgrade

    url = make_url(settings.database.url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(upgrade(settings.database.url))
    log.info("database schema is up to date at %s", url.render_as_string(hide_password=True))


def bind_socket(host: str, port: int) -> socket.socket:
    """Binds before the app starts, so ``--port 0`` yields a known port for the public URL and banner."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def make_server(
    settings: Settings, *, start_executor: bool = True, access_log: bool = False
) -> uvicorn.Server:
    from app.http_protocol import configured_protocol
    from app.main import create_app

    app = create_app(settings, run_executor=start_executor)
    config = uvicorn.Config(
        app,
        http=configured_protocol(settings.limits),
        # X-Forwarded-For is interpreted by app.auth against PURGE_TRUSTED_PROXIES only, never by uvicorn.
        proxy_headers=False,
        server_header=False,
        log_config=None,
        access_log=access_log,
        lifespan="on",
        timeout_graceful_shutdown=10,
    )
    return uvicorn.Server(config)


def serve_forked(
    server: uvicorn.Server, sock: socket.socket, workers: int, *, start_executor: bool = True
) -> None:
    """Serves ``sock`` from this process and ``workers - 1`` forked copies (the kernel spreads the
    connections). The app is built before forking, so every worker trusts the same dev issuer key; each
    runs its own lifespan (engine, Kafka clients, an executor with its own instance id: leases and
    fences make executors in several processes safe). Children end with the parent."""
    freeze_startup_objects()
    children = []
    for _ in range(workers - 1):
        pid = os.fork()
        if pid == 0:
            die_with_parent()
            try:
                run_uvloop(run_http(server, sock, start_executor=start_executor))
            finally:
                os._exit(0)
        children.append(pid)
    try:
        run_uvloop(run_http(server, sock, start_executor=start_executor))
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        for pid in children:
            os.waitpid(pid, 0)


def run_uvloop(main: Coroutine[Any, Any, None]) -> None:
    """uvloop's event loop when installed (it is a dependency of uvicorn[standard]): cheaper I/O."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)


async def run_http(server: uvicorn.Server, sock: socket.socket, *, start_executor: bool = True) -> None:
    host, port = sock.getsockname()[:2]
    log.info(
        "serving HTTP on %s:%d (executor %s, pid %d)",
        host,
        port,
        "on" if start_executor else "off",
        os.getpid(),
    )
    with benign_signals():
        await server.serve(sockets=[sock])


async def run_workers(settings: Settings) -> None:
    """The executor and the retention scheduler, without HTTP, until SIGINT or SIGTERM."""
    from app.adapters.db.session import create_engine, make_sessionmaker
    from app.adapters.kafka import KafkaClusters
    from app.worker.standalone import standalone_workers

    engine = create_engine(settings.database.url, pool_size=settings.database.pool_size)
    gateway = KafkaClusters(settings.clusters)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    freeze_startup_objects()
    try:
        await gateway.start()
        async with standalone_workers(settings, make_sessionmaker(engine), gateway) as workers:
            extra = ", audit checkpoints" if workers.checkpointer is not None else ""
            log.info("executor %s running, with retention sweeps%s", workers.executor.instance_id, extra)
            await stop.wait()
    finally:
        await gateway.close()
        await engine.dispose()


@contextlib.contextmanager
def benign_signals() -> Iterator[None]:
    """uvicorn re-raises the signal that stopped it once it has shut down; absorb it so the caller's
    own cleanup (e.g. stopping the demo's emulator) runs instead of being cancelled half way."""

    def note(signum: int, frame: Any) -> None:
        log.debug("signal %s after shutdown", signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
