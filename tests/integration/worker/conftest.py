"""Fixtures for executor tests (helpers live in worker_helpers.py)."""

from __future__ import annotations

import pytest
from worker_helpers import Target


@pytest.fixture
def targets() -> list[Target]:
    return [Target("orders", p, 5) for p in range(4)]
