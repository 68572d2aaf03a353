"""Erasure certificates of finished deletions, and the public keys that verify them."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.api.response_examples import CERTIFICATE_EXAMPLE, SIGNING_KEYS_EXAMPLE
from app.api.routers.deletions import DeletionId
from app.api.routing import DatabaseRoute, RuntimeDep
from app.auth import PrincipalDep
from app.certificates import MEDIA_TYPE
from app.schemas.certificates import SigningKeysRead
from app.schemas.common import problem_responses
from app.services import certificates

router = APIRouter(tags=["certificates"], route_class=DatabaseRoute)


@router.get(
    "/v1/deletions/{deletion_id}/certificate",
    response_class=Response,
    responses={
        200: {
            "description": "The certificate: a compact JWS signed with the service's signing key",
            "content": {MEDIA_TYPE: {"schema": {"type": "string"}, "example": CERTIFICATE_EXAMPLE}},
        },
        **problem_responses(401, 404, 409, 422),
    },
    description=(
        "A signed erasure certificate of a finished deletion (succeeded, partially_failed, failed or "
        "cancelled; 409 before, and when the service has no signing key): a compact JWS whose header "
        "names the signing key (`kid`) and whose claims carry the deletion, its requester, approvers and "
        "reason, every partition's resolved offset and the offsets Kafka answered after the deletion, the "
        "audit chain position and hash of the events that requested and completed it, and the time of "
        "issue. Verify it offline with the keys at `/signing-keys` (`kafka-purge certificate verify`)."
    ),
)
async def get_certificate(deletion_id: DeletionId, principal: PrincipalDep, runtime: RuntimeDep) -> Response:
    """A signed erasure certificate of a finished deletion (JWS, application/jose)."""
    token = await certificates.issue_certificate(runtime, principal, deletion_id)
    return Response(token, media_type=MEDIA_TYPE)


@router.get(
    "/signing-keys",
    response_model=SigningKeysRead,
    responses={200: {"content": {"application/json": {"example": SIGNING_KEYS_EXAMPLE}}}},
)
async def signing_keys(runtime: RuntimeDep) -> SigningKeysRead:
    """The public keys (JWK set) verifying erasure certificates and audit checkpoints: current and retired."""
    return SigningKeysRead.model_validate(runtime.signing_keys.jwks())
