"""Schemas of four-eyes approval: approval rules, decisions, and what waits for approval. Requests are
strict."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, StringConstraints, model_validator

from app.domain.approvals import MAX_REQUIRED, MIN_REQUIRED, ApprovalStatus, Decision, Exemption, SubjectKind
from app.schemas.consumers import NAME_PATTERN
from app.schemas.selection import exactly_one
from app.schemas.topic_selectors import TopicSelectors

RuleName = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NAME_PATTERN)]
ApproverName = Annotated[
    str, StringConstraints(min_length=6, max_length=512, pattern=r"^(User|Group):[^\s*][^\s]*$")
]
# A JSON string names the enum member (strict mode takes only enum instances otherwise).
ExemptWay = Annotated[Exemption, Strict(False)]
MAX_EXPIRES_AFTER = 30 * 86400

TOPICS_HELP = "The topics it protects: exactly one of prefix, regex (RE2, full match) or names"
APPROVERS_HELP = "Who may approve: `User:<name>` or `Group:<name>` principals (the requester never counts)"
REQUIRED_HELP = f"How many distinct principals must approve ({MIN_REQUIRED}-{MAX_REQUIRED})"
EXPIRES_HELP = "How long a request may wait for approval, in seconds; then it is `expired`"
EXEMPTIONS_HELP = (
    "The ways of deleting this rule does NOT cover (an explicit, audited exemption; empty: every way). "
    "`retention`: retention policies over these topics run without approval. Without it a policy waits "
    "for approval when it is created, widened, or first sweeps a protected topic its last approval did not "
    "cover; the sweeps of an approved policy run unattended"
)
UNCHANGED = "Omit to keep it. "


class RuleTopics(TopicSelectors):
    """Exactly one of ``prefix``, ``regex`` (RE2 syntax, full match) or ``names``, as a retention policy's."""

    model_config = ConfigDict(
        strict=True, extra="forbid", json_schema_extra=exactly_one("prefix", "regex", "names")
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> RuleTopics:
        if self.chosen() != 1:
            raise ValueError("give exactly one of prefix, regex or names")
        self.check_regex()
        return self


class ApprovalRuleCreate(BaseModel):
    """A new approval rule of the cluster."""

    model_config = ConfigDict(strict=True, extra="forbid")

    name: RuleName = Field(description="The rule's name, unique in the cluster")
    topics: RuleTopics = Field(description=TOPICS_HELP)
    approvers: list[ApproverName] = Field(min_length=1, max_length=100, description=APPROVERS_HELP)
    required_approvals: int = Field(default=1, ge=MIN_REQUIRED, le=MAX_REQUIRED, description=REQUIRED_HELP)
    expires_after_seconds: int = Field(default=86_400, ge=1, le=MAX_EXPIRES_AFTER, description=EXPIRES_HELP)
    exemptions: list[ExemptWay] = Field(
        default_factory=list, max_length=len(Exemption), description=EXEMPTIONS_HELP
    )


class ApprovalRuleUpdate(BaseModel):
    """Changes to an approval rule; requests already waiting keep the rule's approvers as they were when
    made unless the rule still exists (its current approvers decide)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    topics: RuleTopics | None = Field(default=None, description=UNCHANGED + TOPICS_HELP)
    approvers: list[ApproverName] | None = Field(
        default=None, min_length=1, max_length=100, description=UNCHANGED + APPROVERS_HELP
    )
    required_approvals: int | None = Field(
        default=None, ge=MIN_REQUIRED, le=MAX_REQUIRED, description=UNCHANGED + REQUIRED_HELP
    )
    expires_after_seconds: int | None = Field(
        default=None, ge=1, le=MAX_EXPIRES_AFTER, description=UNCHANGED + EXPIRES_HELP
    )
    exemptions: list[ExemptWay] | None = Field(
        default=None, max_length=len(Exemption), description=UNCHANGED + EXEMPTIONS_HELP
    )


class ApprovalRuleRead(BaseModel):
    """An approval rule."""

    cluster: str = Field(description="The cluster")
    name: str = Field(description="The rule's name")
    topics: dict[str, Any] = Field(description=TOPICS_HELP)
    approvers: list[str] = Field(description=APPROVERS_HELP)
    required_approvals: int = Field(description=REQUIRED_HELP)
    expires_after_seconds: int = Field(description=EXPIRES_HELP)
    exemptions: list[Exemption] = Field(description=EXEMPTIONS_HELP)
    created_by: str = Field(description="Who created it")
    created_at: datetime = Field(description="When it was created")
    updated_at: datetime = Field(description="When it last changed")


class ApprovalRulePage(BaseModel):
    """The approval rules of a cluster."""

    items: list[ApprovalRuleRead] = Field(description="The rules, by name")


class ApprovalCreate(BaseModel):
    """One approver's decision."""

    model_config = ConfigDict(strict=True, extra="forbid")

    decision: Decision = Field(
        strict=False, description="`approve` or `reject` (a rejection ends the request)"
    )
    comment: str = Field(default="", max_length=2000, description="Why; kept in the audit trail")


class DecisionRead(BaseModel):
    """A decision taken on an approval request."""

    principal: str = Field(description="Who decided")
    approved_as: list[str] = Field(description="The approver principals of the rules they decided as")
    decision: Decision = Field(description="approve or reject")
    comment: str = Field(description="Their comment")
    decided_at: datetime = Field(description="When")


class ApprovalRead(BaseModel):
    """What a protected deletion or retention policy waits for, and the decisions taken."""

    subject_kind: SubjectKind = Field(description="`deletion` or `policy`")
    deletion_id: str | None = Field(description="The deletion (null for a policy)")
    policy: str | None = Field(description="The retention policy's name (null for a deletion)")
    cluster: str = Field(description="The cluster")
    requester: str = Field(description="Who asked (never an approver of their own request)")
    status: ApprovalStatus = Field(description="pending, approved, rejected, expired or cancelled")
    rules: list[str] = Field(description="The approval rules the request matched")
    topics: list[str] = Field(description="The topics it touches (a policy: those it covers now)")
    required_approvals: int = Field(description="How many distinct principals must approve")
    approvals: int = Field(description="How many approved so far")
    created_at: datetime = Field(description="When approval was asked for")
    expires_at: datetime = Field(description="When it expires unless approved")
    decided_at: datetime | None = Field(description="When it was approved, rejected, expired or cancelled")
    decisions: list[DecisionRead] = Field(description="Every decision, oldest first")
    preview: dict[str, Any] | None = Field(
        description=(
            "A deletion's frozen preview: records per partition (resolved offset, log start offset and high "
            "watermark when it was asked) and the consumer groups with unread records; what approvers approve"
        )
    )


class ApprovalPage(BaseModel):
    """Approval requests."""

    items: list[ApprovalRead] = Field(description="Oldest first")
