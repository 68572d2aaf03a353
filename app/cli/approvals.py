"""Four-eyes approval commands of ``kafka-purge``: ``approvals`` (what you may approve), ``approve ID``
and ``reject ID`` (``--comment``), and ``approval-rules list|create|delete`` (a cluster's rules)."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.client import answer_json, api_client, cluster_option, connection_options, run_client_command
from app.cli.exits import Exit
from app.cli.output import emit_json, say, table
from app.cli.topic_selection import add_topic_options, names, shown_topics, topic_selection
from app.domain.approvals import Exemption

STATUSES = ("pending", "approved", "rejected", "expired", "cancelled")


def add_approval_commands(commands: Any) -> None:
    """Register ``approvals``, ``approve``, ``reject`` and ``approval-rules`` on ``kafka-purge``."""
    listing = commands.add_parser("approvals", help="requests you may approve (default: pending)")
    connection_options(listing)
    listing.add_argument("--status", choices=STATUSES, default="pending", help="requests in this state")
    listing.set_defaults(handler=lambda args: run_client_command(_list, args))
    for name, text in (("approve", "approve a deletion awaiting approval"), ("reject", "reject one")):
        command = commands.add_parser(name, help=text)
        connection_options(command)
        command.add_argument("id", metavar="ID", help="the deletion's id")
        command.add_argument("--comment", default="", help="why (kept in the audit trail)")
        command.set_defaults(handler=lambda args: run_client_command(_decide, args), decision=name)
    _add_rule_commands(commands)


def _add_rule_commands(commands: Any) -> None:
    rules = commands.add_parser("approval-rules", help="a cluster's four-eyes approval rules")
    actions = rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="the cluster's rules")
    create = actions.add_parser("create", help="protect topics with a rule")
    delete = actions.add_parser("delete", help="delete a rule")
    for command in (listing, create, delete):
        connection_options(command)
        cluster_option(command)
    listing.set_defaults(handler=lambda args: run_client_command(_rules, args))
    create.add_argument("name", metavar="NAME")
    add_topic_options(create)
    create.add_argument(
        "--approvers", type=names, required=True, help="User:x and Group:y principals, e.g. User:a,Group:b"
    )
    create.add_argument("--required", type=int, default=1, help="approvals needed, 1-5 (default 1)")
    create.add_argument("--expires-after-seconds", type=int, help="how long a request may wait")
    create.add_argument(
        "--exempt",
        action="append",
        choices=[way.value for way in Exemption],
        default=[],
        help="a way of deleting the rule does NOT cover (audited; repeatable): retention = policies run "
        "unapproved",
    )
    create.set_defaults(handler=lambda args: run_client_command(_create_rule, args))
    delete.add_argument("name", metavar="NAME")
    delete.set_defaults(handler=lambda args: run_client_command(_delete_rule, args))


def _list(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        items = answer_json(client.get("/v1/approvals", params={"status": args.status}), 200)["items"]
    if args.format == "json":
        emit_json(items)
        return Exit.OK
    rows = [
        [
            i["deletion_id"] or f"policy {i['policy']}",
            i["cluster"],
            i["requester"],
            ",".join(i["topics"]),
            f"{i['approvals']}/{i['required_approvals']}",
            (i["preview"] or {}).get("records_deleted", ""),
            i["expires_at"],
        ]
        for i in items
    ]
    table(("ID", "CLUSTER", "REQUESTER", "TOPICS", "APPROVALS", "RECORDS", "EXPIRES"), rows)
    return Exit.OK


def _decide(args: argparse.Namespace) -> int:
    body = {"decision": args.decision, "comment": args.comment}
    with api_client(args) as client:
        decided = answer_json(client.post(f"/v1/deletions/{args.id}/approvals", json=body), 200)
    if args.format == "json":
        emit_json(decided)
    else:
        count = f"{decided['approvals']}/{decided['required_approvals']} approvals"
        say(f"deletion {args.id}: {decided['status']} ({count})")
    return Exit.OK


def _rules(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        items = answer_json(client.get(f"/v1/clusters/{args.cluster}/approval-rules"), 200)["items"]
    if args.format == "json":
        emit_json(items)
        return Exit.OK
    rows = [
        [
            r["name"],
            shown_topics(r["topics"]),
            ",".join(r["approvers"]),
            r["required_approvals"],
            r["expires_after_seconds"],
            ",".join(r["exemptions"]) or "-",
        ]
        for r in items
    ]
    table(("NAME", "TOPICS", "APPROVERS", "REQUIRED", "EXPIRES_AFTER_S", "EXEMPTIONS"), rows)
    return Exit.OK


def _create_rule(args: argparse.Namespace) -> int:
    topics = topic_selection(args)
    body: dict[str, Any] = {
        "name": args.name,
        "topics": topics,
        "approvers": args.approvers,
        "required_approvals": args.required,
        "exemptions": args.exempt,
    }
    if args.expires_after_seconds is not None:
        body["expires_after_seconds"] = args.expires_after_seconds
    with api_client(args) as client:
        rule = answer_json(client.post(f"/v1/clusters/{args.cluster}/approval-rules", json=body), 201)
    if args.format == "json":
        emit_json(rule)
    else:
        say(f"approval rule {rule['name']} created on {rule['cluster']}")
    return Exit.OK


def _delete_rule(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        response = client.delete(f"/v1/clusters/{args.cluster}/approval-rules/{args.name}")
        if response.status_code != 204:
            answer_json(response, 204)
    say(f"approval rule {args.name} deleted")
    return Exit.OK
