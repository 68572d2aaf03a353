"""FastAPI dependencies: the app's services, database sessions, the request id, the authorization hook."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Protocol

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import Deletion
from app.adapters.db.session import read_session
from app.api.problems import request_id_of
from app.auth import Principal
from app.domain.ports import KafkaGateway
from app.settings import Settings
from app.worker import Executor


class Authorization(Protocol):
    """What the routes ask before acting; issue 4 plugs the KIP-11 authorizer in here."""

    async def check_delete_topics(self, principal: Principal, cluster: str, topics: Sequence[str]) -> None:
        """Raise ``Forbidden`` unless ``principal`` may delete records of every topic."""
        ...

    async def can_view(self, principal: Principal, deletion: Deletion) -> bool:
        """Whether ``principal`` may see ``deletion`` (if not, the API answers 404, not 403)."""
        ...


class AllowAll:
    """Every authenticated principal may do everything (until the authorization issue lands)."""

    async def check_delete_topics(self, principal: Principal, cluster: str, topics: Sequence[str]) -> None:
        return None

    async def can_view(self, principal: Principal, deletion: Deletion) -> bool:
        return True


@dataclass
class Services:
    """What the lifespan opens, shared by every request (``app.state.services``)."""

    settings: Settings
    sessionmaker: async_sessionmaker[AsyncSession]
    gateway: KafkaGateway
    authorization: Authorization
    executor: Executor | None = None


def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def get_session(services: Annotated[Services, Depends(get_services)]) -> AsyncIterator[AsyncSession]:
    """A read-only session; nothing is committed (writes go through ``write_transaction``)."""
    async with read_session(services.sessionmaker) as session:
        yield session


def get_request_id(request: Request) -> str:
    return request_id_of(request.scope) or ""


def get_authorization(services: Annotated[Services, Depends(get_services)]) -> Authorization:
    return services.authorization


ServicesDep = Annotated[Services, Depends(get_services)]
SessionDep = Annotated[AsyncSession, Depends(get_session)]
RequestIdDep = Annotated[str, Depends(get_request_id)]
AuthorizationDep = Annotated[Authorization, Depends(get_authorization)]
