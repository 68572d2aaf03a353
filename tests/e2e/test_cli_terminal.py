"""``kafka-purge`` on a real pseudo-terminal: the confirmation prompt with the preview's summary, and the
progress bar, whose redraws leave nothing behind on the screen a VT100 emulator (pyte) rebuilds from the
bytes the command wrote."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from helpers.cli import ROOT, Service, cli_env, cli_service, commit_offsets, run_cli, run_on_terminal

from app.cli.exits import Exit

REDRAWN = r"""
from app.cli.output import DeletionProgress

progress = DeletionProgress()
for counts in (
    {"pending": 100, "in_progress": 10, "leader_truncated": 5, "failed": 5},
    {"pending": 50, "in_progress": 10, "succeeded": 55, "failed": 5},
    {"succeeded": 115, "failed": 5},
):
    progress.show({"status": "pending", "partition_count": 120, "counts": counts})
progress.close()
print("next line")
"""


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with cli_service(tmp_path_factory.mktemp("cli-terminal"), {"orders": 3, "payments": 2}) as running:
        commit_offsets(running.bootstrap, "billing", {("orders", 0): 4, ("orders", 1): 10, ("orders", 2): 10})
        yield running


def delete_on_terminal(service: Service, *args: str, answer: bytes | None) -> tuple[int, list[str], bytes]:
    command = [sys.executable, "-m", "app", "delete", *args, "--reason", "terminal test"]
    run = run_on_terminal(command, cli_env(service), service.dir, answer=answer)
    return run.returncode, run.screen(), run.output


def log_start_offsets(service: Service, topic: str) -> list[int]:
    preview = run_cli(service, "preview", topic, "-o", "end", "--format", "json")
    return [p["log_start_offset"] for p in json.loads(preview.stdout)["partitions"]]


def test_the_bar_redraws_in_place_and_leaves_no_stale_text() -> None:
    run = run_on_terminal([sys.executable, "-c", REDRAWN], {"PYTHONPATH": str(ROOT), "PATH": ""}, ROOT)
    assert run.returncode == 0, run.output
    assert run.screen() == [
        "━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 120/120 partitions done succeeded 115, failed 5",
        "next line",
    ]
    # Each redraw returns to the line's start and erases it first.
    assert run.output.count(b"\r\x1b[2K") >= 2


def test_the_prompt_shows_the_summary_and_yes_deletes_with_a_bar(service: Service) -> None:
    code, screen, output = delete_on_terminal(
        service, "orders", "-o", "end", "--allow-unconsumed", "--wait", answer=b"y\n"
    )
    assert code == Exit.OK, screen
    text = "\n".join(screen)
    assert screen[:4] == [
        "This deletes 30 record(s) from 3 partition(s) of orders on cluster demo.",
        "1 consumer group(s) have not read these records yet:",
        "  billing (Empty, no active members): 6 unread record(s) in 1 partition(s)",
        "Delete these records? This cannot be undone. [y/N] y",
    ]
    [bar] = [line for line in screen if "partitions done" in line]
    assert bar.endswith("3/3 partitions done succeeded 3"), bar
    assert "pending" not in text
    assert "in progress" not in text
    assert b"\x1b[?25h" in output, "the cursor is shown again"
    assert log_start_offsets(service, "orders") == [10, 10, 10]


def test_no_at_the_prompt_deletes_nothing(service: Service) -> None:
    code, screen, _ = delete_on_terminal(service, "payments", "-p", "1", "-o", "5", answer=b"\n")
    assert code == Exit.REFUSED
    assert screen[0] == "This deletes 5 record(s) from 1 partition(s) of payments on cluster demo."
    assert screen[-2:] == ["Delete these records? This cannot be undone. [y/N]", "Not deleted."]
    assert log_start_offsets(service, "payments") == [0, 0]


def test_a_request_the_service_would_refuse_is_not_asked(service: Service) -> None:
    commit_offsets(service.bootstrap, "audit", {("payments", 0): 2})
    code, screen, _ = delete_on_terminal(service, "payments", "-p", "0", "-o", "end", answer=b"y\n")
    assert code == Exit.REFUSED
    assert "  audit (Empty, no active members): 8 unread record(s) in 1 partition(s)" in screen
    assert screen[-1] == "Not deleted: the service would refuse this request (see above)."
    assert not any("[y/N]" in line for line in screen)
    assert log_start_offsets(service, "payments") == [0, 0]


def test_with_yes_the_service_refusal_names_the_groups_and_the_way_out(service: Service) -> None:
    commit_offsets(service.bootstrap, "reports", {("payments", 1): 1})
    result = run_cli(service, "delete", "payments", "-p", "1", "-o", "end", "--reason", "r", "--yes")
    assert result.returncode == Exit.REFUSED
    assert f"POST {service.url}/v1/deletions answered 409" in result.stderr
    assert "  group reports: 9 unread record(s)" in result.stderr
    assert "--allow-unconsumed, or --ignore-group GROUP" in result.stderr
