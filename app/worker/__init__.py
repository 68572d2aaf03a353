"""The durable executor: claims partitions with leases and fencing, sends DeleteRecords, records outcomes."""

from app.worker.executor import Executor, default_instance_id

__all__ = ["Executor", "default_instance_id"]
