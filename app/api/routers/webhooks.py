"""/v1/webhooks: admin-managed webhooks and their deliveries (``app.services.webhooks``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Response

from app.adapters.db.webhook_models import WebhookDelivery
from app.api.examples import WEBHOOK_EXAMPLES, WEBHOOK_ID_EXAMPLES, WEBHOOK_UPDATE_EXAMPLES
from app.api.pagination import BIG_ID, decode_cursor, encode_cursor, page_limit
from app.api.response_examples import WEBHOOK_CREATED_EXAMPLE
from app.api.routing import RequestIdDep, RuntimeDep, StrictJsonRoute
from app.auth import PrincipalDep
from app.schemas.common import PageLimit, problem_responses
from app.schemas.webhooks import (
    DeliveryPage,
    DeliveryRead,
    DeliveryState,
    WebhookCreate,
    WebhookCreated,
    WebhookPage,
    WebhookRead,
    WebhookUpdate,
)
from app.services.webhooks import admin, deliveries
from app.services.webhooks.admin import webhook_read

router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"], route_class=StrictJsonRoute)

WebhookPath = Annotated[
    str,
    Path(min_length=1, max_length=36, description="The webhook's id", openapi_examples=WEBHOOK_ID_EXAMPLES),
]
DeliveryPath = Annotated[int, Path(ge=1, le=BIG_ID.high, description="The delivery's id")]


def delivery_read(delivery: WebhookDelivery) -> DeliveryRead:
    return DeliveryRead.model_validate(delivery, from_attributes=True)


@router.post(
    "",
    status_code=201,
    response_model=WebhookCreated,
    responses={
        **problem_responses(401, 403, 404, 413, 415, 422),
        201: {"content": {"application/json": {"example": WEBHOOK_CREATED_EXAMPLE}}},
    },
)
async def create_webhook(
    body: Annotated[WebhookCreate, Body(openapi_examples=WEBHOOK_EXAMPLES)],
    response: Response,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> WebhookCreated:
    """Create a webhook for a cluster's deletion events (needs ALTER on that CLUSTER); the answer holds
    its signing secret, shown this once."""
    webhook, secret = await admin.create_webhook(runtime, principal, body, request_id=request_id)
    response.headers["Location"] = f"/v1/webhooks/{webhook.id}"
    return WebhookCreated(**webhook_read(webhook).model_dump(), secret=secret)


@router.get("", response_model=WebhookPage, responses=problem_responses(401, 422))
async def list_webhooks(
    principal: PrincipalDep,
    runtime: RuntimeDep,
    cluster: Annotated[
        str | None, Query(min_length=1, max_length=255, description="Only this cluster's webhooks")
    ] = None,
) -> WebhookPage:
    """List the webhooks of the clusters on which the caller has DESCRIBE on CLUSTER."""
    found = await admin.list_webhooks(runtime, principal, cluster)
    return WebhookPage(items=[webhook_read(w) for w in found])


@router.get("/{webhook_id}", response_model=WebhookRead, responses=problem_responses(401, 404, 422))
async def get_webhook(webhook_id: WebhookPath, principal: PrincipalDep, runtime: RuntimeDep) -> WebhookRead:
    """Read a webhook, without its secret (needs DESCRIBE on its CLUSTER)."""
    return webhook_read(await admin.visible_webhook(runtime, principal, webhook_id))


@router.patch(
    "/{webhook_id}", response_model=WebhookRead, responses=problem_responses(401, 403, 404, 413, 415, 422)
)
async def update_webhook(
    webhook_id: WebhookPath,
    body: Annotated[WebhookUpdate, Body(openapi_examples=WEBHOOK_UPDATE_EXAMPLES)],
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> WebhookRead:
    """Change a webhook's URL, event types, secret or enabled flag (needs ALTER on its CLUSTER)."""
    webhook = await admin.update_webhook(runtime, principal, webhook_id, body, request_id=request_id)
    return webhook_read(webhook)


@router.delete("/{webhook_id}", status_code=204, responses=problem_responses(401, 403, 404, 422))
async def delete_webhook(
    webhook_id: WebhookPath, principal: PrincipalDep, runtime: RuntimeDep, request_id: RequestIdDep
) -> Response:
    """Delete a webhook and its pending deliveries (needs ALTER on its CLUSTER)."""
    await admin.delete_webhook(runtime, principal, webhook_id, request_id=request_id)
    return Response(status_code=204)


@router.get(
    "/{webhook_id}/deliveries", response_model=DeliveryPage, responses=problem_responses(401, 404, 422)
)
async def list_deliveries(
    webhook_id: WebhookPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    status: Annotated[DeliveryState | None, Query(description="Only deliveries in this state")] = None,
    cursor: Annotated[
        str | None, Query(max_length=512, description="The next_cursor of the previous page")
    ] = None,
    limit: PageLimit = None,
) -> DeliveryPage:
    """The webhook's deliveries, newest first: pending, delivered or dead (needs DESCRIBE on its CLUSTER)."""
    size = page_limit(runtime, limit)
    before = decode_cursor(cursor, BIG_ID)[0] if cursor is not None else None
    rows = await deliveries.list_deliveries(
        runtime, principal, webhook_id, status=status, before=before, limit=size
    )
    return DeliveryPage(
        items=[delivery_read(d) for d in rows],
        next_cursor=encode_cursor(rows[-1].id) if len(rows) == size else None,
    )


@router.post(
    "/{webhook_id}/deliveries/{delivery_id}/retry",
    status_code=202,
    response_model=DeliveryRead,
    responses=problem_responses(401, 403, 404, 422),
)
async def retry_delivery(
    webhook_id: WebhookPath,
    delivery_id: DeliveryPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> DeliveryRead:
    """Deliver again now: a dead or delivered delivery gets a fresh round of attempts (needs ALTER on the
    webhook's CLUSTER)."""
    delivery = await deliveries.retry_delivery(
        runtime, principal, webhook_id, delivery_id, request_id=request_id
    )
    return delivery_read(delivery)
