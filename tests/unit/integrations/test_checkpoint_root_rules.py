"""PURGE_SPARK_CHECKPOINT_ROOTS: which roots may be configured, which locations they admit."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.integrations.spark.checkpoint_roots import CheckpointLocationRefused, parse_checkpoint_roots
from app.settings import SparkSettings


@pytest.mark.parametrize(
    "roots",
    [
        "file:///var/ckpt",
        "http://example.com/ckpt/",
        "relative/ckpt",
        "/var/../etc",
        "s3:///no-bucket",
        "s3://b/?x",
    ],
)
def test_unsafe_roots_are_refused_at_start_up(roots: str) -> None:
    with pytest.raises(ValidationError):
        SparkSettings(checkpoint_roots=roots)


def test_no_roots_means_pull_mode_off() -> None:
    roots = parse_checkpoint_roots(" , ")
    assert not roots.pull_mode
    with pytest.raises(CheckpointLocationRefused, match="pull mode is off"):
        roots.admit("/var/lib/spark/checkpoints/q")


def test_locations_are_admitted_under_a_root(tmp_path: Path) -> None:
    local = tmp_path / "ckpt"
    local.mkdir()
    (local / "inside").symlink_to(local / "q")
    (local / "out").symlink_to(tmp_path)
    roots = parse_checkpoint_roots(f"s3://lake/checkpoints/, {local}/")
    assert roots.admit("s3://lake/checkpoints/q") == "s3://lake/checkpoints/q"
    assert roots.admit(str(local / "q")) == str(local.resolve() / "q")
    assert roots.admit(str(local / "inside")) == str(local.resolve() / "q")
    for location in (
        "s3://lake/checkpoints",
        "s3://lake/checkpointsx/q",
        "s3://lake/checkpoints/%2e%2e/q",
        "s3://lake/checkpoints/q#frag",
        "S3://lake/checkpoints/q",
        str(local),
        str(local / "out"),
        str(local / "out" / "elsewhere"),
        f"{local}/./q",
    ):
        with pytest.raises(CheckpointLocationRefused):
            roots.admit(location)
