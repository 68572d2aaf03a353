"""Choosing topics on the command line as policies and approval rules do: ``--prefix``, ``--regex`` or
``--topics a,b,c``, sent as the API's ``topics`` object and shown back in one short column."""

from __future__ import annotations

import argparse
from typing import Any


def names(text: str) -> list[str]:
    """A comma-separated list (``a,b,c``), blanks left out."""
    return [name.strip() for name in text.split(",") if name.strip()]


def add_topic_options(command: argparse.ArgumentParser) -> None:
    topics = command.add_mutually_exclusive_group(required=True)
    topics.add_argument("--prefix", help="topics whose names start with this")
    topics.add_argument("--regex", help="topics whose whole names match (RE2 syntax)")
    topics.add_argument("--topics", type=names, help="these topics, e.g. a,b,c")


def topic_selection(args: argparse.Namespace) -> dict[str, Any]:
    """The API's ``topics`` object from the options of ``add_topic_options``."""
    if args.prefix is not None:
        return {"prefix": args.prefix}
    if args.regex is not None:
        return {"regex": args.regex}
    return {"names": args.topics}


def shown_topics(selection: dict[str, Any]) -> str:
    if selection.get("prefix") is not None:
        return f"{selection['prefix']}*"
    if selection.get("regex") is not None:
        return f"/{selection['regex']}/"
    return ",".join(selection.get("names") or [])
