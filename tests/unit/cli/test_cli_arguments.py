"""What ``kafka-purge delete``/``preview`` send for their arguments, and the arguments they refuse
before sending anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.deletions import request_body
from app.cli.input import InputError
from app.cli.main import build_parser


def body_of(*argv: str) -> dict[str, object]:
    return request_body(build_parser().parse_args(list(argv)))


def test_rpk_flags_become_one_entry_per_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    body = body_of("delete", "orders", "-p", "0,2", "-o", "@1763596800000", "-c", "prod", "--reason", "r")
    assert body["partitions"] == [
        {"topic": "orders", "partition": 0, "before": 1763596800000},
        {"topic": "orders", "partition": 2, "before": 1763596800000},
    ]
    assert body["cluster"] == "prod"
    assert body["dry_run"] is False
    monkeypatch.setenv("PURGE_DEFAULT_CLUSTER", "demo")
    preview = body_of("preview", "orders", "--offset", "end")
    assert preview["cluster"] == "demo"
    assert preview["dry_run"] is True
    assert preview["reason"] == "preview from the kafka-purge command line"


def test_a_deletion_names_a_topic_or_a_file(tmp_path: Path) -> None:
    file = tmp_path / "offsets.json"
    file.write_text('{"partitions": [{"topic": "t", "partition": 0, "offset": 3}]}')
    assert body_of("preview", "-c", "demo", "--file", str(file))["partitions"] == [
        {"topic": "t", "partition": 0, "offset": 3}
    ]
    for argv, message in (
        (("preview", "-c", "demo"), "name a TOPIC"),
        (("preview", "-c", "demo", "t", "--file", str(file)), "not both"),
        (("preview", "-c", "demo", "t"), "-o/--offset is required"),
        (("preview", "-c", "demo", "--file", str(file), "-o", "end"), "-p/-o go with a TOPIC"),
    ):
        with pytest.raises(InputError, match=message):
            body_of(*argv)
