"""The client commands' input formats (``app.cli.input``): kafka-delete-records.sh's offset JSON file
and ``--to end|N|@<time>``."""

from __future__ import annotations

import pytest

from app.cli.input import InputError, parse_offset_json, topic_entry


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
    assert topic_entry("t", "end", None) == {"topic": "t", "to": "end"}
    assert topic_entry("t", "@1700000000000", 2) == {"topic": "t", "partition": 2, "before": 1700000000000}
    assert topic_entry("t", "@2026-11-20T00:00:00Z", None)["before"] == "2026-11-20T00:00:00Z"
    assert topic_entry("t", "-1", None) == {"topic": "t", "offset": -1}
    with pytest.raises(InputError):
        topic_entry("t", "start", None)
