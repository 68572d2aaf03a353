"""Input of the ``delete``/``preview`` commands: ``kafka-delete-records.sh``'s offset JSON file, and the
rpk-style ``TOPIC -p 0,1,2 -o end|N|@<time>``. Both become entries of ``POST /v1/deletions``."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

SUPPORTED_VERSION = 1
OFFSET_HELP = (
    "where to cut: N (delete the records before offset N; -1 = the high watermark), end (the high "
    "watermark), or @<time>: epoch milliseconds (@1763596800000) or RFC 3339 with an offset "
    "(@2026-11-20T00:00:00Z), deleting every record older than that time"
)


class InputError(Exception):
    """The command's input is not valid; nothing was sent."""


def read_text(path: Path, what: str) -> str:
    """The text of ``path``; ``InputError`` in one line when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} {path} is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{what} {path} is not readable (permission denied)") from None
    except (OSError, UnicodeError) as exc:
        raise InputError(f"cannot read {what} {path}: {exc.__class__.__name__}") from None


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


def parse_partitions(text: str) -> list[int]:
    """``-p 0,1,2`` (rpk's form): distinct non-negative partition numbers, in the order given."""
    numbers: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit():
            raise InputError(f"-p/--partitions takes partition numbers separated by commas, got {text!r}")
        if int(part) in numbers:
            raise InputError(f"-p/--partitions names partition {int(part)} twice")
        numbers.append(int(part))
    return numbers


def offset_spec(offset: str) -> dict[str, Any]:
    """The request's spec for ``-o``: ``end``, ``N`` or ``@<epoch ms | RFC 3339>``."""
    if offset == "end":
        return {"to": "end"}
    if offset.startswith("@"):
        moment = offset[1:]
        if moment.isdigit():
            return {"before": int(moment)}
        try:
            parsed = datetime.fromisoformat(moment)
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise InputError(
                f"-o @{moment}: expected epoch milliseconds (@1763596800000) or RFC 3339 with an offset "
                "(@2026-11-20T00:00:00Z)"
            )
        return {"before": moment}
    try:
        return {"offset": int(offset)}
    except ValueError:
        raise InputError(f"-o/--offset must be end, an offset or @<time>, got {offset!r}") from None


def topic_entries(topic: str, offset: str, partitions: list[int] | None) -> list[dict[str, Any]]:
    """One entry per partition named with ``-p`` (none: one entry for every partition of ``topic``)."""
    spec = offset_spec(offset)
    if not partitions:
        return [{"topic": topic, **spec}]
    return [{"topic": topic, "partition": partition, **spec} for partition in partitions]
