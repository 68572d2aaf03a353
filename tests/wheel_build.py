"""Test helper: the service's wheel, built from the same inputs the Dockerfile copies, and installed into a
fresh virtual environment outside the repository (its dependencies pinned to the versions this
environment runs, so pip takes them from its cache)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Everything the wheel is built from; the Dockerfile's build stage copies exactly these.
BUILD_INPUTS = ("pyproject.toml", "README.md", "app", "kafka_emulator")
# The command that builds it, in the Dockerfile as here (``--no-deps``: only the service's own wheel).
WHEEL_COMMAND = ("pip", "wheel", "--no-deps", "--wheel-dir")
INSTALL_SECONDS = 300


def build_wheel(work: Path) -> Path:
    """Copies the build inputs (no caches, no earlier build output) and builds the wheel from them."""
    source = work / "source"
    source.mkdir(parents=True)
    for name in BUILD_INPUTS:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, source / name)
    dist = work / "dist"
    # The build backend (setuptools, a dev dependency) comes from this environment: no download.
    _run([sys.executable, "-m", *WHEEL_COMMAND, str(dist), "--no-build-isolation", "--quiet", str(source)])
    (wheel,) = dist.glob("kafka_purge-*.whl")
    return wheel


def install_into_fresh_venv(wheel: Path, venv: Path) -> Path:
    """A new venv (no access to this one's packages) holding the wheel and its dependencies; its python."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    constraints = venv / "constraints.txt"
    constraints.write_text(_pinned_versions(), encoding="utf-8")
    # This environment's pip installs into the new one; --no-compile skips writing bytecode up front.
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile"]
    _run([*pip, "--constraint", str(constraints), str(wheel)])
    return python


def _pinned_versions() -> str:
    frozen = _run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"]).splitlines()
    return "\n".join(
        line
        for line in frozen
        if "==" in line and not line.lower().startswith(("kafka-purge", "kafka_purge"))
    )


def _run(command: list[str]) -> str:
    # Without PYTHONPATH and away from the repository: pip would take the source tree's
    # kafka_purge.egg-info (an editable install's) for an installed kafka-purge and skip the wheel.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        command,
        env=env,
        cwd=ROOT.parent,
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
        check=False,
    )
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    return result.stdout
