"""``serve``: the HTTP API (with or without the executor) on one socket, from this process and from
forked copies of it that share the socket; or the workers alone (``app.server.workers_only``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Coroutine, Iterator
from typing import Any

import uvicorn

from app.auth.dev_issuer import check_dev_issuer
from app.gc_pause import freeze_startup_objects
from app.server.migrations import migrate_database
from app.server.processes import die_with_parent
from app.settings import Settings

log = logging.getLogger("kafka_purge.server")
# uvicorn's default backlog, which it passes to listen() again when it starts serving the socket.
BACKLOG = 2048


def serve(
    settings: Settings,
    *,
    host: str,
    port: int,
    workers: int = 1,
    api_only: bool = False,
    workers_only: bool = False,
    access_log: bool = False,
) -> None:
    """Migrates, then runs until SIGINT or SIGTERM: the workers alone, or HTTP in ``workers`` processes
    (each with its own executor unless ``api_only``)."""
    if not workers_only:
        check_dev_issuer(settings.auth, host)
    migrate_database(settings)
    if workers_only:
        from app.server.workers_only import run_workers

        asyncio.run(run_workers(settings))
        return
    sock = bind_socket(host, port)
    server = make_server(settings, start_executor=not api_only, access_log=access_log)
    serve_forked(server, sock, max(1, workers), start_executor=not api_only)


def bind_socket(host: str, port: int) -> socket.socket:
    """Binds and listens before the app starts, so ``--port 0`` yields a known port for the public URL and
    banner, and a client that connects while the app is still starting waits in the backlog instead of
    being refused."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


def make_server(
    settings: Settings, *, start_executor: bool = True, access_log: bool = False
) -> uvicorn.Server:
    from app.main import create_app

    # A request's body has a deadline in the app (app.api.middleware); its head has one in the reverse
    # proxy (deploy/nginx/kafka-purge.conf). An idle kept-alive connection closes after uvicorn's
    # timeout_keep_alive.
    app = create_app(settings, run_executor=start_executor)
    config = uvicorn.Config(
        app,
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
