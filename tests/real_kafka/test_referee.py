"""The differential referee: the Kafka emulator (the embedded default of ``make run`` and the fast tests)
answers every scenario of ``referee/scenarios.yaml`` as the real Apache Kafka cluster does, through real
clients (aiokafka, confluent-kafka) and raw requests where a client hides a field. A difference fails the
test unless ``referee/allow_list.yaml`` explains it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from helpers.kafka_cluster import KafkaCluster
from helpers.referee.compare import load_allow_list, stale, summary
from helpers.referee.play import load_scenarios, referee
from helpers.referee.targets import emulator_target, real_target

HERE = Path(__file__).parent / "referee"


@pytest.mark.timeout(300)
def test_the_emulator_answers_as_kafka_does(
    kafka_cluster: KafkaCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = load_scenarios(HERE / "scenarios.yaml")
    allow_list = load_allow_list(HERE / "allow_list.yaml")
    began = time.monotonic()
    with emulator_target(tmp_path) as emulator:
        verdicts = asyncio.run(referee(emulator, real_target(kafka_cluster), scenarios, allow_list))
    with capsys.disabled():
        print("\n" + summary(verdicts, time.monotonic() - began))
    assert len(verdicts) >= 40
    assert not [v.scenario for v in verdicts if v.unexplained]
    assert not stale(allow_list, verdicts), "allow-list entries that excuse no difference"
