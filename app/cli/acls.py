"""``kafka-purge acl list|add|remove``: the service's ACL bindings of a cluster (Kafka's fields and
names: principal, host, operation, permission type, resource type and name, pattern type)."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.client import answer_json, api_client, cluster_option, connection_options, run_client_command
from app.cli.exits import Exit
from app.cli.input import InputError
from app.cli.output import emit_json, say, table
from app.cli.prompt import ask, require_terminal

ACL_HEADERS = ("PRINCIPAL", "HOST", "OPERATION", "PERMISSION", "RESOURCE_TYPE", "RESOURCE_NAME", "PATTERN")
FILTER_FIELDS = (
    "principal",
    "host",
    "operation",
    "permission_type",
    "resource_type",
    "resource_name",
    "pattern_type",
)


def _binding_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """The binding's fields; for list and remove each is a filter (absent: any)."""
    upper = str.upper
    parser.add_argument("--principal", required=required, help="Type:Name, e.g. User:alice, Group:payments")
    parser.add_argument("--host", help="* or the client's IP address" + (" (default *)" if required else ""))
    parser.add_argument(
        "--operation", type=upper, required=required, help="e.g. DELETE, DESCRIBE, ALTER, ALL"
    )
    parser.add_argument(
        "--permission-type",
        "--permission",
        dest="permission_type",
        type=upper,
        required=required,
        help="ALLOW or DENY",
    )
    parser.add_argument("--resource-type", type=upper, required=required, help="TOPIC, GROUP or CLUSTER")
    parser.add_argument(
        "--resource-name", required=required, help="a topic or group name, *, or kafka-cluster for CLUSTER"
    )
    patterns = "LITERAL (default) or PREFIXED" if required else "LITERAL, PREFIXED, ANY or MATCH"
    parser.add_argument("--pattern-type", type=upper, help=patterns)


def add_acl_commands(commands: Any) -> None:
    """Register ``acl list|add|remove`` on ``kafka-purge``'s sub-parsers."""
    acl = commands.add_parser("acl", help="ACL bindings: list, add, remove")
    actions = acl.add_subparsers(dest="acl_command", required=True, metavar="ACTION")
    for name, handler, text in (
        ("list", _list, "the bindings a filter selects (needs DESCRIBE on CLUSTER)"),
        ("add", _add, "add one binding (needs ALTER on CLUSTER)"),
        ("remove", _remove, "remove every binding a filter selects (asks first; needs ALTER on CLUSTER)"),
    ):
        command = actions.add_parser(name, help=text, description=text)
        connection_options(command)
        cluster_option(command)
        _binding_options(command, required=name == "add")
        if name == "remove":
            command.add_argument(
                "-y",
                "--yes",
                "--no-confirm",
                dest="yes",
                action="store_true",
                help="do not ask for confirmation",
            )
        command.set_defaults(handler=lambda args, h=handler: run_client_command(h, args))


def _given(args: argparse.Namespace) -> dict[str, str]:
    return {field: getattr(args, field) for field in FILTER_FIELDS if getattr(args, field) is not None}


def _print(args: argparse.Namespace, items: list[dict[str, Any]]) -> None:
    if args.format == "json":
        emit_json(items)
        return
    rows = [[b[field] for field in FILTER_FIELDS] for b in items]
    table(ACL_HEADERS, rows)


def _list(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        answer = answer_json(client.get(f"/v1/clusters/{args.cluster}/acls", params=_given(args)), 200)
    if args.format == "json":
        emit_json(answer)
    else:
        _print(args, answer["items"])
    return Exit.OK


def _add(args: argparse.Namespace) -> int:
    with api_client(args) as client:
        binding = answer_json(client.post(f"/v1/clusters/{args.cluster}/acls", json=_given(args)), 201)
    if args.format == "json":
        emit_json(binding)
    else:
        say("added:")
        _print(args, [binding])
    return Exit.OK


def _remove(args: argparse.Namespace) -> int:
    selected = _given(args)
    if not selected:
        raise InputError(
            "name at least one filter (e.g. --principal User:alice); a filter of nothing is everything"
        )
    if not args.yes:
        require_terminal("removing ACLs")
    path = f"/v1/clusters/{args.cluster}/acls"
    with api_client(args) as client:
        if not args.yes:
            matching = answer_json(client.get(path, params=selected), 200)["items"]
            if not matching:
                say("no binding matches; nothing to remove", err=True)
                return Exit.OK
            table(ACL_HEADERS, [[b[f] for f in FILTER_FIELDS] for b in matching])
            if not ask(f"Remove these {len(matching)} binding(s)?"):
                say("Not removed.", err=True)
                return Exit.REFUSED
        removed = answer_json(client.delete(path, params=selected), 200)["items"]
    if args.format == "table":
        say(f"removed {len(removed)} binding(s):")
    _print(args, removed)
    return Exit.OK
