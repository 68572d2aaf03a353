"""Liveness and readiness answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Health(BaseModel):
    """The process answers."""

    status: Literal["ok"] = Field(description="Always ok: the process is alive")


class Readiness(BaseModel):
    """Whether the service can do its work now."""

    status: Literal["ready", "not_ready"] = Field(
        description="ready when the database answers and the executor runs (or is disabled)"
    )
    database: Literal["ok", "unreachable"] = Field(description="Whether the database answered")
    executor: Literal["running", "stopped", "disabled"] = Field(
        description="The executor of this process: disabled in an API-only instance"
    )
    clusters: dict[str, Literal["reachable", "unreachable"]] = Field(
        description="Each configured cluster, by name: whether its brokers answered"
    )
