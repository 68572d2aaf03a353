"""Liveness and readiness answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    status: Literal["ready", "not_ready"]
    database: Literal["ok", "unreachable"]
    executor: Literal["running", "stopped", "disabled"]
    clusters: dict[str, Literal["reachable", "unreachable"]]
