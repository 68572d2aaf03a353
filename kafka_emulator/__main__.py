"""``python -m kafka_emulator``: run an emulated cluster until SIGTERM/SIGINT.

Prints one JSON line when ready: {"bootstrap": "127.0.0.1:P1,...", "control": "http://127.0.0.1:PC"}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from kafka_emulator.cluster import EmulatedCluster
from kafka_emulator.topology import Topology, load_topology


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m kafka_emulator", description=__doc__)
    parser.add_argument("--brokers", type=int, help="number of brokers (default 3)")
    parser.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="first broker's port; 0 = ephemeral ports (default)")
    parser.add_argument("--control-port", type=int, default=0, help="control API port; 0 = ephemeral")
    parser.add_argument("--config", type=Path, help="topology YAML file")
    parser.add_argument(
        "--delete-records-max-version",
        type=int,
        choices=(0, 1, 2, 3),
        help="highest DeleteRecords version advertised (default 2, as Kafka 3.9; 3 = the LeaderOnly draft)",
    )
    parser.add_argument(
        "--replica-fetch-wait-max-ms", type=float, help="replica.fetch.wait.max.ms (default 500, as Kafka)"
    )
    parser.add_argument(
        "--broker-session-timeout-ms", type=float, help="broker.session.timeout.ms (default 9000, as Kafka)"
    )
    parser.add_argument("--request-log-max", type=int, help="requests kept in the request log (10000)")
    parser.add_argument(
        "--request-log-max-partitions", type=int, help="DeleteRecords partitions kept in it (500000)"
    )
    parser.add_argument(
        "--request-log-apis",
        type=lambda text: [api.strip() for api in text.split(",") if api.strip()],
        help="comma-separated API names to record (default DeleteRecords)",
    )
    parser.add_argument("--log-level", default="WARNING")
    return parser.parse_args(argv)


def cluster_options(args: argparse.Namespace, topology: Topology) -> dict[str, Any]:
    options: dict[str, Any] = {"brokers": 3, **topology.cluster, "host": args.host}
    names = ("brokers", "port", "delete_records_max_version", "request_log_max", "request_log_apis")
    timing = ("replica_fetch_wait_max_ms", "broker_session_timeout_ms")
    for name in (*names, *timing, "request_log_max_partitions"):
        value = getattr(args, name)
        if value is not None:
            options[name] = value
    return options


async def run(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)  # installed first: a signal during start-up still exits 0
    topology = load_topology(args.config) if args.config else Topology()
    cluster = EmulatedCluster(**cluster_options(args, topology))
    for topic in topology.topics:
        cluster.create_topic(topic.name, topic.partitions, topic.replication_factor, topic.configs)
    async with cluster:
        control = await cluster.start_control_api(args.control_port)
        print(json.dumps({"bootstrap": cluster.bootstrap, "control": control}), flush=True)
        await stop.wait()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    try:
        return asyncio.run(run(args))
    except (ValueError, OSError) as exc:
        print(f"kafka_emulator: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
