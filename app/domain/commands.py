"""Commands: what a use case is asked to do, said in domain terms rather than as an HTTP body.

A retention sweep builds a ``DeletionCommand`` (what to delete, as whom, why) and hands it to the
deletion service (``app.services.deletions.submission.submit_command``), which checks, plans, stores and
audits it exactly as it does a ``POST /v1/deletions``.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.ports import Requester


@dataclass(frozen=True)
class Cut:
    """Delete the records of ``topic``-``partition`` below ``offset`` (a concrete offset). The other
    spec fields of a request entry (``before``, ``committed_by``, ``to``) are always None here."""

    topic: str
    partition: int
    offset: int
    before: None = None
    committed_by: None = None
    to: None = None


@dataclass(frozen=True)
class DeletionCommand:
    """Delete ``cuts`` on ``cluster`` as ``as_whom`` (re-authorized when submitted), for ``reason``.

    ``allow_unconsumed``: records some consumer group has not read may go (audited). ``consumers_read``:
    the caller bounded every cut by the positions of the consumers it chose (a sweep), so the service
    does not read the cluster's consumer groups again to assess what the cuts leave unread.
    """

    cluster: str
    cuts: tuple[Cut, ...]
    leader_only: bool
    reason: str
    as_whom: Requester
    allow_unconsumed: bool = False
    consumers_read: bool = False
    timeout_ms: int | None = None
    ignore_groups: tuple[str, ...] = ()

    @property
    def partitions(self) -> tuple[Cut, ...]:
        """The cuts, named as a request's entries are."""
        return self.cuts
