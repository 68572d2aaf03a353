"""FastAPI dependencies: the app's services, database sessions, the request id, the authorization hook."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Protocol

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import Deletion
from app.adapters.db.session import read_session
from app.api.accepting import AcceptBatcher
from app.api.problems import request_id_of
from app.audit.checkpoints import CheckpointKey, load_checkpoint_key
from app.auth import Principal
from app.auth.acl_sources import AclSources
from app.domain.acl import Operation
from app.domain.deletions import DeletionScope
from app.domain.ports import KafkaGateway
from app.settings import Settings
from app.worker import Executor


class Authorization(Protocol):
    """What the routes ask before acting (``app.auth.authorization.KafkaAclAuthorization``: KIP-11).

    The ``check_*`` methods raise ``Forbidden`` (and audit the refusal); ``can_view`` answers a bool
    because a deletion the caller may not see is a 404, never a 403.
    """

    async def check_delete_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        """Raise ``Forbidden`` unless ``principal`` may delete records of every topic."""
        ...

    async def can_view(self, principal: Principal, deletion: DeletionScope) -> bool:
        """Whether ``principal`` may see ``deletion`` (if not, the API answers 404, not 403)."""
        ...

    async def check_cancel(
        self, principal: Principal, deletion: Deletion, *, request_id: str | None = None
    ) -> None:
        """Raise ``Forbidden`` unless ``principal`` may cancel ``deletion`` (DELETE on every topic)."""
        ...

    async def check_describe_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        """Raise ``Forbidden`` unless ``principal`` may DESCRIBE every topic (offsets and groups views)."""
        ...

    async def check_cluster(
        self, principal: Principal, cluster: str, operation: Operation, *, request_id: str | None = None
    ) -> None:
        """Raise ``Forbidden`` unless ``principal`` may perform ``operation`` on the cluster itself."""
        ...

    async def check_audit_read(self, principal: Principal, *, request_id: str | None = None) -> None:
        """Raise ``Forbidden`` unless ``principal`` may read the audit trail."""
        ...

    async def check_delete_prefix(
        self, principal: Principal, cluster: str, prefix: str, *, request_id: str | None = None
    ) -> None:
        """Raise ``Forbidden`` unless ``principal`` may delete records of every topic under ``prefix``,
        including topics created later (``app.domain.prefix_authorization``)."""
        ...

    async def check_read_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        """Raise ``Forbidden`` unless ``principal`` may READ every topic (a consumer's progress report)."""
        ...

    async def check_groups(
        self,
        principal: Principal,
        cluster: str,
        operation: Operation,
        groups: Sequence[str],
        *,
        request_id: str | None = None,
    ) -> None:
        """Raise ``Forbidden`` unless ``principal`` may perform ``operation`` on every GROUP (consumers)."""
        ...

    async def describable_groups(self, principal: Principal, cluster: str, groups: Sequence[str]) -> set[str]:
        """The groups among ``groups`` that ``principal`` may DESCRIBE; the others are 404 to it."""
        ...

    async def may_on_cluster(self, principal: Principal, cluster: str, operation: Operation) -> bool:
        """Whether ``principal`` may perform ``operation`` on the cluster itself, without auditing."""
        ...

    async def revoked_topics(
        self, cluster: str, principals: Sequence[str], client_host: str, topics: Sequence[str]
    ) -> dict[str, str]:
        """The topics these principals (a policy's owner) may not DELETE on, with each reason."""
        ...


class AllowAll:
    """Every authenticated principal may do everything (for tests of other concerns only)."""

    async def check_delete_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        return None

    async def can_view(self, principal: Principal, deletion: DeletionScope) -> bool:
        return True

    async def check_cancel(
        self, principal: Principal, deletion: Deletion, *, request_id: str | None = None
    ) -> None:
        return None

    async def check_describe_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        return None

    async def check_cluster(
        self, principal: Principal, cluster: str, operation: Operation, *, request_id: str | None = None
    ) -> None:
        return None

    async def check_audit_read(self, principal: Principal, *, request_id: str | None = None) -> None:
        return None

    async def check_delete_prefix(
        self, principal: Principal, cluster: str, prefix: str, *, request_id: str | None = None
    ) -> None:
        return None

    async def check_read_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        return None

    async def check_groups(
        self,
        principal: Principal,
        cluster: str,
        operation: Operation,
        groups: Sequence[str],
        *,
        request_id: str | None = None,
    ) -> None:
        return None

    async def describable_groups(self, principal: Principal, cluster: str, groups: Sequence[str]) -> set[str]:
        return set(groups)

    async def may_on_cluster(self, principal: Principal, cluster: str, operation: Operation) -> bool:
        return True

    async def revoked_topics(
        self, cluster: str, principals: Sequence[str], client_host: str, topics: Sequence[str]
    ) -> dict[str, str]:
        return {}


@dataclass
class Services:
    """What the lifespan opens, shared by every request (``app.state.services``)."""

    settings: Settings
    sessionmaker: async_sessionmaker[AsyncSession]
    gateway: KafkaGateway
    authorization: Authorization
    executor: Executor | None = None
    acl_sources: AclSources | None = None
    # Stores accepted deletions, several per transaction under load (``app.api.accepting``).
    accepting: AcceptBatcher = field(init=False)
    # Signs and checks audit checkpoints; None when no key is configured (checkpoints off).
    audit_key: CheckpointKey | None = field(init=False)

    def __post_init__(self) -> None:
        batch = self.settings.worker.claim_batch
        self.accepting = AcceptBatcher(self.sessionmaker, self.executor, max_partitions=batch)
        self.audit_key = load_checkpoint_key(self.settings.audit)


# The small dependencies are coroutines on purpose: FastAPI runs a plain ``def`` dependency in a worker
# thread, and that hop cost more than the rest of a GET.
async def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def get_session(services: Annotated[Services, Depends(get_services)]) -> AsyncIterator[AsyncSession]:
    """A read-only session; nothing is committed (writes go through ``write_transaction``)."""
    async with read_session(services.sessionmaker) as session:
        yield session


async def get_request_id(request: Request) -> str:
    return request_id_of(request.scope) or ""


async def get_authorization(services: Annotated[Services, Depends(get_services)]) -> Authorization:
    return services.authorization


ServicesDep = Annotated[Services, Depends(get_services)]
SessionDep = Annotated[AsyncSession, Depends(get_session)]
RequestIdDep = Annotated[str, Depends(get_request_id)]
AuthorizationDep = Annotated[Authorization, Depends(get_authorization)]
