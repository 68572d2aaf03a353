"""Emulator benchmark: 10,000-partition DeleteRecords, produce throughput, idle CPU.

Runs ``python -m kafka_emulator`` as a separate process (so its CPU is measured alone), creates a
10,000-partition topic with replication factor 3 over 3 brokers, writes 20 records to every partition,
then times DeleteRecords sent as one request per leader broker (all three in flight at once), from the
first byte sent to the last response read. Requests are pre-encoded so client-side encoding is not
counted. Produce throughput is measured with aiokafka's producer; idle CPU is the emulator process's
user+system CPU seconds over 10 s without requests.

DeleteRecords is timed at each ``--fetch-wait-ms`` (``replica.fetch.wait.max.ms``): first Kafka's 500 ms,
where a v2 request waits until the followers' parked fetches return with the new log start offset (the
time a real cluster takes), then the shortened timing the tests use. Produce and idle CPU are measured at
the first timing only. Every broker serves DeleteRecords v3 (LeaderOnly draft), so both v2 and v3 run.

Run: .venv/bin/python bench/emulator_bench.py [--runs 7] [--records 100000] [--fetch-wait-ms 500,20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import struct
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.record.default_records import DefaultRecordBatchBuilder

from kafka_emulator.protocol import messages

ROOT = Path(__file__).resolve().parent.parent
PARTITIONS = 10_000
RECORDS_PER_PARTITION = 20
PRODUCE, DELETE_RECORDS = 0, 21
TARGET_DELETE_MS = 200.0


def start_emulator(fetch_wait_ms: float) -> tuple[subprocess.Popen[str], str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    timing = ["--replica-fetch-wait-max-ms", str(fetch_wait_ms), "--delete-records-max-version", "3"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_emulator", "--brokers", "3", *timing],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    ready = json.loads(proc.stdout.readline())
    return proc, ready["bootstrap"], ready["control"]


def http(method: str, url: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read() or b"null")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Connection:
    """One raw Kafka connection: pre-encoded request frames out, response frames in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, address: str) -> Connection:
        host, port = address.rsplit(":", 1)
        return cls(*await asyncio.open_connection(host, int(port)))

    async def call(self, frame: bytes) -> bytes:
        self.writer.write(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", await self.reader.readexactly(4))[0]
        return await self.reader.readexactly(size)

    def close(self) -> None:
        self.writer.close()


def encode(key: int, version: int, body: dict[str, Any], correlation: int = 1) -> bytes:
    return messages.encode_request(messages.RequestHeader(key, version, correlation, "bench"), body)


def record_batch(count: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 20)
    for i in range(count):
        builder.append(i, timestamp=1_000 + i, key=None, value=b"x" * 100, headers=[])
    return bytes(builder.build())


def leaders(control: str, topic: str) -> dict[int, list[int]]:
    by_broker: dict[int, list[int]] = {}
    for partition in http("GET", f"{control}/state")["topics"][topic]["partitions"]:
        by_broker.setdefault(partition["leader"], []).append(partition["partition"])
    return by_broker


async def fill(connections: dict[int, Connection], by_broker: dict[int, list[int]]) -> None:
    batch = record_batch(RECORDS_PER_PARTITION)
    frames = {
        broker: encode(
            PRODUCE,
            9,
            {
                "TransactionalId": None,
                "Acks": -1,
                "TimeoutMs": 60_000,
                "TopicData": [
                    {"Name": "bench", "PartitionData": [{"Index": p, "Records": batch} for p in parts]}
                ],
            },
        )
        for broker, parts in by_broker.items()
    }
    await asyncio.gather(*(connections[b].call(f) for b, f in frames.items()))


def delete_frame(parts: list[int], offset: int, version: int, leader_only: bool) -> bytes:
    body = {
        "Topics": [{"Name": "bench", "Partitions": [{"PartitionIndex": p, "Offset": offset} for p in parts]}],
        "TimeoutMs": 30_000,
        "LeaderOnly": leader_only,
    }
    return encode(DELETE_RECORDS, version, body)


def check_delete(frame: bytes, version: int, offset: int) -> int:
    _, response = messages.decode_response(DELETE_RECORDS, version, frame)
    results = [p for t in response["Topics"] for p in t["Partitions"]]
    assert all(p["ErrorCode"] == 0 for p in results), "DeleteRecords failed"
    assert all(p["LowWatermark"] >= offset for p in results) or version == 3, "low watermark below offset"
    return len(results)


async def delete_runs(
    connections: dict[int, Connection],
    by_broker: dict[int, list[int]],
    offsets: list[int],
    version: int,
    pid: int,
) -> tuple[list[float], list[float]]:
    """Wall-clock ms from first byte sent to last response read, and emulator CPU ms, per run."""
    timings, cpu = [], []
    for offset in offsets:
        frames = {b: delete_frame(parts, offset, version, version == 3) for b, parts in by_broker.items()}
        cpu_before = cpu_seconds(pid)
        started = time.perf_counter()
        answers = await asyncio.gather(*(connections[b].call(f) for b, f in frames.items()))
        timings.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.2)  # let followers settle so runs do not overlap
        cpu.append((cpu_seconds(pid) - cpu_before) * 1000)
        assert sum(check_delete(a, version, offset) for a in answers) == PARTITIONS
    return timings, cpu


async def produce_throughput(bootstrap: str, records: int, acks: int | str) -> tuple[float, float]:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks=acks, linger_ms=5, max_batch_size=256 * 1024
    )
    await producer.start()
    value = b"v" * 100
    try:
        started = time.perf_counter()
        futures = [await producer.send("throughput", value, partition=i % 6) for i in range(records)]
        await asyncio.gather(*futures)
        elapsed = time.perf_counter() - started
    finally:
        await producer.stop()
    return records / elapsed, records * len(value) / elapsed / 1e6


async def bench(args: argparse.Namespace, fetch_wait_ms: float, full: bool) -> dict[str, Any]:
    """DeleteRecords figures at one timing; with ``full`` also idle CPU and produce throughput."""
    proc, bootstrap, control = start_emulator(fetch_wait_ms)
    figures: dict[str, Any] = {"fetch_wait_ms": fetch_wait_ms}
    try:
        started = time.perf_counter()
        http(
            "POST", f"{control}/topics", {"name": "bench", "partitions": PARTITIONS, "replication_factor": 3}
        )
        http("POST", f"{control}/topics", {"name": "throughput", "partitions": 6, "replication_factor": 3})
        by_broker = leaders(control, "bench")
        addresses = dict(enumerate(bootstrap.split(","), start=1))
        connections = {b: await Connection.open(addresses[b]) for b in by_broker}
        await fill(connections, by_broker)
        figures["setup_s"] = time.perf_counter() - started
        await asyncio.sleep(1.0)
        runs = list(range(1, args.runs + 1))
        figures["v2"], figures["v2_cpu"] = await delete_runs(connections, by_broker, runs, 2, proc.pid)
        runs = [r + args.runs for r in runs]
        figures["v3"], figures["v3_cpu"] = await delete_runs(connections, by_broker, runs, 3, proc.pid)
        if full:
            await asyncio.sleep(1.0)
            cpu_before = cpu_seconds(proc.pid)
            await asyncio.sleep(10.0)
            figures["idle_cpu"] = cpu_seconds(proc.pid) - cpu_before
            figures["acks1"] = await produce_throughput(bootstrap, args.records, 1)
            figures["acks_all"] = await produce_throughput(bootstrap, args.records, "all")
        for connection in connections.values():
            connection.close()
    finally:
        proc.terminate()
        proc.wait(10)
    return figures


def delete_rows(figures: dict[str, Any]) -> list[tuple[str, float, float | None]]:
    at = f"fetch wait {figures['fetch_wait_ms']:g} ms"
    v2, v3, v2_cpu, v3_cpu = figures["v2"], figures["v3"], figures["v2_cpu"], figures["v3_cpu"]
    return [
        (f"DeleteRecords v2, 10k partitions, 3 requests, {at} (median ms)", statistics.median(v2), None),
        (f"DeleteRecords v2, {at} (best ms)", min(v2), None),
        (f"DeleteRecords v2, {at} (worst ms)", max(v2), None),
        (f"DeleteRecords v2: emulator CPU per run, {at} (median ms)", statistics.median(v2_cpu), None),
        (f"DeleteRecords v3 LeaderOnly, {at} (median ms)", statistics.median(v3), TARGET_DELETE_MS),
        (f"DeleteRecords v3: emulator CPU per run, {at} (median ms)", statistics.median(v3_cpu), None),
        (f"Setup: create + fill 10k partitions, {at} (s)", figures["setup_s"], None),
    ]


def report(timings: list[dict[str, Any]]) -> None:
    first = timings[0]
    rows = [row for figures in timings for row in delete_rows(figures)]
    rows += [
        ("Idle CPU, 10k partitions x RF3 (CPU s over 10 s)", first["idle_cpu"], None),
        ("Produce acks=1 (records/s)", first["acks1"][0], None),
        ("Produce acks=1 (MB/s, 100-byte values)", first["acks1"][1], None),
        ("Produce acks=all (records/s)", first["acks_all"][0], None),
        ("Produce acks=all (MB/s)", first["acks_all"][1], None),
        ("Machine load average (1 min) at the end", os.getloadavg()[0], None),
    ]
    print(f"{'measure':76} {'value':>12} {'target':>10}")
    for name, value, target in rows:
        verdict = "" if target is None else (f"< {target:.0f}" + (" ok" if value < target else " MISSED"))
        print(f"{name:76} {value:12.2f} {verdict:>10}")


async def bench_all(args: argparse.Namespace) -> list[dict[str, Any]]:
    waits = [float(w) for w in args.fetch_wait_ms.split(",")]
    return [await bench(args, wait, full=index == 0) for index, wait in enumerate(waits)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument(
        "--fetch-wait-ms", default="500,20", help="replica.fetch.wait.max.ms values (first: measured fully)"
    )
    report(asyncio.run(bench_all(parser.parse_args())))


if __name__ == "__main__":
    main()
