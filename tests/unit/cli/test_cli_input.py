"""The client commands' input formats (``app.cli.input``): kafka-delete-records.sh's offset JSON file
and rpk's ``TOPIC -p 0,1,2 -o end|N|@<time>``."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.input import InputError, parse_offset_json, parse_partitions, read_text, topic_entries


def test_offset_json_file_rules() -> None:
    assert parse_offset_json('{"partitions":[{"topic":"foo","partition":1,"offset":1}],"version":1}') == [
        {"topic": "foo", "partition": 1, "offset": 1}
    ]
    assert (
        parse_offset_json('{"partitions":[{"topic":"t","partition":0,"offset":-1,"x":1}]}')[0]["offset"] == -1
    )
    for text, message in (
        ('{"partitions":[],"version":2}', "Not supported version field value 2"),
        ('{"version":1}', "Missing partitions field"),
        ('{"partitions":[{"topic":"t","partition":true,"offset":1}]}', "must be an integer"),
        (
            '{"partitions":[{"topic":"t","partition":0,"offset":1},{"topic":"t","partition":0,"offset":2}]}',
            "t-0",
        ),
    ):
        with pytest.raises(InputError, match=message):
            parse_offset_json(text)


def test_topic_partitions_and_offset_as_rpk_takes_them() -> None:
    assert topic_entries("t", "end", None) == [{"topic": "t", "to": "end"}]
    assert topic_entries("t", "@1700000000000", [2]) == [
        {"topic": "t", "partition": 2, "before": 1700000000000}
    ]
    assert topic_entries("t", "@2026-11-20T00:00:00Z", None)[0]["before"] == "2026-11-20T00:00:00Z"
    assert topic_entries("t", "@2026-11-20T01:00:00+01:00", None)[0]["before"] == "2026-11-20T01:00:00+01:00"
    assert topic_entries("t", "-1", None) == [{"topic": "t", "offset": -1}]
    assert topic_entries("t", "7", parse_partitions("0,1, 2")) == [
        {"topic": "t", "partition": p, "offset": 7} for p in (0, 1, 2)
    ]
    for offset, message in (
        ("start", "must be end, an offset or @<time>"),
        ("@2026-11-20", "RFC 3339 with an offset"),
        ("@2026-11-20T00:00:00", "RFC 3339 with an offset"),
        ("@yesterday", "epoch milliseconds"),
    ):
        with pytest.raises(InputError, match=message):
            topic_entries("t", offset, None)
    for partitions in ("0,,1", "a", "-1", "1,1"):
        with pytest.raises(InputError, match="-p/--partitions"):
            parse_partitions(partitions)


def test_an_unreadable_file_is_one_line_without_errno(tmp_path: Path) -> None:
    for path, message in (
        (tmp_path / "missing.json", "offset JSON file .*missing.json does not exist"),
        (tmp_path, "is a directory"),
    ):
        with pytest.raises(InputError, match=message) as raised:
            read_text(path, "offset JSON file")
        assert "Errno" not in str(raised.value)
        assert "\n" not in str(raised.value)
