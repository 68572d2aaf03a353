"""The pieces PostgreSQL hashes around the event id put together are exactly the canonical content."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.adapters.db.models import AuditEvent
from app.audit import canonical_json, event_content
from app.audit.chain import hash_pieces

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=12,
)
maybe_text = st.none() | st.text()


@given(
    event_id=st.integers(min_value=1, max_value=2**63 - 1),
    occurred_at=st.datetimes(timezones=st.just(UTC)),
    principal=st.text(),
    client_host=maybe_text,
    request_id=maybe_text,
    action=st.text(),
    cluster=maybe_text,
    deletion_id=maybe_text,
    details=st.dictionaries(st.text(), json_values, max_size=6),
)
def test_pieces_around_the_id_make_the_canonical_content(
    event_id: int,
    occurred_at: datetime,
    principal: str,
    client_host: str | None,
    request_id: str | None,
    action: str,
    cluster: str | None,
    deletion_id: str | None,
    details: dict[str, Any],
) -> None:
    event = AuditEvent(
        occurred_at=occurred_at,
        principal=principal,
        client_host=client_host,
        request_id=request_id,
        action=action,
        cluster=cluster,
        deletion_id=deletion_id,
        details=details,
    )
    lead, tail = hash_pieces(event)  # before the id is known, as an append computes them
    event.id = event_id
    assert lead + canonical_json(details) + ',"id":' + str(event_id) + tail == canonical_json(
        event_content(event)
    )
