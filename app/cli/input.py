"""Input formats of the ``delete``/``preview`` commands: ``kafka-delete-records.sh``'s offset JSON file
and rpk-style ``--to end|N|@<time>``. Both become entries of ``POST /v1/deletions``."""

from __future__ import annotations

import json
from typing import Any

SUPPORTED_VERSION = 1


class InputError(Exception):
    """The command's input is not valid; nothing was sent."""


def _int(value: Any, field: str, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"partitions[{index}].{field} must be an integer")
    return value


def parse_offset_json(text: str) -> list[dict[str, Any]]:
    """``{"partitions":[{"topic","partition","offset"}],"version":1}`` as DeleteRecordsCommand reads it:
    version optional (1), other versions and a missing ``partitions`` refused, unknown fields ignored,
    duplicates refused before anything is sent."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"offset JSON file is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise InputError("offset JSON file must hold an object")
    version = document.get("version", SUPPORTED_VERSION)
    if version != SUPPORTED_VERSION or isinstance(version, bool):
        raise InputError(f"Not supported version field value {version}")
    if "partitions" not in document:
        raise InputError("Missing partitions field")
    if not isinstance(document["partitions"], list):
        raise InputError("partitions must be a list")
    entries = []
    for index, item in enumerate(document["partitions"]):
        if not isinstance(item, dict) or not isinstance(item.get("topic"), str):
            raise InputError(f"partitions[{index}].topic must be a string")
        entries.append(
            {
                "topic": item["topic"],
                "partition": _int(item.get("partition"), "partition", index),
                "offset": _int(item.get("offset"), "offset", index),
            }
        )
    seen: set[tuple[str, int]] = set()
    duplicates = []
    for entry in entries:
        key = (entry["topic"], entry["partition"])
        if key in seen:
            duplicates.append(f"{key[0]}-{key[1]}")
        seen.add(key)
    if duplicates:
        raise InputError(f"Offset json file contains duplicate topic partitions: {', '.join(duplicates)}")
    return entries


def topic_entry(topic: str, to: str, partition: int | None) -> dict[str, Any]:
    """``--to end`` (high watermark), ``--to N`` (offset) or ``--to @<time>`` (RFC 3339 or epoch ms)."""
    entry: dict[str, Any] = {"topic": topic}
    if partition is not None:
        entry["partition"] = partition
    if to == "end":
        entry["to"] = "end"
    elif to.startswith("@"):
        moment = to[1:]
        entry["before"] = int(moment) if moment.isdigit() else moment
    else:
        try:
            entry["offset"] = int(to)
        except ValueError as exc:
            raise InputError(f"--to must be end, an offset or @<time>, got {to!r}") from exc
    return entry
