"""``kafka-purge demo``: an emulated cluster with data, SQLite, the dev token issuer and the service."""

from app.demo.runner import run_demo

__all__ = ["run_demo"]
