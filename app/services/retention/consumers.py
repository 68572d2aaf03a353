"""Who may report a consumer's progress, and which consumers and checkpoints the service accepts."""

from __future__ import annotations

from app.auth import Principal
from app.domain.acl import Operation
from app.errors import FieldError, NotFound, ValidationFailed
from app.integrations.spark.checkpoint_roots import CheckpointLocationRefused
from app.runtime import Runtime


def known_cluster(runtime: Runtime, cluster: str) -> None:
    """404 unless ``cluster`` is configured."""
    if not runtime.gateway.has_cluster(cluster):
        raise NotFound(f"Unknown cluster {cluster!r}.")


async def authorize_consumer(
    runtime: Runtime, principal: Principal, cluster: str, name: str, request_id: str
) -> None:
    """403 (audited) unless the caller may READ GROUP ``name``, as Kafka answers an OffsetCommit with
    GROUP_AUTHORIZATION_FAILED; the same whether or not the consumer exists, so a refusal reveals nothing."""
    await runtime.authorization.check_groups(
        principal, cluster, Operation.READ, [name], request_id=request_id
    )


def admitted_checkpoint(runtime: Runtime, location: str | None) -> None:
    """422 unless ``location`` lies under ``PURGE_SPARK_CHECKPOINT_ROOTS`` (symlinks followed)."""
    if location is None:
        return
    try:
        runtime.settings.spark.roots().admit(location)
    except CheckpointLocationRefused as exc:
        detail = f"checkpoint_location refused: {exc}"
        raise ValidationFailed(detail, errors=[FieldError("#/checkpoint_location", str(exc))]) from None
