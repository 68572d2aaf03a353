"""Response examples of the OpenAPI document: what the demo answers to the request examples
(``app.api.examples``), with made-up ids and times."""

from __future__ import annotations

from typing import Any

from app.api.examples import ACL_EXAMPLES

Examples = dict[str, Any]

_ACCEPTED_AT = "2026-11-25T12:00:00.123456Z"
ACCEPTED_EXAMPLE: Examples = {
    "id": "5b0e3f8e-2c4d-4a51-9d8e-0f6a7b1c2d3e",
    "cluster": "demo",
    "principal": "User:orders-team",
    "reason": "demo: first 100 records of orders.us partition 1",
    "leader_only": False,
    "timeout_ms": 30000,
    "status": "pending",
    "partition_count": 1,
    "topics": ["orders.us"],
    "created_at": _ACCEPTED_AT,
    "updated_at": _ACCEPTED_AT,
    "finished_at": None,
    "request_id": "6f1c2a9e8b7d4c3f",
    "counts": {"pending": 1},
    "partitions": [
        {
            "topic": "orders.us",
            "partition": 1,
            "requested_offset": 100,
            "resolved_offset": 100,
            "spec": {"offset": 100},
            "status": "pending",
            "low_watermark": None,
            "leader_log_start_offset": None,
            "error_code": None,
            "error_message": None,
            "attempts": 0,
            "updated_at": _ACCEPTED_AT,
        }
    ],
    "partitions_next": None,
}
PREVIEW_EXAMPLE: Examples = {
    "dry_run": True,
    "cluster": "demo",
    "leader_only": False,
    "partition_count": 1,
    "records_deleted": 200,
    "would_be_refused": True,
    "refusals": ["1 consumer group(s) have not read records this deletion removes"],
    "unconsumed_groups": [
        {
            "group": "orders-billing",
            "unread_records": 50,
            "partitions": 1,
            "state": "Empty",
            "has_active_members": False,
        }
    ],
    "partitions": [
        {
            "topic": "orders.us",
            "partition": 0,
            "spec": {"to": "end"},
            "resolved_offset": 200,
            "log_start_offset": 0,
            "high_watermark": 200,
            "last_stable_offset": 200,
            "records_deleted": 200,
            "uncommitted_records": 0,
            "predicted_outcome": "NONE",
            "unconsumed_groups": [{"group": "orders-billing", "committed_offset": 150, "unread_records": 50}],
            "cut_time": None,
        }
    ],
    "audit_event_id": 17,
    "preview_hash": "9c1d6f0e4b2a7c3d8e5f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d",
}
TOPIC_OFFSETS_EXAMPLE: Examples = {
    "cluster": "demo",
    "topic": "orders.us",
    "internal": False,
    "cleanup_policy": "delete",
    "partitions": [
        {
            "partition": 0,
            "leader": 1,
            "replicas": [1, 2, 0],
            "log_start_offset": 0,
            "high_watermark": 200,
            "groups": [{"group": "orders-billing", "committed_offset": 150, "lag": 50}],
        },
        {
            "partition": 1,
            "leader": 2,
            "replicas": [2, 0, 1],
            "log_start_offset": 100,
            "high_watermark": 200,
            "groups": [{"group": "orders-billing", "committed_offset": 150, "lag": 50}],
        },
    ],
    "groups": [{"group": "orders-billing", "state": "Empty", "has_active_members": False, "total_lag": 100}],
}
# A created binding is answered as it was given.
ACL_CREATED_EXAMPLE: Examples = ACL_EXAMPLES["allow-delete"]["value"]
CONSUMER_CREATED_EXAMPLE: Examples = {
    "cluster": "demo",
    "name": "orders-archiver",
    "kind": "spark",
    "checkpoint_location": None,
    "owner": "User:admin",
    "created_at": _ACCEPTED_AT,
    "updated_at": _ACCEPTED_AT,
    "progress": [],
}
POLICY_CREATED_EXAMPLE: Examples = {
    "cluster": "demo",
    "name": "orders-us-trim",
    "topics": {"names": ["orders.us"]},
    "consumers": {"groups": ["orders-billing"], "spark": []},
    "min_age_seconds": 0,
    "min_records": 10,
    "interval_seconds": 60,
    "leader_only": False,
    "enabled": True,
    "skip_foreign_active_groups": False,
    "await_previous_deletion": False,
    "owner": "User:admin",
    "created_at": _ACCEPTED_AT,
    "updated_at": _ACCEPTED_AT,
    "last_run_at": None,
    "next_run_at": _ACCEPTED_AT,
}
# A certificate of ACCEPTED_EXAMPLE's deletion once it succeeded, signed by a made-up Ed25519 key.
CERTIFICATE_EXAMPLE = (
    "eyJhbGciOiJFZDI1NTE5Iiwia2lkIjoiMkVrMnVRR0FMeXg2NnNvNTgyV3pEM3hpWnJ1OVVXRFN3eXZHNWZQRklLSSIsInR5"
    "cCI6ImthZmthLXB1cmdlLWVyYXN1cmUtY2VydGlmaWNhdGUifQ.eyJhdWRpdCI6eyJjb21wbGV0ZWQiOnsiYWN0aW9uIjoiZ"
    "GVsZXRpb24uY29tcGxldGVkIiwiZXZlbnRfaWQiOjQyLCJoYXNoIjoiMWE3ZTFhN2UxYTdlMWE3ZTFhN2UxYTdlMWE3ZTFhN"
    "2UxYTdlMWE3ZTFhN2UxYTdlMWE3ZTFhN2UxYTdlMWE3ZSJ9LCJyZXF1ZXN0ZWQiOnsiYWN0aW9uIjoiZGVsZXRpb24ucmVxd"
    "WVzdGVkIiwiZXZlbnRfaWQiOjQxLCJoYXNoIjoiOWYyYzlmMmM5ZjJjOWYyYzlmMmM5ZjJjOWYyYzlmMmM5ZjJjOWYyYzlmM"
    "mM5ZjJjOWYyYzlmMmM5ZjJjOWYyYyJ9fSwiZGVsZXRpb24iOnsiYXBwcm92ZXJzIjpbXSwiY2x1c3RlciI6ImRlbW8iLCJma"
    "W5pc2hlZF9hdCI6IjIwMjYtMTEtMjVUMTI6MDA6MDAuNjU0MzIxWiIsImlkIjoiNWIwZTNmOGUtMmM0ZC00YTUxLTlkOGUtM"
    "GY2YTdiMWMyZDNlIiwibGVhZGVyX29ubHkiOmZhbHNlLCJwYXJ0aXRpb25zIjpbeyJlcnJvcl9jb2RlIjpudWxsLCJsZWFkZ"
    "XJfbG9nX3N0YXJ0X29mZnNldCI6bnVsbCwibG93X3dhdGVybWFyayI6MTAwLCJwYXJ0aXRpb24iOjEsInJlc29sdmVkX29mZ"
    "nNldCI6MTAwLCJzdGF0dXMiOiJzdWNjZWVkZWQiLCJ0b3BpYyI6Im9yZGVycy51cyJ9XSwicmVhc29uIjoiZGVtbzogZmlyc"
    "3QgMTAwIHJlY29yZHMgb2Ygb3JkZXJzLnVzIHBhcnRpdGlvbiAxIiwicmVxdWVzdGVkX2F0IjoiMjAyNi0xMS0yNVQxMjowM"
    "DowMC4xMjM0NTZaIiwicmVxdWVzdGVyIjoiVXNlcjpvcmRlcnMtdGVhbSIsInN0YXR1cyI6InN1Y2NlZWRlZCJ9LCJpYXQiO"
    "jE3OTU2MDgwMDAsImlzcyI6Imh0dHA6Ly8xMjcuMC4wLjE6ODA4MCIsImp0aSI6IjBjOGU1ZDdhLTlmNDEtNGI2ZS04YTNkL"
    "TJmMWI3YzZlNWQ0YSIsInN1YiI6IjViMGUzZjhlLTJjNGQtNGE1MS05ZDhlLTBmNmE3YjFjMmQzZSJ9.9xMgfU3ub0iHPqd7"
    "jeBR2MEVR3Ci2oZvB68g2mV9qFOjGr3H0FKj6pbPU8zyNo4UMleGWTUW8jhjWNpBWbuMDQ"
)
SIGNING_KEYS_EXAMPLE: Examples = {
    "keys": [
        {
            "kty": "OKP",
            "crv": "Ed25519",
            "x": "KjWt1CQweWl8Fm4QAiS1yWYY99W-Tgu553Wzjqm_sIU",
            "kid": "2Ek2uQGALyx66so582WzD3xiZru9UWDSwyvG5fPFIKI",
            "alg": "Ed25519",
            "use": "sig",
        }
    ]
}


WEBHOOK_CREATED_EXAMPLE: Examples = {
    "id": "0b6f3b0c-7c2e-4f43-9a51-3f1d2b9e6c10",
    "cluster": "demo",
    "url": "http://receiver.invalid/kafka-purge-events",
    "event_types": [
        "deletion.accepted",
        "deletion.awaiting_approval",
        "deletion.approved",
        "deletion.rejected",
        "deletion.expired",
        "deletion.succeeded",
        "deletion.failed",
        "deletion.partially_failed",
    ],
    "enabled": True,
    "description": "demo",
    "created_by": "User:admin",
    "created_at": _ACCEPTED_AT,
    "updated_at": _ACCEPTED_AT,
    "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
}
