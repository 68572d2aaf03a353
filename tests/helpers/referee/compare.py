"""Compares what a scenario observed on the emulator and on Kafka, path by path, against the reviewed
allow-list (``allow_list.yaml``: each entry names a scenario, the differing paths as glob patterns, and
why the difference is accepted)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import yaml

MISSING = "<missing>"


@dataclass(frozen=True)
class Allowance:
    scenario: str
    paths: list[str]
    reason: str


@dataclass
class Verdict:
    scenario: str
    differences: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # path -> (emulator, kafka)
    allowed: list[Allowance] = field(default_factory=list)
    unexplained: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    seconds: float = 0.0


def load_allow_list(path: Path) -> list[Allowance]:
    entries = [Allowance(**raw) for raw in yaml.safe_load(path.read_text())]
    for entry in entries:
        assert entry.reason.strip(), f"{entry.scenario}: an allowance needs its reason"
    return entries


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        items: dict[str, Any] = {}
        for key, inner in value.items():
            items.update(flatten(inner, f"{prefix}/{key}"))
        return items or {prefix: {}}
    if isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        items = {}
        for index, inner in enumerate(value):
            items.update(flatten(inner, f"{prefix}/{index}"))
        return items
    return {prefix: value}


def judge(scenario: str, emulator: Any, kafka: Any, allow_list: list[Allowance]) -> Verdict:
    left, right = flatten(emulator), flatten(kafka)
    verdict = Verdict(scenario)
    for path in sorted(set(left) | set(right)):
        pair = (left.get(path, MISSING), right.get(path, MISSING))
        if pair[0] != pair[1]:
            verdict.differences[path] = pair
    entries = [a for a in allow_list if a.scenario == scenario]
    for path, pair in verdict.differences.items():
        covering = [a for a in entries if any(fnmatch(path, pattern) for pattern in a.paths)]
        if not covering:
            verdict.unexplained[path] = pair
        for allowance in covering:
            if allowance not in verdict.allowed:
                verdict.allowed.append(allowance)
    return verdict


def stale(allow_list: list[Allowance], verdicts: list[Verdict]) -> list[Allowance]:
    """Allowances that excused nothing: the difference they describe is gone (or the entry is wrong)."""
    used = [a for v in verdicts for a in v.allowed]
    return [a for a in allow_list if a not in used]


def summary(verdicts: list[Verdict], seconds: float) -> str:
    identical = [v for v in verdicts if not v.differences]
    allowed = [v for v in verdicts if v.differences and not v.unexplained]
    failed = [v for v in verdicts if v.unexplained]
    lines = [
        f"referee: {len(verdicts)} scenarios on the emulator and on Kafka in {seconds:.1f} s: "
        f"{len(identical)} identical, {len(allowed)} allow-listed, {len(failed)} unexplained"
    ]
    slowest = sorted(verdicts, key=lambda v: -v.seconds)[:3]
    lines.append("  slowest: " + ", ".join(f"{v.scenario} {v.seconds:.1f} s" for v in slowest))
    for verdict in allowed:
        for allowance in verdict.allowed:
            lines.append(f"  allow-listed {verdict.scenario}: {allowance.reason.strip()}")
    for verdict in failed:
        for path, (emulator, kafka) in verdict.unexplained.items():
            lines.append(f"  DIFFERENT {verdict.scenario}{path}: emulator {emulator!r}, kafka {kafka!r}")
    return "\n".join(lines)
