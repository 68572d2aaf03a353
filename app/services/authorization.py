"""The authorization the use cases ask before acting: a Protocol, implemented by
``app.auth.permissions.KafkaAclAuthorization`` (KIP-11 ACLs per cluster)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from app.adapters.db.models import Deletion
from app.auth import Principal
from app.domain.acl import Operation
from app.domain.deletion_requests import DeletionScope


class Authorization(Protocol):
    """What the routes ask before acting (``app.auth.permissions.KafkaAclAuthorization``: KIP-11).

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
