"""Cancelling a deletion: its partitions not yet sent to Kafka (awaiting approval, or pending and not
claimed) are cancelled; a deletion awaiting approval ends ``cancelled`` with its approval request."""

from __future__ import annotations

from datetime import UTC, datetime

from app.adapters.db.repositories import cancellation
from app.adapters.db.repositories import deletion_reads as reads
from app.adapters.db.repositories.deletion_reads import DeletionRecord, FirstPartitions
from app.adapters.db.repositories.webhooks import enqueue_events
from app.adapters.db.session import read_session, run_read, write_transaction
from app.audit import append_event, events
from app.audit.events import Actor
from app.auth import Principal
from app.domain.webhook_events import outcome_event
from app.errors import Conflict
from app.services.approvals import transitions
from app.services.deletions.visibility import visible_deletion
from app.services.runtime import Runtime


async def cancel_deletion(
    runtime: Runtime, principal: Principal, deletion_id: str, *, request_id: str, limit: int
) -> tuple[DeletionRecord, FirstPartitions]:
    """Cancel what of ``deletion_id`` still waits to be sent, with its ``deletion.cancelled`` event in the
    same transaction; the deletion as changed and its first ``limit`` partitions.

    404 when the caller may not see it, 403 (audited) when they may not cancel it, 409 when nothing
    waits any more.
    """
    authorization = runtime.authorization
    async with read_session(runtime.sessionmaker) as session:
        seen = await visible_deletion(session, authorization, principal, deletion_id)
    # Outside the write transaction: a refusal commits its own authz.denied event.
    await authorization.check_cancel(principal, seen, request_id=request_id)
    now = datetime.now(UTC)
    async with write_transaction(runtime.sessionmaker) as session:
        deletion = await visible_deletion(session, authorization, principal, deletion_id)
        cancelled = await cancellation.cancel_pending(session, deletion.id, now)
        if not cancelled:
            raise Conflict("No partition of this deletion is still waiting to be sent.")
        status = await cancellation.refresh_status(session, deletion, now)
        await transitions.cancel_waiting(session, deletion.id, now)
        if deletion.finished_at == now and (
            ended := outcome_event(deletion.id, deletion.cluster, status.value, {})
        ):
            await enqueue_events(session, [ended], now)
        actor = Actor.of(principal, request_id)
        event = events.deletion_cancelled(actor, deletion.cluster, deletion.id, cancelled, status.value, now)
        await append_event(session, event)
    changed = reads.record_of(deletion)
    first = await run_read(runtime.sessionmaker, reads.first_partitions, changed, limit)
    return changed, first
