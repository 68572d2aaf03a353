"""FastAPI dependencies as small Annotated aliases: the runtime, the request id, the authorization.
Routers open no database session: the services do."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.api.problems import request_id_of
from app.auth import PrincipalDep
from app.services.authorization import Authorization
from app.services.runtime import Runtime


# The small dependencies are coroutines on purpose: FastAPI runs a plain ``def`` dependency in a worker
# thread, and that hop cost more than the rest of a GET.
async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def get_request_id(request: Request) -> str:
    return request_id_of(request.scope) or ""


async def get_authorization(runtime: Annotated[Runtime, Depends(get_runtime)]) -> Authorization:
    return runtime.authorization


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
RequestIdDep = Annotated[str, Depends(get_request_id)]
AuthorizationDep = Annotated[Authorization, Depends(get_authorization)]

__all__ = ["AuthorizationDep", "PrincipalDep", "RequestIdDep", "RuntimeDep"]
