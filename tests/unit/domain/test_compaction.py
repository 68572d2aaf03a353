from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.domain.compaction import NEVER_MS, CompactionConfig, Outlook, forecast, lag_for_deadline

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
DAY_MS = 86_400_000


def test_a_topic_with_kafkas_defaults_compacts_only_when_its_traffic_makes_it_dirty() -> None:
    config = CompactionConfig.of({"cleanup.policy": "compact"})
    assert config.max_compaction_lag_ms == NEVER_MS
    result = forecast(config, NOW)
    assert result.outlook is Outlook.TRAFFIC
    assert result.roll_at == NOW + timedelta(days=7)  # segment.ms
    assert result.compacted_by is None


def test_a_delete_policy_topic_is_never_compacted() -> None:
    result = forecast(CompactionConfig.of({}), NOW)
    assert result.outlook is Outlook.NOT_COMPACTED
    assert result.roll_at is None


def test_max_compaction_lag_rolls_the_segment_and_bounds_the_clean() -> None:
    config = CompactionConfig.of(
        {
            "cleanup.policy": "compact,delete",
            "max.compaction.lag.ms": str(DAY_MS),
            "min.compaction.lag.ms": "3600000",
        }
    )
    result = forecast(config, NOW, cleaner_backoff_ms=15_000)
    assert result.outlook is Outlook.BOUNDED
    assert result.roll_at == NOW + timedelta(days=1)  # min(segment.ms, max.compaction.lag.ms)
    assert result.compacted_by == NOW + timedelta(days=1, hours=1, seconds=15)
    # delete.retention.ms (a day), a further roll and a further back-off
    assert result.tombstone_removed_by == NOW + timedelta(days=3, hours=1, seconds=30)


def test_a_record_appended_late_rolls_the_segment_late() -> None:
    config = CompactionConfig.of({"cleanup.policy": "compact", "max.compaction.lag.ms": "60000"})
    late = NOW + timedelta(hours=2)
    result = forecast(config, NOW, appended_at=late, cleaner_backoff_ms=0)
    assert result.compacted_by == late
    early = forecast(config, NOW, appended_at=NOW, cleaner_backoff_ms=0)
    assert early.compacted_by == NOW + timedelta(minutes=1)


def test_the_lag_for_a_deadline_has_the_forecast_halfway_there() -> None:
    config = CompactionConfig.of({"cleanup.policy": "compact", "min.compaction.lag.ms": "60000"})
    deadline = NOW + timedelta(days=30)
    lag_ms = lag_for_deadline(config, NOW, deadline, cleaner_backoff_ms=15_000)
    assert lag_ms is not None
    tightened = CompactionConfig.of(
        {"cleanup.policy": "compact", "min.compaction.lag.ms": "60000", "max.compaction.lag.ms": str(lag_ms)}
    )
    compacted_by = forecast(tightened, NOW, cleaner_backoff_ms=15_000).compacted_by
    assert compacted_by is not None
    assert NOW + timedelta(days=14) < compacted_by <= NOW + timedelta(days=15)


def test_a_deadline_too_close_for_any_lag_has_none() -> None:
    config = CompactionConfig.of({"cleanup.policy": "compact", "min.compaction.lag.ms": "60000"})
    assert lag_for_deadline(config, NOW, NOW + timedelta(seconds=90)) is None
