"""The log formats: which one is chosen, what a JSON line holds, and what never appears in a line."""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest

from app.logs import REDACTED, chosen_format, configure_logging, log_context

JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz"


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    out = io.StringIO()
    yield out
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def lines(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_format_is_json_off_a_terminal_and_text_on_one() -> None:
    assert chosen_format({}, io.StringIO()) == "json"
    primary, secondary = os.openpty()
    with os.fdopen(secondary, "w") as tty:
        assert chosen_format({}, tty) == "text"
        assert chosen_format({"PURGE_LOG_FORMAT": "JSON"}, tty) == "json"
    os.close(primary)
    assert chosen_format({"PURGE_LOG_FORMAT": "text"}, io.StringIO()) == "text"
    with pytest.raises(ValueError, match="PURGE_LOG_FORMAT must be one of json, text, not 'xml'"):
        chosen_format({"PURGE_LOG_FORMAT": "xml"}, io.StringIO())


def test_a_json_line_carries_the_context_and_the_extras(stream: io.StringIO) -> None:
    configure_logging("info", "json", stream)
    log = logging.getLogger("kafka_purge.test")
    with log_context(request_id="r-1", principal="User:alice"), log_context(deletion_id="d-1", cluster="c"):
        log.warning("partition %s refused", "t-0", extra={"kafka_error": "POLICY_VIOLATION"})
    log.info("outside")
    log.debug("below the level")
    inside, outside = lines(stream)
    assert inside == {
        "time": inside["time"],
        "level": "WARNING",
        "logger": "kafka_purge.test",
        "message": "partition t-0 refused",
        "request_id": "r-1",
        "principal": "User:alice",
        "deletion_id": "d-1",
        "cluster": "c",
        "kafka_error": "POLICY_VIOLATION",
    }
    assert inside["time"][:2] == "20"
    assert [outside[k] for k in ("request_id", "principal", "deletion_id", "cluster")] == [None] * 4


def test_tokens_are_masked_except_the_audit_checkpoints(stream: io.StringIO) -> None:
    configure_logging("debug", "json", stream)
    logging.getLogger("kafka_purge.test.client").debug(
        "sent Authorization: Bearer %s", "opaque-token-0123456789abcdef"
    )
    logging.getLogger("kafka_purge.auth").debug("claims of %s", JWT)
    try:
        raise ValueError(JWT)
    except ValueError:
        logging.getLogger("kafka_purge.worker").exception("failed")
    logging.getLogger("kafka_purge.audit").info("audit checkpoint event_id=3 jws=%s", JWT)
    header, claims, failure, checkpoint = lines(stream)
    assert header["message"] == f"sent Authorization: {REDACTED}"
    assert claims["message"] == f"claims of {REDACTED}"
    assert JWT not in json.dumps(failure)
    assert REDACTED in failure["exc_info"]
    assert checkpoint["message"] == f"audit checkpoint event_id=3 jws={JWT}"


def test_text_lines_name_the_context_that_is_set(stream: io.StringIO) -> None:
    configure_logging("INFO", "text", stream)
    with log_context(deletion_id="d-1"):
        logging.getLogger("kafka_purge.worker").info("sent %s", JWT)
    logging.getLogger("kafka_purge.test.plain").info("Application startup complete.")
    inside, plain = stream.getvalue().splitlines()
    assert inside.endswith(f"INFO kafka_purge.worker: sent {REDACTED} [deletion_id=d-1]")
    assert plain.endswith("INFO kafka_purge.test.plain: Application startup complete.")
