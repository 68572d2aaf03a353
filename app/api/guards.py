"""Permission guards attached to whole routers (``include_router(..., dependencies=[...])``)."""

from __future__ import annotations

from fastapi import Depends

from app.api.routing import AuthorizationDep, RequestIdDep
from app.auth import PrincipalDep


async def can_read_audit(
    principal: PrincipalDep, authorization: AuthorizationDep, request_id: RequestIdDep
) -> None:
    """The audit trail spans every cluster: DESCRIBE on CLUSTER of each (or a super user)."""
    await authorization.check_audit_read(principal, request_id=request_id)


CanReadAudit = Depends(can_read_audit)
