"""Micro-benchmark of the emulator's wire codec on a 10,000-partition DeleteRecords (request + response).

Run: .venv/bin/python bench/emulator_codec_bench.py  (prints one line per case, best of N runs in ms)
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kafka_emulator.protocol import messages

DELETE_RECORDS = 21
RUNS = 20


def _best_ms(action: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def _request(topics: int, per_topic: int) -> dict[str, object]:
    return {
        "Topics": [
            {
                "Name": f"topic-{t}",
                "Partitions": [{"PartitionIndex": p, "Offset": 1000 + p} for p in range(per_topic)],
            }
            for t in range(topics)
        ],
        "TimeoutMs": 30000,
        "LeaderOnly": False,
    }


def _response(request: dict[str, object]) -> dict[str, object]:
    topics = request["Topics"]
    assert isinstance(topics, list)
    return {
        "ThrottleTimeMs": 0,
        "Topics": [
            {
                "Name": t["Name"],
                "Partitions": [
                    {
                        "PartitionIndex": p["PartitionIndex"],
                        "LowWatermark": p["Offset"],
                        "LeaderLogStartOffset": p["Offset"],
                        "ErrorCode": 0,
                    }
                    for p in t["Partitions"]
                ],
            }
            for t in topics
        ],
    }


def main() -> None:
    messages.precompile()
    for version in (2, 3):
        for topics, per_topic in ((1, 10_000), (100, 100)):
            request = _request(topics, per_topic)
            header = messages.RequestHeader(DELETE_RECORDS, version, 1, "bench")
            frame = messages.encode_request(header, request)
            response = _response(request)
            encoded = messages.encode_response(DELETE_RECORDS, version, 1, response)
            figures = {
                "decode request": _best_ms(lambda f=frame: messages.decode_request(f)),
                "encode response": _best_ms(
                    lambda r=response, v=version: messages.encode_response(DELETE_RECORDS, v, 1, r)
                ),
                "encode request": _best_ms(lambda h=header, r=request: messages.encode_request(h, r)),
                "decode response": _best_ms(
                    lambda e=encoded, v=version: messages.decode_response(DELETE_RECORDS, v, e)
                ),
            }
            shown = ", ".join(f"{name} {ms:.1f} ms" for name, ms in figures.items())
            print(f"DeleteRecords v{version}, {topics} topic(s) x {per_topic} partitions: {shown}")


if __name__ == "__main__":
    main()
