"""The checkpoint reader on hand-written checkpoint folders: the cases a real query rarely shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.integrations.spark.checkpoint import CheckpointError, read_committed_offsets

META = '{"batchWatermarkMs":0,"batchTimestampMs":1795303632703,"conf":{}}'


def write_batch(root: Path, batch: int, *sources: str, committed: bool = True) -> None:
    (root / "offsets").mkdir(parents=True, exist_ok=True)
    (root / "commits").mkdir(parents=True, exist_ok=True)
    (root / "offsets" / str(batch)).write_text("\n".join(["v1", META, *sources]), encoding="utf-8")
    (root / "offsets" / f".{batch}.crc").write_bytes(b"\x00crc")
    if committed:
        (root / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}', encoding="utf-8")


def test_highest_committed_batch_wins_numerically_not_as_text(tmp_path: Path) -> None:
    write_batch(tmp_path, 9, '{"t":{"0":90}}')
    write_batch(tmp_path, 10, '{"t":{"0":100}}')
    write_batch(tmp_path, 11, '{"t":{"0":110}}', committed=False)
    found = read_committed_offsets(str(tmp_path))
    assert (found.batch_id, found.in_flight) == (10, (11,))
    assert found.topic_offsets() == {"t": {0: 100}}


def test_spacing_and_key_order_do_not_matter(tmp_path: Path) -> None:
    write_batch(tmp_path, 0, '{ "t" : { "1": 7,  "0" : 5 } }')
    assert read_committed_offsets(str(tmp_path)).topic_offsets() == {"t": {0: 5, 1: 7}}


def test_source_without_offset_and_non_kafka_sources(tmp_path: Path) -> None:
    write_batch(tmp_path, 3, "-", "42", '{"logOffset": 3}', '{"t":{"0":8}}')
    found = read_committed_offsets(str(tmp_path))
    assert found.sources == (None, None, None, {"t": {0: 8}})
    assert found.topic_offsets() == {"t": {0: 8}}


def test_two_sources_on_the_same_partition_keep_the_lower_offset(tmp_path: Path) -> None:
    write_batch(tmp_path, 0, '{"t":{"0":8,"1":3}}', '{"t":{"0":5},"u":{"0":1}}')
    assert read_committed_offsets(str(tmp_path)).topic_offsets() == {"t": {0: 5, 1: 3}, "u": {0: 1}}


def test_nothing_committed_yet(tmp_path: Path) -> None:
    write_batch(tmp_path, 0, '{"t":{"0":8}}', committed=False)
    found = read_committed_offsets(str(tmp_path))
    assert (found.batch_id, found.in_flight, found.topic_offsets()) == (None, (0,), {})


def test_a_fresh_checkpoint_with_only_metadata(tmp_path: Path) -> None:
    (tmp_path / "metadata").write_text('{"id":"q"}', encoding="utf-8")
    assert read_committed_offsets(str(tmp_path)).batch_id is None


@pytest.mark.parametrize(
    ("content", "message"),
    [("v9\n{}\n{}", "not supported"), ("{}", "version line"), ('v1\n{}\n{"t": {"0": 1', "not JSON")],
)
def test_malformed_offsets_files_are_errors(tmp_path: Path, content: str, message: str) -> None:
    write_batch(tmp_path, 0, "-")
    (tmp_path / "offsets" / "0").write_text(content, encoding="utf-8")
    with pytest.raises(CheckpointError, match=message):
        read_committed_offsets(str(tmp_path))


def test_missing_checkpoint_and_commit_without_offsets(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no checkpoint"):
        read_committed_offsets(str(tmp_path / "absent"))
    write_batch(tmp_path, 0, '{"t":{"0":1}}')
    (tmp_path / "commits" / "1").write_text("v1\n{}", encoding="utf-8")
    with pytest.raises(CheckpointError, match="without offsets/1"):
        read_committed_offsets(str(tmp_path))


def test_remote_urls_need_fsspec() -> None:
    try:
        import fsspec  # noqa: F401
    except ImportError:
        with pytest.raises(CheckpointError, match="fsspec"):
            read_committed_offsets("s3://bucket/checkpoint")
    else:
        with pytest.raises(CheckpointError):
            read_committed_offsets("memory://absent/checkpoint")
