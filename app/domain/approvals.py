"""Four-eyes approval: which rules protect a deletion's topics, what they require together, and who may
approve.

A rule protects the topics its ``TopicSelector`` matches. A deletion touching protected topics needs the
approval of ``required`` distinct principals, each an approver of EVERY matching rule (the strictest
rule's count and wait apply), before the executor may send it. The requester never approves their own
request: not as their user principal, and not through a ``Group:`` the requester belongs to as well
(approving as such a group would let the requester's own membership vouch for the request).

A rule protects its topics against every way records are deleted: a direct deletion and a retention
policy's sweeps alike, unless an administrator exempts the rule from a way explicitly (``Exemption``).

The requester's groups are those recorded when they asked together with those the identity provider
reports for them now; when neither is known (the requester's tokens never carried a groups claim), no one
approves through a group, since it might be one of the requester's: only listed users do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from app.domain.topic_patterns import TopicSelector

MIN_REQUIRED = 1
MAX_REQUIRED = 5


class Decision(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"


class ApprovalStatus(StrEnum):
    """An approval request's status: what its subject (a deletion or a retention policy) waits for."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class SubjectKind(StrEnum):
    DELETION = "deletion"
    POLICY = "policy"


class Exemption(StrEnum):
    """A way of deleting records, other than a direct deletion, that a rule may be exempted from (an
    administrator's explicit choice): ``retention``, a retention policy's sweeps."""

    RETENTION = "retention"


@dataclass(frozen=True)
class ApprovalRule:
    """One rule of a cluster: its topics, approver principals (``User:x`` / ``Group:y``), how many
    approvals it needs, how long a request may wait, and the ways of deleting it does not cover."""

    name: str
    topics: TopicSelector
    approvers: tuple[str, ...]
    required: int
    expires_after_seconds: int
    exemptions: frozenset[Exemption] = frozenset()


@dataclass(frozen=True)
class RuleSnapshot:
    """A matching rule as it stood when the request was made (stored with the request)."""

    name: str
    approvers: tuple[str, ...]
    required: int


@dataclass(frozen=True)
class Requirement:
    """What a protected request needs: the matching rules, the approvals count, the longest wait."""

    rules: tuple[RuleSnapshot, ...]
    required: int
    expires_after_seconds: int


def matching_rules(
    rules: Iterable[ApprovalRule], topics: Sequence[str], *, via: Exemption | None = None
) -> list[ApprovalRule]:
    """The rules protecting any of ``topics`` against a deletion made ``via`` a way other than a direct
    deletion (None: a direct deletion, which no rule is exempted from)."""
    return [
        rule for rule in rules if via not in rule.exemptions and any(rule.topics.matches(t) for t in topics)
    ]


def requirement(rules: Sequence[ApprovalRule]) -> Requirement | None:
    """What ``rules`` require together (None when no rule matched: nothing to approve)."""
    if not rules:
        return None
    snapshots = tuple(RuleSnapshot(r.name, r.approvers, r.required) for r in rules)
    return Requirement(
        snapshots,
        required=max(r.required for r in rules),
        expires_after_seconds=min(r.expires_after_seconds for r in rules),
    )


@dataclass(frozen=True)
class Requester:
    """Who asked: their user principal and every group they are known to belong to (recorded when they
    asked, and reported for them since); ``groups_known`` is False when nothing ever reported them."""

    principal: str  # ``User:x``
    groups: tuple[str, ...]  # group names, without ``Group:``
    groups_known: bool = True


def approving_identities(approvers: Sequence[str], caller: Sequence[str], requester: Requester) -> list[str]:
    """Which of the caller's principals (``User:x``, then ``Group:y``) approve as one of ``approvers``,
    leaving out the requester's own user and every group the requester belongs to (every group at all
    when the requester's groups are unknown)."""
    if caller and caller[0] == requester.principal:
        return []
    excluded = {requester.principal, *(f"Group:{g}" for g in requester.groups)}
    listed = set(approvers)
    return [
        name
        for name in caller
        if name in listed and name not in excluded and (requester.groups_known or name.startswith("User:"))
    ]


def refusal(rules: Sequence[RuleSnapshot], caller: Sequence[str], requester: Requester) -> str | None:
    """Why the caller may not approve (None: they may); ``caller[0]`` is their user principal."""
    if caller and caller[0] == requester.principal:
        return "the requester cannot approve their own request"
    for rule in rules:
        if not approving_identities(rule.approvers, caller, requester):
            if any(name in rule.approvers for name in caller) and not requester.groups_known:
                return (
                    f"rule {rule.name!r} lists you only through a group, and the requester's groups are "
                    "unknown (their token carried no groups claim): only a listed user may approve"
                )
            if any(name in rule.approvers for name in caller):
                return (
                    f"rule {rule.name!r} lists you only through a group the requester also belongs to; "
                    "the requester cannot approve their own request"
                )
            return f"you are not an approver of rule {rule.name!r}"
    return None
