"""ORM models. Portable types only: the same Alembic chain runs on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only autoincrements INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on both databases: SQLite keeps no offset, so values are stored as naive UTC
    and read back as aware UTC; naive input is refused rather than guessed."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: use timezone-aware UTC datetimes")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UtcDateTime(), dict[str, Any]: JSON}


class Deletion(Base):
    """One accepted deletion request: what was asked, by whom, why."""

    __tablename__ = "deletion"
    __table_args__ = (
        UniqueConstraint("principal", "idempotency_key"),
        Index("ix_deletion_created_at_id", "created_at", "id"),
        Index("ix_deletion_status", "status"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    cluster: Mapped[str] = mapped_column(String(255))
    principal: Mapped[str] = mapped_column(String(512))
    client_host: Mapped[str] = mapped_column(String(64))
    request_id: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(Text)
    leader_only: Mapped[bool] = mapped_column(Boolean)
    timeout_ms: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(32))
    partition_count: Mapped[int] = mapped_column(Integer)
    topics: Mapped[list[str]] = mapped_column(JSON)
    # The requester's group principals (``Group:<g>`` names without the prefix) when it was accepted: the
    # executor re-checks DELETE with the same principals the API checked.
    principal_groups: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    idempotency_key: Mapped[str | None] = mapped_column(String(255))
    request_hash: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


class PartitionDeletion(Base):
    """One partition of a deletion: the durable task the executor claims, sends and confirms."""

    __tablename__ = "partition_deletion"
    # No index on a column the executor's write-back changes (status, offsets, lease, next attempt), and
    # half of each page left free: PostgreSQL then updates a row on its own page without touching the
    # indexes (a HOT update). Due rows are found through the active deletions (``claims``).
    __table_args__ = (
        UniqueConstraint("deletion_id", "topic", "partition"),
        {"postgresql_with": {"fillfactor": 50}},
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    # A deletion's id, with no foreign key: PostgreSQL would check it with a query per inserted row. The
    # rows are written only with their deletion, in the statement or transaction that inserts it.
    deletion_id: Mapped[str] = mapped_column(String(36))
    topic: Mapped[str] = mapped_column(String(249))
    partition: Mapped[int] = mapped_column(Integer)
    requested_offset: Mapped[int] = mapped_column(BigInteger)
    resolved_offset: Mapped[int] = mapped_column(BigInteger)
    # The offset spec the partition came from (offset, before, committed_by or to), as the request said it.
    spec: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(32))
    low_watermark: Mapped[int | None] = mapped_column(BigInteger)
    leader_log_start_offset: Mapped[int | None] = mapped_column(BigInteger)
    error_code: Mapped[str | None] = mapped_column(String(64))
    error_message: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # Claiming: a worker owns the row while lease_expires_at is in the future; every claim bumps
    # fence, and a worker's write is applied only if the fence it claimed with is still current.
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    lease_expires_at: Mapped[datetime | None]
    fence: Mapped[int] = mapped_column(BigInteger, default=0)
    next_attempt_at: Mapped[datetime]
    deadline_at: Mapped[datetime | None]
    updated_at: Mapped[datetime]


# The two tables as Core tables, for the repositories' statements that skip the ORM's unit of work.
DELETIONS = cast(Table, Deletion.__table__)
PD = cast(Table, PartitionDeletion.__table__)


class AuditEvent(Base):
    """Append-only, hash-chained audit trail: hash = SHA-256(prev_hash + canonical content)."""

    __tablename__ = "audit_event"
    __table_args__ = (
        Index("ix_audit_event_occurred_at", "occurred_at"),
        Index("ix_audit_event_action", "action"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    occurred_at: Mapped[datetime]
    principal: Mapped[str] = mapped_column(String(512))
    client_host: Mapped[str | None] = mapped_column(String(64))
    request_id: Mapped[str | None] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    cluster: Mapped[str | None] = mapped_column(String(255))
    deletion_id: Mapped[str | None] = mapped_column(String(36))
    details: Mapped[dict[str, Any]] = mapped_column(JSON)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64), unique=True)


class AuditHead(Base):
    """A single row naming the newest audit event; appenders lock it so the chain never forks."""

    __tablename__ = "audit_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    last_event_id: Mapped[int] = mapped_column(BigInteger, default=0)
    last_hash: Mapped[str] = mapped_column(String(64))


class AuditCheckpoint(Base):
    """A signed statement that the audit chain's event ``event_id`` has hash ``event_hash`` (a compact
    JWS, also written to the log so that a copy lives outside the database)."""

    __tablename__ = "audit_checkpoint"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    event_id: Mapped[int] = mapped_column(BigInteger, unique=True)
    event_hash: Mapped[str] = mapped_column(String(64))
    signed_at: Mapped[datetime]
    key_id: Mapped[str] = mapped_column(String(128))
    jws: Mapped[str] = mapped_column(Text)


class AclBinding(Base):
    """One ACL binding of a cluster (``acl_source: service``); see ``app.domain.acl.AclBinding``."""

    __tablename__ = "acl_binding"
    __table_args__ = (
        UniqueConstraint(
            "cluster",
            "resource_type",
            "pattern_type",
            "resource_name",
            "principal",
            "host",
            "operation",
            "permission",
            name="uq_acl_binding_entry",
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    cluster: Mapped[str] = mapped_column(String(255))
    resource_type: Mapped[str] = mapped_column(String(16))
    pattern_type: Mapped[str] = mapped_column(String(16))
    resource_name: Mapped[str] = mapped_column(String(512))
    principal: Mapped[str] = mapped_column(String(512))
    host: Mapped[str] = mapped_column(String(64))
    operation: Mapped[str] = mapped_column(String(32))
    permission: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime]


class AclVersion(Base):
    """Per cluster, a counter bumped by every ACL change: each service instance compares it with the
    version of its cached authorizer before deciding, so a change made elsewhere applies at once."""

    __tablename__ = "acl_version"

    cluster: Mapped[str] = mapped_column(String(255), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger, default=0)
