"""Test doubles of ``app.services.authorization.Authorization``."""

from __future__ import annotations

from collections.abc import Sequence

from app.adapters.db.models import Deletion
from app.auth import Principal
from app.domain.acl import Operation
from app.domain.deletion_requests import DeletionScope


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
