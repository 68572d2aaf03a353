"""``serve --workers-only``: the executor, the retention scheduler and the audit checkpointer in a
process without HTTP (what runs is assembled by ``app.worker.standalone``)."""

from __future__ import annotations

import asyncio
import logging
import signal

from app.gc_pause import freeze_startup_objects
from app.settings import Settings

log = logging.getLogger("kafka_purge.server")


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
