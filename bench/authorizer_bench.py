"""Authorizer benchmark: indexed decisions against a linear scan of every binding, in the same run.

Bindings are a realistic mix for a multi-team cluster: mostly LITERAL topic bindings and PREFIXED
team/service prefixes (``team042.`` / ``team042.svc07.``), some GROUP and CLUSTER bindings, about 10 %
DENY, a few ``User:*`` principals, a few LITERAL ``*`` resources, a few host-specific bindings. Callers
hold a user principal plus one or two group principals and mostly ask DELETE or DESCRIBE on an existing
topic or on a new topic under an existing prefix. Every scanned question is also answered by the index,
and the two answers must agree.

Figures are CPU time (``time.process_time``) per decision in the best of ``--rounds`` rounds: the
machine is shared, and wall-clock time would mostly measure the other processes.
Targets (issue 4): <= 20 us per decision at 100,000 bindings and >= 50x the scan.

Run: .venv/bin/python bench/authorizer_bench.py [--sizes 1000 10000 100000] [--queries 20000]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from app.domain.acl import (
    CLUSTER_RESOURCE_NAME,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)
from app.domain.authorizer import Authorizer, operation_matches

Question = tuple[list[str], str, Operation, ResourceType, str]
HOSTS = [f"10.1.0.{i}" for i in range(1, 9)]
TARGET_US = 20.0
TARGET_SPEEDUP = 50.0


class World:
    """Teams, their services and topics, users and groups, sized to the number of bindings."""

    def __init__(self, size: int, rng: random.Random) -> None:
        self.rng = rng
        self.teams = max(5, size // 200)
        self.users = max(20, size // 20)
        self.groups = max(5, size // 400)

    def team(self) -> int:
        return self.rng.randrange(self.teams)

    def topic(self) -> str:
        r = self.rng
        return f"team{self.team():03d}.svc{r.randrange(10):02d}.events-{r.randrange(20)}"

    def prefix(self) -> str:
        if self.rng.random() < 0.3:
            return f"team{self.team():03d}."
        return f"team{self.team():03d}.svc{self.rng.randrange(10):02d}."

    def principal(self) -> str:
        roll = self.rng.random()
        if roll < 0.02:
            return "User:*"
        if roll < 0.3:
            return f"Group:g{self.rng.randrange(self.groups)}"
        return f"User:u{self.rng.randrange(self.users)}"

    def caller(self) -> list[str]:
        groups = [f"Group:g{self.rng.randrange(self.groups)}" for _ in range(self.rng.randint(1, 2))]
        return [f"User:u{self.rng.randrange(self.users)}", *groups]


def make_binding(world: World) -> AclBinding:
    r = world.rng
    roll = r.random()
    pattern, resource_type = PatternType.LITERAL, ResourceType.TOPIC
    if roll < 0.55:
        name = world.topic()
    elif roll < 0.85:
        name, pattern = world.prefix(), PatternType.PREFIXED
    elif roll < 0.87:
        name = "*"
    elif roll < 0.98:
        name, resource_type = f"team{world.team():03d}.consumer-{r.randrange(5)}", ResourceType.GROUP
    else:
        name, resource_type = CLUSTER_RESOURCE_NAME, ResourceType.CLUSTER
    operation = r.choice(
        [Operation.DELETE, Operation.READ, Operation.WRITE, Operation.DESCRIBE, Operation.ALL]
    )
    permission = Permission.DENY if r.random() < 0.1 else Permission.ALLOW
    host = r.choice(HOSTS) if r.random() < 0.05 else "*"
    return AclBinding(world.principal(), host, operation, permission, resource_type, name, pattern)


def make_question(world: World) -> Question:
    r = world.rng
    name = world.topic() if r.random() < 0.7 else f"{world.prefix()}new-{r.randrange(1000)}"
    operation = r.choice([Operation.DELETE, Operation.DELETE, Operation.DESCRIBE, Operation.READ])
    return world.caller(), r.choice(HOSTS), operation, ResourceType.TOPIC, name


def scan_authorize(bindings: Sequence[AclBinding], super_users: frozenset[str], question: Question) -> bool:
    """The naive way: look at every binding for every decision."""
    principals, host, operation, resource_type, name = question
    if any(p in super_users for p in principals):
        return True
    found = allowed = False
    for b in bindings:
        if b.resource_type != resource_type:
            continue
        if b.pattern_type == PatternType.LITERAL:
            if b.resource_name != name and b.resource_name != "*":
                continue
        elif not name.startswith(b.resource_name):
            continue
        found = True
        if b.principal != "User:*" and b.principal not in principals:
            continue
        if (b.host == "*" or b.host == host) and operation_matches(b, operation):
            if b.permission == Permission.DENY:
                return False
            allowed = True
    return allowed if found else False


def best_seconds_per_call(run: Callable[[], None], calls: int, rounds: int) -> float:
    """CPU seconds per call in the best round: other processes on the machine do not count."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best / calls


def measure(size: int, queries: int, rounds: int, seed: int) -> dict[str, float]:
    world = World(size, random.Random(seed))
    bindings = list(dict.fromkeys(make_binding(world) for _ in range(size)))
    super_users = frozenset({"User:admin"})
    start = time.process_time()
    authorizer = Authorizer(bindings, super_users)
    build_s = time.process_time() - start
    start = time.process_time()
    authorizer.with_changes(added=[make_binding(world)], removed=bindings[:1])
    rebuild_s = time.process_time() - start

    asked = [make_question(world) for _ in range(queries)]
    scan_count = max(20, min(queries, 2_000_000 // len(bindings)))
    scanned = asked[:scan_count]
    for question in scanned:
        assert authorizer.authorize(*question).allowed == scan_authorize(bindings, super_users, question)

    def indexed() -> None:
        for question in asked:
            authorizer.authorize(*question)

    def linear() -> None:
        for question in scanned:
            scan_authorize(bindings, super_users, question)

    allowed = sum(authorizer.authorize(*q).allowed for q in asked) / len(asked)
    return {
        "bindings": len(bindings),
        "indexed_s": best_seconds_per_call(indexed, len(asked), rounds),
        "scan_s": best_seconds_per_call(linear, len(scanned), rounds),
        "build_s": build_s,
        "scanned": len(scanned),
        "rebuild_s": rebuild_s,
        "allowed": allowed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    header = (
        f"{'bindings':>9} | {'indexed us':>10} | {'indexed dec/s':>13} | {'scan us':>9} | {'scan dec/s':>10} "
        f"| {'speed-up':>8} | {'build s':>7} | {'change s':>8} | {'allowed':>7} | target"
    )
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        m = measure(size, args.queries, args.rounds, args.seed)
        indexed_us, scan_us = m["indexed_s"] * 1e6, m["scan_s"] * 1e6
        speedup = scan_us / indexed_us
        target = ""
        if size >= 100_000:
            met = indexed_us <= TARGET_US and speedup >= TARGET_SPEEDUP
            target = f"<= {TARGET_US:.0f} us, >= {TARGET_SPEEDUP:.0f}x: {'met' if met else 'MISSED'}"
        print(
            f"{int(m['bindings']):>9,} | {indexed_us:>10.2f} | {1e6 / indexed_us:>13,.0f} | {scan_us:>9.0f} "
            f"| {1e6 / scan_us:>10,.0f} | {speedup:>7,.0f}x | {m['build_s']:>7.2f} | {m['rebuild_s']:>8.2f} "
            f"| {m['allowed']:>6.0%} "
            f"| {target}"
        )
    print("build s: CPU to build the index; change s: with_changes adding and removing one binding")
    print("allowed: share of the questions allowed; every scanned question got the same answer from both")


if __name__ == "__main__":
    main()
