"""Schemas of webhooks and their deliveries. Requests are strict; a secret is never read back."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.domain.webhook_events import ALL_EVENT_TYPES, EventType, secret_key
from app.domain.webhook_targets import TargetRefused, check_target

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


# The characters ``parse_target`` refuses anywhere in a URL: whitespace and the categories Cc, Cf, Zl, Zp
# and Zs, as first and last code point of each run (Unicode 14, Python 3.11's tables; a unit test
# compares them with ``unicodedata``).
REFUSED_CHARACTERS = (
    (0x0000, 0x0020), (0x007F, 0x00A0), (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C),
    (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x1680, 0x1680),
    (0x180E, 0x180E), (0x2000, 0x200F), (0x2028, 0x202F), (0x205F, 0x2064), (0x2066, 0x206F),
    (0x3000, 0x3000), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)  # fmt: skip


def _character(code: int) -> str:
    """A code point in a pattern's class: escaped in the BMP, itself beyond (JSON Schema's and Python's
    regular expressions share no escape for it)."""
    return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)


_REFUSED_CLASS = "".join(
    _character(first) if first == last else f"{_character(first)}-{_character(last)}"
    for first, last in REFUSED_CHARACTERS
)
# What ``check_target`` takes, as far as a pattern says it: http(s), a host of DNS labels (or IPv4
# digits) without credentials, a port other than 0, no fragment, none of the refused characters.
_HOST_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"  # a DNS label: no hyphen at either end
URL_SHAPE = (
    f"^https?://{_HOST_LABEL}(?:\\.{_HOST_LABEL})*\\.?(:[1-9][0-9]{{0,3}})?([/?][^#{_REFUSED_CLASS}]*)?$"
)
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
