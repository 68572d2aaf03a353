"""Every shell example of README.md, run in order with bash against a real ``kafka-purge demo``, and the
banner's examples likewise: each exits 0 and shows what its ``expect``/``eventually`` comments say.

The examples address the demo as ``http://127.0.0.1:8080`` and call ``kafka-purge``; here they reach
the demo under test (on a free port) and this tree's ``kafka-purge``. Blocks marked ``not-run`` are
skipped; ``CONTRIBUTING.md`` describes the markers.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers.demo_processes import ROOT, DemoProcess, demo_process, wait_until
from helpers.shell_examples import ShellExample, ShellSession, runnable, shell_examples

README = ROOT / "README.md"
DOCUMENTED_URL = "http://127.0.0.1:8080"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoProcess]:
    (tmp_path / "demo").mkdir()
    with demo_process(tmp_path / "demo") as running_demo:
        yield running_demo


def session(tmp_path: Path, demo: DemoProcess) -> ShellSession:
    """bash with ``kafka-purge`` on PATH (this tree's, on this interpreter) and no PURGE_* settings but the
    service's address, which the CLI reads when ``--url`` is not given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "kafka-purge"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m app "$@"\n', encoding="utf-8")
    command.chmod(command.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT), PURGE_URL=demo.base_url
    )
    workdir = tmp_path / "work"
    workdir.mkdir()
    return ShellSession(workdir, env, {DOCUMENTED_URL: demo.base_url})


def test_the_readme_marks_every_shell_example() -> None:
    """Shell commands live in fenced blocks (which this test finds), never in indented code blocks."""
    text = README.read_text(encoding="utf-8")
    outside = re.sub(r"(?ms)^\s*```.*?^\s*```", "", text)
    indented = re.findall(r"(?m)^ {4,}(?:curl|kafka-purge|TOKEN=|docker|make|pip) .*$", outside)
    assert not indented, indented
    examples = shell_examples(text)
    assert sum(e.runs for e in examples) >= 10
    assert all(e.not_run for e in examples if "localhost:" in e.script or "docker " in e.script)


def test_readme_examples_run_against_the_demo(tmp_path: Path, demo: DemoProcess) -> None:
    shell = session(tmp_path, demo)
    for example in runnable(shell_examples(README.read_text(encoding="utf-8"))):
        shell.run_checked(example)
    finished_without_failures(demo.base_url)


def banner_examples(demo: DemoProcess) -> list[ShellExample]:
    """The banner's "Try it" commands: each ``# what it shows`` line starts the next one."""
    text = "".join(demo.lines).split("Try it", 1)[1].split("Press Ctrl-C", 1)[0]
    examples: list[ShellExample] = []
    for line in text.splitlines()[1:]:
        if line.strip().startswith("# "):
            examples.append(ShellExample(0, "sh", ""))
        elif line.strip() and examples:
            examples[-1].script += line.strip() + "\n"
    return examples


def test_banner_examples_run_against_the_demo(tmp_path: Path, demo: DemoProcess) -> None:
    examples = banner_examples(demo)
    assert len(examples) >= 8
    shell = session(tmp_path, demo)
    outputs = [shell.run_checked(example).stdout for example in examples]
    everything = "\n".join(outputs)
    for shown in ('"would_be_refused":true', '"status":409', '"committed_offset":190', '"applied":6'):
        assert shown in everything, everything
    control = demo.control_url

    def orders_eu_cut_at_billing() -> bool:
        partitions = httpx.get(f"{control}/state", timeout=5).json()["topics"]["orders.eu"]["partitions"]
        return all(p["low_watermark"] == 150 for p in partitions)

    wait_until(orders_eu_cut_at_billing, 40)
    finished_without_failures(demo.base_url)


def finished_without_failures(base_url: str) -> None:
    """Every deletion the examples and the demo's policies made ends succeeded."""
    with httpx.Client(base_url=base_url, timeout=10) as client:
        grant = client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=("admin", "admin-secret")
        )
        headers = {"Authorization": f"Bearer {grant.json()['access_token']}"}

        def all_finished() -> list[dict[str, object]] | None:
            items: list[dict[str, object]] = client.get("/v1/deletions", headers=headers).json()["items"]
            done = all(d["status"] not in ("pending", "in_progress", "leader_truncated") for d in items)
            return items if done else None

        deletions = wait_until(all_finished, 30)
    assert deletions
    assert {d["status"] for d in deletions} == {"succeeded"}, deletions
