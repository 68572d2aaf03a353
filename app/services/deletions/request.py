"""What planning and storing read of a deletion request, whoever asks: the HTTP body
(``app.schemas.deletions.DeletionCreate``) and a domain ``DeletionCommand`` (a retention sweep) both
have it, so the two go through the same checks, plan, store and audit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Entry(Protocol):
    """One entry: a topic, a partition (None: every partition of the topic) and its spec (exactly one of
    ``offset`` and the fields ``app.schemas.deletions.spec_of`` reads)."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int | None: ...

    @property
    def offset(self) -> int | None: ...


class DeletionRequest(Protocol):
    @property
    def cluster(self) -> str: ...

    @property
    def partitions(self) -> Sequence[Entry]: ...

    @property
    def leader_only(self) -> bool: ...

    @property
    def timeout_ms(self) -> int | None: ...

    @property
    def reason(self) -> str: ...

    @property
    def allow_unconsumed(self) -> bool: ...

    @property
    def ignore_groups(self) -> Sequence[str]: ...
