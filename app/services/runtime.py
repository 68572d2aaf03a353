"""What a running instance shares between its requests and its background work.

``Runtime`` is opened once per process by ``app.worker.lifecycle.open_runtime``, the one function both
the app's lifespan (``app.main``) and ``serve --workers-only`` (``app.worker.standalone``) use, so the
two deployments cannot drift. It holds ports and long-lived parts, not the worker (the executor is an
``ExecutorPort``), and builds no use case: ``open_runtime`` builds the group commit it holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.checkpoints import CheckpointKey, load_checkpoint_key
from app.auth.acl_sources import AclSources
from app.auth.permissions import KafkaAclAuthorization
from app.domain.ports import ExecutorPort, KafkaGateway
from app.services.deletions.group_commit import AcceptBatcher
from app.settings import Settings
from app.signing import ServiceKeys


@dataclass
class Runtime:
    """Settings, the database, the Kafka gateway, the authorization, the group commit of accepted
    deletions, this instance's executor (None in ``serve --api-only``), the ACL sources, the audit
    checkpoint key and the service's signing keys."""

    settings: Settings
    sessionmaker: async_sessionmaker[AsyncSession]
    gateway: KafkaGateway
    authorization: KafkaAclAuthorization
    # Stores accepted deletions, several per transaction under load
    # (``app.services.deletions.group_commit``).
    batcher: AcceptBatcher
    executor: ExecutorPort | None = None
    acl_sources: AclSources | None = None
    # Signs and checks audit checkpoints; None when no key is configured (checkpoints off).
    audit_key: CheckpointKey | None = field(init=False)
    # The key that signs erasure certificates (the same one as the checkpoints') and the retired public
    # keys: all of them are published at /signing-keys.
    signing_keys: ServiceKeys = field(init=False)

    def __post_init__(self) -> None:
        audit = self.settings.audit
        self.audit_key = load_checkpoint_key(audit.signing_key_text())
        self.signing_keys = ServiceKeys.of(audit.signing_key_text(), audit.retired_keys_text())
