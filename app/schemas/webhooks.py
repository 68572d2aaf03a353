"""Schemas of webhooks and their deliveries. Requests are strict; a secret is never read back."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.domain.webhook_targets import TargetRefused, check_target
from app.domain.webhooks import ALL_EVENT_TYPES, EventType, secret_key

MAX_URL_LENGTH = 2048
CLUSTER_HELP = "The configured cluster whose deletion events the webhook receives"
URL_HELP = (
    "Where the events are POSTed: an http or https URL without credentials, whitespace or control "
    "characters, whose host the service may reach (never a loopback, private or link-local address unless "
    "the operator opened its network); redirects are not followed"
)
EVENTS_HELP = "The event types it receives (default: all of them)"
KEY_HELP = (
    "The HMAC-SHA256 signing secret, whsec_ and the base64 of 24 to 64 bytes (Standard Webhooks); "
    "omitted: the service generates one and returns it once, in this answer"
)
DeliveryState = Literal["pending", "delivered", "dead"]


def _target(url: str) -> str:
    try:
        return check_target(url)
    except TargetRefused as exc:
        raise ValueError(str(exc)) from None


def _secret(secret: str) -> str:
    secret_key(secret)
    return secret


# What ``check_target`` takes, as far as a pattern says it: http(s), a host without credentials, a port
# other than 0, no fragment, no blank or control character.
URL_SHAPE = "^https?://[A-Za-z0-9.-]+(:[1-9][0-9]{0,3})?([/?][^\\s#\\u0000-\\u001f\\u007f-\\u009f]*)?$"
TargetUrl = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_URL_LENGTH),
    AfterValidator(_target),
    Field(json_schema_extra={"pattern": URL_SHAPE}),
]
# What ``secret_key`` takes: whsec_ and the base64 of 24 to 64 bytes.
_B64 = "[A-Za-z0-9+/]"
_UP_TO_63 = f"(?:{_B64}{{4}}){{8,20}}(?:{_B64}{{2}}==|{_B64}{{3}}=|{_B64}{{4}})?"
_63_OR_64 = f"(?:{_B64}{{4}}){{21}}(?:{_B64}{{2}}==)?"
SECRET_SHAPE = f"^whsec_({_UP_TO_63}|{_63_OR_64})$"
Secret = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200),
    AfterValidator(_secret),
    Field(json_schema_extra={"pattern": SECRET_SHAPE}),
]
Description = Annotated[str, StringConstraints(max_length=255)]
# An event type's name, as JSON gives it (the model is strict otherwise).
EventName = Annotated[EventType, Field(strict=False)]
EventTypes = Annotated[list[EventName], Field(min_length=1, max_length=len(ALL_EVENT_TYPES))]


class WebhookCreate(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    cluster: str = Field(min_length=1, max_length=255, description=CLUSTER_HELP)
    url: TargetUrl = Field(description=URL_HELP)
    event_types: EventTypes = Field(default_factory=lambda: list(ALL_EVENT_TYPES), description=EVENTS_HELP)
    secret: Secret | None = Field(default=None, description=KEY_HELP)
    enabled: bool = Field(default=True, description="Whether events are written for it")
    description: Description = Field(default="", description="What the webhook is for")


class WebhookUpdate(BaseModel):
    """The fields to change; the cluster never changes."""

    model_config = ConfigDict(strict=True, extra="forbid")

    url: TargetUrl | None = Field(default=None, description=URL_HELP)
    event_types: EventTypes | None = Field(default=None, description=EVENTS_HELP)
    secret: Secret | None = Field(
        default=None, description="A new signing secret (whsec_…); deliveries already written sign with it"
    )
    enabled: bool | None = Field(default=None, description="false: no events are written for it")
    description: Description | None = Field(default=None, description="What the webhook is for")


class WebhookRead(BaseModel):
    """A webhook, without its secret."""

    id: str = Field(description="The webhook's id")
    cluster: str = Field(description=CLUSTER_HELP)
    url: str = Field(description=URL_HELP)
    event_types: list[EventType] = Field(description="The event types it receives")
    enabled: bool = Field(description="Whether events are written for it")
    description: str = Field(description="What the webhook is for")
    created_by: str = Field(description="The principal that created it")
    created_at: datetime = Field(description="When it was created")
    updated_at: datetime = Field(description="When it last changed")


class WebhookCreated(WebhookRead):
    """The webhook just created, with its signing secret: shown this once, never again."""

    secret: str = Field(description="The signing secret (whsec_…): keep it, it is not shown again")


class WebhookPage(BaseModel):
    items: list[WebhookRead] = Field(description="The webhooks of the clusters the caller may describe")


class DeliveryRead(BaseModel):
    """One event for one webhook, and how its delivery went."""

    id: int = Field(description="The delivery's id")
    webhook_id: str = Field(description="The webhook it goes to")
    event_id: str = Field(
        description="The CloudEvent's id, also its webhook-id header (receivers dedupe on it)"
    )
    event_type: EventType = Field(description="The event type")
    deletion_id: str = Field(description="The deletion the event is about (the CloudEvent's subject)")
    status: DeliveryState = Field(
        description="pending (waiting for an attempt), delivered (answered 2xx), dead (every attempt failed)"
    )
    attempts: int = Field(description="Attempts made in this round (a retry starts a new round)")
    next_attempt_at: datetime = Field(description="When a pending delivery is attempted next")
    last_status_code: int | None = Field(description="The receiver's last HTTP status, if it answered")
    last_error: str | None = Field(description="Why the last attempt failed")
    created_at: datetime = Field(description="When the event was written")
    delivered_at: datetime | None = Field(description="When the receiver answered 2xx")


class DeliveryPage(BaseModel):
    items: list[DeliveryRead] = Field(description="Deliveries, newest first")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")
