"""Plays the scenarios (``scenarios.yaml``) on both targets and compares what each step observed.

A scenario is ``{name, topic: {partitions, replication_factor, configs}, steps: [{action: args}]}``;
``$topic`` in any string argument is the scenario's topic (``referee-<name>``). Topics are created
before the scenarios run, in one CreateTopics per target through confluent-kafka's Admin client.
Scenarios run one after another (a follower's fetch is woken by any append to its leader, so a timing
scenario must have its brokers to itself), each on both targets at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from confluent_kafka.admin import AdminClient, NewTopic

from helpers.referee import cluster_actions, group_actions, log_actions
from helpers.referee.compare import Allowance, Verdict, judge
from helpers.referee.session import Session
from helpers.referee.targets import Target

Action = Callable[..., Awaitable[dict[str, Any]]]
ACTIONS: dict[str, Action] = {
    name: getattr(module, name)
    for module in (log_actions, cluster_actions, group_actions)
    for name in dir(module)
    if not name.startswith("_") and asyncio.iscoroutinefunction(getattr(module, name))
}


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: list[dict[str, dict[str, Any]]]
    topic: dict[str, Any] | None = field(default_factory=dict)

    @property
    def topic_name(self) -> str:
        return f"referee-{self.name}"


def load_scenarios(path: Path) -> list[Scenario]:
    scenarios = [Scenario(**raw) for raw in yaml.safe_load(path.read_text())]
    names = [s.name for s in scenarios]
    assert len(names) == len(set(names)), "scenario names must be unique"
    for scenario in scenarios:
        for step in scenario.steps:
            (action,) = step
            assert action in ACTIONS, f"{scenario.name}: unknown action {action}"
    return scenarios


def substitute(value: Any, topic: str) -> Any:
    if isinstance(value, str):
        return value.replace("$topic", topic)
    if isinstance(value, list):
        return [substitute(v, topic) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, topic) for k, v in value.items()}
    return value


def create_topics(target: Target, scenarios: list[Scenario]) -> None:
    new = [
        NewTopic(
            s.topic_name,
            s.topic.get("partitions", 1),
            s.topic.get("replication_factor", 3),
            config={k: str(v) for k, v in s.topic.get("configs", {}).items()},
        )
        for s in scenarios
        if s.topic is not None
    ]
    admin = AdminClient(target.confluent_config())
    for future in admin.create_topics(new, request_timeout=60).values():
        future.result(timeout=120)


async def topics_ready(target: Target, scenarios: list[Scenario], limit_s: float = 60.0) -> None:
    """Until every broker's metadata has a leader for every partition of every scenario topic."""
    wanted = {s.topic_name: s.topic.get("partitions", 1) for s in scenarios if s.topic is not None}
    deadline = time.monotonic() + limit_s
    session = Session(target, "")
    try:
        for broker in target.addresses:
            while True:
                body = {
                    "Topics": [{"Name": t, "TopicId": bytes(16)} for t in wanted],
                    "AllowAutoTopicCreation": False,
                }
                answer = await session.request("Metadata", 12, body, broker)
                led = {
                    t["Name"]: sum(p["LeaderId"] >= 0 for p in t["Partitions"])
                    for t in answer["Topics"]
                    if t["ErrorCode"] == 0
                }
                if all(led.get(name) == count for name, count in wanted.items()):
                    break
                assert time.monotonic() < deadline, f"{target.name}: topics not ready on broker {broker}"
                await asyncio.sleep(0.1)
    finally:
        await session.close()


async def play(target: Target, scenario: Scenario, base_ts: int) -> list[dict[str, Any]]:
    """Each step's observation, in order; a step that raises is observed as its exception's type."""
    session = Session(target, scenario.topic_name, base_ts)
    observed: list[dict[str, Any]] = []
    try:
        for step in scenario.steps:
            ((action, args),) = step.items()
            arguments = substitute(args or {}, scenario.topic_name)
            try:
                answer = await asyncio.wait_for(ACTIONS[action](session, **arguments), 90)
            except Exception as exc:  # the observation is the failure itself
                answer = {"raised": type(exc).__name__}
            observed.append({action: answer})
    finally:
        await session.close()
    return observed


async def referee(
    emulator: Target, kafka: Target, scenarios: list[Scenario], allow_list: list[Allowance]
) -> list[Verdict]:
    """Every scenario on both targets (topics created first), each judged against the allow-list."""
    targets = (emulator, kafka)
    await asyncio.gather(*(target.learn_brokers() for target in targets))
    await asyncio.gather(*(asyncio.to_thread(create_topics, target, scenarios) for target in targets))
    await asyncio.gather(*(topics_ready(target, scenarios) for target in targets))
    verdicts = []
    base_ts = (int(time.time()) - 86_400) * 1000
    for scenario in scenarios:
        began = time.monotonic()
        on_emulator, on_kafka = await asyncio.gather(
            play(emulator, scenario, base_ts), play(kafka, scenario, base_ts)
        )
        verdict = judge(scenario.name, on_emulator, on_kafka, allow_list)
        verdict.seconds = time.monotonic() - began
        verdicts.append(verdict)
    return verdicts
