"""Verifying the audit trail: the hash chain, the rows around it, and the signed checkpoints.

What a verification checks, in order, reporting the first failure:

1. the head row exists (without it nothing can be appended);
2. every link from the genesis to the head: ids consecutive, each ``prev_hash`` the previous event's
   hash, each hash that of its content, the last one the head's hash;
3. no row lies past the head (or below id 1): the service's appends never write one there;
4. with a signing key configured, every stored checkpoint signed by it verifies and names an event of the
   chain with its hash: a truncation or a rewrite back to a stored checkpoint shows;
5. a checkpoint the caller supplies (one kept outside the database) likewise: a truncation or a
   rewrite back to it shows even when the stored checkpoints were wiped or rewritten too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import AuditCheckpoint
from app.adapters.db.repositories import audit as repo
from app.audit.chain import GENESIS_HASH, MISSING_HEAD, chain_hash, event_content
from app.audit.checkpoints import Checkpoint, CheckpointKey, InvalidCheckpoint, UnverifiedCheckpoint

CheckpointSource = Literal["stored", "supplied"]


@dataclass(frozen=True)
class Link:
    """A point of the chain: an event id and its hash (id 0 and the genesis hash before the first)."""

    id: int
    hash: str


GENESIS = Link(0, GENESIS_HASH)


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    checked: int
    first_broken_id: int | None = None
    reason: str | None = None
    head: Link | None = None
    # The newest checkpoint the chain was verified against, and where it came from.
    checkpoint: Checkpoint | None = None
    checkpoint_source: CheckpointSource | None = None
    checkpoints_checked: int = 0


def _check_link(event_id: int, prev_hash: str, expected_id: int, expected_prev: str) -> str | None:
    if event_id != expected_id:
        return f"events {expected_id}..{event_id - 1} are missing"
    if prev_hash != expected_prev:
        return "prev_hash does not match the previous event's hash (events removed or reordered)"
    return None


async def walk_chain(session: AsyncSession, start: Link, end: Link, *, chunk_size: int = 200) -> VerifyResult:
    """Check the links after ``start`` up to ``end`` in id order, in chunks; report the first broken one."""
    prev, checked = start, 0
    while True:
        events = await repo.chain_events(session, after_id=prev.id, until_id=end.id, limit=chunk_size)
        for event in events:
            reason = _check_link(event.id, event.prev_hash, prev.id + 1, prev.hash)
            if reason is None and chain_hash(prev.hash, event_content(event)) != event.hash:
                reason = "content does not match its hash (the event was modified)"
            if reason:
                return VerifyResult(False, checked, event.id, reason, end)
            prev, checked = Link(event.id, event.hash), checked + 1
        session.expunge_all()
        if len(events) < chunk_size:
            break
    if prev != end:
        reason = "the newest events are missing: the chain ends before the recorded head"
        return VerifyResult(False, checked, prev.id + 1, reason, end)
    return VerifyResult(True, checked, head=end)


def _contradiction(checkpoint: Checkpoint, head: Link, hashes: dict[int, str]) -> tuple[int, str] | None:
    """Where and how the chain contradicts ``checkpoint`` (a verified one), or None."""
    signed = f"the checkpoint signed at {checkpoint.signed_at.isoformat()}"
    if checkpoint.event_id > head.id:
        reason = f"the chain ends at event {head.id}, before event {checkpoint.event_id} of {signed}"
        return head.id + 1, reason + ": events were removed"
    if hashes.get(checkpoint.event_id) != checkpoint.event_hash:
        reason = f"event {checkpoint.event_id} does not have the hash {signed} names"
        return checkpoint.event_id, reason + ": the chain was rewritten up to it"
    return None


def _broken(result: VerifyResult, event_id: int, reason: str, checkpoint: Checkpoint | None) -> VerifyResult:
    source: CheckpointSource | None = result.checkpoint_source if checkpoint is None else "stored"
    return dataclasses.replace(
        result,
        ok=False,
        first_broken_id=event_id,
        reason=reason,
        checkpoint=checkpoint,
        checkpoint_source=source,
    )


def _check_row(
    key: CheckpointKey, row: AuditCheckpoint, head: Link, hashes: dict[int, str]
) -> tuple[Checkpoint | None, tuple[int, str] | None]:
    """The stored checkpoint ``row`` once verified, and where the chain contradicts it (or None)."""
    try:
        checkpoint = key.read(row.jws)
    except InvalidCheckpoint as exc:
        return None, (row.event_id, f"the stored checkpoint for event {row.event_id} is not valid: {exc}")
    return checkpoint, _contradiction(checkpoint, head, hashes)


async def check_stored(session: AsyncSession, key: CheckpointKey, result: VerifyResult) -> VerifyResult:
    """Check ``result`` (an intact chain up to its head) against every stored checkpoint signed by
    ``key``. Those signed by another key (before a rotation) are skipped: they cannot be checked here."""
    head = result.head
    assert head is not None
    after, count, newest = -1, 0, None
    while rows := await repo.list_checkpoints(
        session, after_event_id=after, until_event_id=head.id, limit=200
    ):
        after = rows[-1].event_id
        hashes = await repo.event_hashes(session, {row.event_id for row in rows})
        for row in (row for row in rows if row.key_id == key.key_id):
            checkpoint, found = _check_row(key, row, head, hashes)
            if found is not None:
                return _broken(result, *found, checkpoint)
            count, newest = count + 1, checkpoint
    past = await repo.checkpoint_past_head(session)
    if past is not None and past.key_id == key.key_id:
        checkpoint, found = _check_row(key, past, head, {})
        assert found is not None  # past the head: events were removed, or the row is not valid
        return _broken(result, *found, checkpoint)
    source: CheckpointSource | None = "stored" if newest is not None else None
    return dataclasses.replace(result, checkpoint=newest, checkpoint_source=source, checkpoints_checked=count)


async def check_supplied(
    session: AsyncSession, key: CheckpointKey, token: str, result: VerifyResult
) -> VerifyResult:
    """Check ``result`` against the caller's checkpoint. A malformed one raises ``MalformedCheckpoint``."""
    assert result.head is not None
    try:
        checkpoint = key.read(token)
    except UnverifiedCheckpoint as exc:
        reason = f"the supplied checkpoint is not valid: {exc}"
        return dataclasses.replace(result, ok=False, reason=reason, checkpoint=None, checkpoint_source=None)
    hashes = await repo.event_hashes(session, [checkpoint.event_id])
    verified = dataclasses.replace(result, checkpoint=checkpoint, checkpoint_source="supplied")
    if (found := _contradiction(checkpoint, result.head, hashes)) is not None:
        return dataclasses.replace(verified, ok=False, first_broken_id=found[0], reason=found[1])
    return dataclasses.replace(verified, checkpoints_checked=result.checkpoints_checked + 1)


async def verify_chain(
    session: AsyncSession,
    *,
    key: CheckpointKey | None = None,
    checkpoint: str | None = None,
    chunk_size: int = 200,
) -> VerifyResult:
    """Verify the whole trail (see the module's docstring); ``checkpoint`` is one the caller kept (a
    compact JWS), checked with ``key``. Never raises for a broken chain: that is the result."""
    head = await repo.read_head(session)
    if head is None:
        return VerifyResult(False, 0, None, MISSING_HEAD + " (it was deleted)")
    result = await walk_chain(session, GENESIS, Link(*head), chunk_size=chunk_size)
    if not result.ok:
        return result
    off_chain = await repo.first_row_off_chain(session)
    if off_chain is not None:
        where = "before the first event" if off_chain < 1 else f"past the head (event {head[0]})"
        reason = f"event {off_chain} lies {where}: it was not written by the service"
        return dataclasses.replace(result, ok=False, first_broken_id=off_chain, reason=reason)
    if key is None:
        return result
    result = await check_stored(session, key, result)
    if result.ok and checkpoint is not None:
        result = await check_supplied(session, key, checkpoint, result)
    return result
