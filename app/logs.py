"""Logging setup: one JSON object per line (``PURGE_LOG_FORMAT=json``, the default when stderr is not a
terminal) or plain text (``text``), with the request, principal, deletion and cluster each line belongs
to, for every logger including uvicorn's (the server passes ``log_config=None``, so they propagate here).

The context comes from context variables: the request middleware sets the request id, authentication
the principal, the executor the deletion and cluster while it logs about one deletion. Bearer tokens
and JWTs are masked in every rendered line, whatever logged them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TextIO

from pythonjsonlogger.json import JsonFormatter

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
principal_var: ContextVar[str | None] = ContextVar("principal", default=None)
deletion_id_var: ContextVar[str | None] = ContextVar("deletion_id", default=None)
cluster_var: ContextVar[str | None] = ContextVar("cluster", default=None)

CONTEXT: dict[str, ContextVar[str | None]] = {
    "request_id": request_id_var,
    "principal": principal_var,
    "deletion_id": deletion_id_var,
    "cluster": cluster_var,
}
FORMATS = ("json", "text")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# A JWT (three base64url parts, the first a JSON header) or what follows "Bearer ": a credential.
_BEARER = re.compile(r"(?i:bearer)\s+[\w\-.~+/]{16,}=*")
_SECRET = re.compile(rf"eyJ[\w-]+\.[\w-]+\.[\w-]*|{_BEARER.pattern}")
REDACTED = "[redacted]"
# Loggers whose JWS strings are public evidence, not credentials: the audit checkpoints an operator
# saves from the log to verify the trail later (``kafka-purge audit verify --checkpoint``).
SIGNATURE_LOGGERS = frozenset({"kafka_purge.audit"})


def redact(text: str, record: logging.LogRecord | None = None) -> str:
    if record is not None and record.name in SIGNATURE_LOGGERS:
        return _BEARER.sub(REDACTED, text)
    return _SECRET.sub(REDACTED, text)


class ContextFilter(logging.Filter):
    """Puts the context variables on each record (a value passed in ``extra`` wins)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in CONTEXT.items():
            if getattr(record, name, None) is None:
                setattr(record, name, var.get())
        return True


class JsonLineFormatter(JsonFormatter):
    """time, level, logger, message, the context fields, then whatever the call passed in ``extra``."""

    def __init__(self) -> None:
        super().__init__(
            ["asctime", "levelname", "name", "message", *CONTEXT],
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            datefmt="%Y-%m-%dT%H:%M:%S%z",
        )

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), record)


class TextFormatter(logging.Formatter):
    """The classic line, followed by the context fields that are set."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        context = " ".join(
            f"{name}={value}" for name in CONTEXT if (value := getattr(record, name, None)) is not None
        )
        return redact(f"{line} [{context}]" if context else line, record)


def chosen_format(environ: dict[str, str] | os._Environ[str], stream: TextIO) -> str:
    """``PURGE_LOG_FORMAT`` when set, else text on a terminal and JSON otherwise."""
    wanted = environ.get("PURGE_LOG_FORMAT", "").strip().lower()
    if wanted:
        if wanted not in FORMATS:
            raise ValueError(f"PURGE_LOG_FORMAT must be one of {', '.join(FORMATS)}, not {wanted!r}")
        return wanted
    return "text" if stream.isatty() else "json"


def configure_logging(level: str, log_format: str, stream: TextIO | None = None) -> None:
    """Replaces the root logger's handlers with one writing ``log_format`` lines to ``stream``."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonLineFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


@contextlib.contextmanager
def log_context(**values: str | None) -> Iterator[None]:
    """Sets context fields (names from ``CONTEXT``) for the lines logged inside the block."""
    tokens = [(CONTEXT[name], CONTEXT[name].set(value)) for name, value in values.items()]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)
