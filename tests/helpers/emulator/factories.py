"""The types of the emulator suites' factory fixtures (``make_cluster``, ``raw``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from helpers.emulator.wire_client import RawConnection
from kafka_emulator import EmulatedCluster

RawFactory = Callable[..., Awaitable[RawConnection]]
ClusterFactory = Callable[..., Awaitable[EmulatedCluster]]
