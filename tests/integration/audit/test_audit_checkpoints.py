"""Signed checkpoints on SQLite and PostgreSQL: when they are signed, and what verification against them
detects that the chain alone cannot (a rewritten head with a truncated tail, a chain re-hashed from the
genesis), whether the checkpoint is stored or supplied by the caller after the stored ones were wiped."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest
from helpers.audit import append, hash_of, wait_until_async
from pydantic import SecretStr
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import AuditCheckpoint, AuditEvent
from app.adapters.db.repositories import audit as repo
from app.adapters.db.session import read_session
from app.adapters.kafka import KafkaClusters
from app.audit import GENESIS_HASH, VerifyResult, chain_hash, event_content, verify_chain
from app.audit.checkpoints import (
    CheckpointKey,
    InvalidCheckpoint,
    MalformedCheckpoint,
    UnverifiedCheckpoint,
    generate_private_key,
)
from app.audit.verify import Link, check_stored
from app.settings import AuditSettings, Settings
from app.worker.checkpointer import AuditCheckpointer
from app.worker.standalone import standalone_workers

Sessions = async_sessionmaker[AsyncSession]
Tamper = Callable[[str], Awaitable[None]]
KEY = CheckpointKey(generate_private_key())


def checkpointer(sessionmaker: Sessions, every_events: int = 1000) -> AuditCheckpointer:
    settings = AuditSettings(checkpoint_every_events=every_events, checkpoint_seconds=60)
    return AuditCheckpointer(sessionmaker, KEY, settings)


async def verify(sessionmaker: Sessions, checkpoint: str | None = None) -> VerifyResult:
    async with read_session(sessionmaker) as session:
        return await verify_chain(session, key=KEY, checkpoint=checkpoint)


async def truncate_to(tamper: Tamper, sessionmaker: Sessions, event_id: int) -> None:
    """What a database owner does to hide the newest events: delete them and move the head back."""
    kept = await hash_of(sessionmaker, event_id)
    await tamper(f"DELETE FROM audit_event WHERE id > {event_id}")
    await tamper(f"UPDATE audit_head SET last_event_id = {event_id}, last_hash = '{kept}'")


async def test_checkpoints_are_signed_when_due_and_logged(
    sessionmaker: Sessions, caplog: pytest.LogCaptureFixture
) -> None:
    signer = checkpointer(sessionmaker, every_events=3)
    assert await signer.run_once() is None  # an empty chain has nothing to sign
    await append(sessionmaker, 2)
    with caplog.at_level(logging.INFO, logger="kafka_purge.audit"):
        first = await signer.run_once()
    assert first is not None
    assert (first.event_id, first.event_hash) == (2, await hash_of(sessionmaker, 2))
    assert f"jws={first.jws}" in caplog.text
    assert KEY.read(first.jws) == first
    await append(sessionmaker, 2)
    assert await signer.run_once() is None  # 2 events and less than a minute since the last
    later = await signer.run_once(now=datetime.now(UTC) + timedelta(seconds=61))
    assert later is not None
    assert later.event_id == 4
    await append(sessionmaker, 3)
    assert (await signer.run_once()) is not None
    result = await verify(sessionmaker)
    assert (result.ok, result.checkpoints_checked, result.checkpoint_source) == (True, 3, "stored")
    assert result.checkpoint is not None
    assert result.checkpoint.event_id == 7


async def test_instances_sign_each_head_once(sessionmaker: Sessions) -> None:
    await append(sessionmaker, 3)
    signed = await asyncio.gather(*(checkpointer(sessionmaker).run_once() for _ in range(3)))
    assert sum(checkpoint is not None for checkpoint in signed) == 1
    async with read_session(sessionmaker) as session:
        assert (await session.execute(select(func.count()).select_from(AuditCheckpoint))).scalar() == 1


async def test_a_broken_chain_is_never_signed(sessionmaker: Sessions, tamper: Tamper) -> None:
    signer = checkpointer(sessionmaker, every_events=1)
    await append(sessionmaker, 2)
    assert await signer.run_once() is not None
    await append(sessionmaker, 2)
    await tamper("UPDATE audit_event SET principal = 'User:mallory' WHERE id = 3")
    assert await signer.run_once() is None


async def test_head_rewrite_and_truncation_are_detected_against_a_stored_checkpoint(
    sessionmaker: Sessions, tamper: Tamper
) -> None:
    await append(sessionmaker, 5)
    assert await checkpointer(sessionmaker).run_once() is not None
    await truncate_to(tamper, sessionmaker, 3)
    result = await verify(sessionmaker)
    assert (result.ok, result.checked, result.first_broken_id) == (False, 3, 4)
    assert "events were removed" in (result.reason or "")
    assert result.checkpoint is not None
    assert result.checkpoint.event_id == 5


async def test_truncation_is_detected_against_a_supplied_checkpoint_when_stored_ones_are_wiped(
    sessionmaker: Sessions, tamper: Tamper
) -> None:
    await append(sessionmaker, 5)
    kept_outside = await checkpointer(sessionmaker).run_once()
    assert kept_outside is not None
    await truncate_to(tamper, sessionmaker, 3)
    await tamper("DELETE FROM audit_checkpoint")
    assert (await verify(sessionmaker)).ok  # the database alone no longer tells
    result = await verify(sessionmaker, checkpoint=kept_outside.jws)
    assert (result.ok, result.first_broken_id, result.checkpoint_source) == (False, 4, "supplied")
    assert "events were removed" in (result.reason or "")


async def rehash_everything(tamper: Tamper, sessionmaker: Sessions) -> None:
    """Rewrite every event's principal and re-chain every hash from the genesis, head included."""
    async with read_session(sessionmaker) as session:
        events = (await session.execute(select(AuditEvent).order_by(AuditEvent.id))).scalars().all()
    prev = GENESIS_HASH
    for event in events:
        event.principal = "User:mallory"
        new_hash = chain_hash(prev, event_content(event))
        await tamper(
            f"UPDATE audit_event SET principal = 'User:mallory', prev_hash = '{prev}', hash = '{new_hash}' "
            f"WHERE id = {event.id}"
        )
        prev = new_hash
    await tamper(f"UPDATE audit_head SET last_hash = '{prev}'")


async def test_rehashing_everything_is_detected_against_a_checkpoint(
    sessionmaker: Sessions, tamper: Tamper
) -> None:
    await append(sessionmaker, 4)
    kept_outside = await checkpointer(sessionmaker).run_once()
    assert kept_outside is not None
    await rehash_everything(tamper, sessionmaker)
    stored = await verify(sessionmaker)
    assert (stored.ok, stored.checked, stored.first_broken_id) == (False, 4, 4)
    assert "rewritten" in (stored.reason or "")
    await tamper("DELETE FROM audit_checkpoint")
    supplied = await verify(sessionmaker, checkpoint=kept_outside.jws)
    assert (supplied.ok, supplied.first_broken_id, supplied.checkpoint_source) == (False, 4, "supplied")


async def test_an_intact_chain_agrees_with_a_supplied_checkpoint(sessionmaker: Sessions) -> None:
    await append(sessionmaker, 2)
    kept_outside = await checkpointer(sessionmaker).run_once()
    assert kept_outside is not None
    await append(sessionmaker, 2)
    result = await verify(sessionmaker, checkpoint=kept_outside.jws)
    assert (result.ok, result.checked, result.checkpoints_checked) == (True, 4, 2)
    assert result.checkpoint == kept_outside
    assert result.checkpoint_source == "supplied"


def test_a_changed_byte_fails_the_signature() -> None:
    token = KEY.sign(7, "ab" * 32, datetime.now(UTC)).jws
    for index, char in enumerate(token):
        if char == ".":
            continue
        changed = token[:index] + ("B" if char == "A" else "A") + token[index + 1 :]
        with pytest.raises(InvalidCheckpoint):
            KEY.read(changed)
    signature_start = token.rindex(".") + 1
    with pytest.raises(UnverifiedCheckpoint, match="signature"):
        KEY.read(
            token[:signature_start]
            + ("B" if token[signature_start] == "A" else "A")
            + token[signature_start + 1 :]
        )
    with pytest.raises(UnverifiedCheckpoint, match="another key"):
        KEY.read(CheckpointKey(generate_private_key()).sign(7, "ab" * 32, datetime.now(UTC)).jws)
    with pytest.raises(MalformedCheckpoint):
        KEY.read("not-a-jws")


async def test_a_workers_only_process_signs_checkpoints(sessionmaker: Sessions, settings: Settings) -> None:
    audit = AuditSettings(signing_key=SecretStr(generate_private_key()), checkpoint_every_events=1)
    workers_settings = settings.model_copy(update={"audit": audit})
    await append(sessionmaker, 2)
    gateway = KafkaClusters({})
    try:
        async with standalone_workers(workers_settings, sessionmaker, gateway) as workers:
            assert workers.checkpointer is not None

            async def signed() -> bool:
                async with read_session(sessionmaker) as session:
                    newest = await repo.last_checkpoint(session)
                return newest is not None and newest.event_id == 2

            await wait_until_async(signed)
    finally:
        await gateway.close()


async def test_a_checkpoint_newer_than_the_verified_head_is_no_truncation(sessionmaker: Sessions) -> None:
    """Events and their checkpoint committed while a verification walks the chain up to the head it read
    first: the newer checkpoint is no sign of removed events."""
    await append(sessionmaker, 3)
    walked = VerifyResult(True, 3, head=Link(3, await hash_of(sessionmaker, 3)))
    await append(sessionmaker, 2)
    assert await checkpointer(sessionmaker).run_once() is not None
    async with read_session(sessionmaker) as session:
        result = await check_stored(session, KEY, walked)
    assert (result.ok, result.checkpoints_checked) == (True, 0)
