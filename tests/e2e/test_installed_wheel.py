"""The service as a user installs it: the wheel built from the repository, installed into a fresh virtual
environment outside it, and run from an empty directory with no access to the source tree (no
PYTHONPATH, no editable install): ``migrate``, ``serve`` against the emulator (itself run from the
installed wheel) with one deletion through HTTP, and ``demo``."""

from __future__ import annotations

import json
import os
import subprocess
import time
import zipfile
from pathlib import Path

import httpx
import pytest
from helpers.child_process import running
from helpers.service_processes import database_url, produce
from wheel_build import ROOT, build_wheel, install_into_fresh_venv

pytestmark = pytest.mark.slow

MIGRATIONS = ROOT / "app" / "adapters" / "db" / "migrations"


class Installed:
    def __init__(self, wheel: Path, python: Path) -> None:
        self.wheel = wheel
        self.python = python
        self.bin = python.parent

    def command(self, *args: str) -> list[str]:
        return [str(self.bin / "kafka-purge"), *args]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(work)
    return Installed(wheel, install_into_fresh_venv(wheel, work / "venv"))


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def clean_env(**settings: str) -> dict[str, str]:
    """This process's environment without anything that could reach the source tree or configure it."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("PURGE_")}
    return {**env, **settings}


def test_the_wheel_carries_the_migrations_and_the_emulator(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    expected = {
        f"app/adapters/db/migrations/{path.relative_to(MIGRATIONS)}"
        for path in MIGRATIONS.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert len(expected) >= 3
    assert expected <= names
    assert "kafka_emulator/__main__.py" in names
    assert {name.split("/")[0] for name in names} == {"app", "kafka_emulator", "kafka_purge-0.1.0.dist-info"}


def test_the_installed_packages_are_the_wheels(installed: Installed, empty_dir: Path) -> None:
    script = "import app, kafka_emulator; print(app.__file__); print(kafka_emulator.__file__)"
    result = subprocess.run(
        [str(installed.python), "-c", script], env=clean_env(), cwd=empty_dir, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    site = installed.python.parent.parent.resolve()
    assert all(Path(line).resolve().is_relative_to(site) for line in result.stdout.split()), result.stdout


@pytest.mark.timeout(180)
async def test_migrate_serve_and_delete_from_an_empty_directory(
    installed: Installed, empty_dir: Path, tmp_path: Path
) -> None:
    topology = tmp_path / "topology.json"
    topology.write_text(json.dumps({"topics": [{"name": "orders", "partitions": 3}]}), encoding="utf-8")
    emulator_command = [str(installed.python), "-m", "kafka_emulator", "--config", str(topology)]
    with running(emulator_command, clean_env(), empty_dir) as emulator:
        async with database_url("postgresql", tmp_path) as url:
            settings = {
                "PURGE_DATABASE_URL": url,
                "PURGE_AUTH_DEV_ISSUER": "true",
                "PURGE_AUTH_DEV_CLIENTS": '{"admin": "admin-secret"}',
                "PURGE_SUPER_USERS": "User:admin",
                "PURGE_WORKER_POLL_INTERVAL_SECONDS": "0.05",
            }
            # migrate needs the database only: it runs while the emulator starts.
            with running(installed.command("migrate"), clean_env(**settings), empty_dir) as migrate:
                ready = json.loads(emulator.wait_for_line(r"^\{.*\"bootstrap\".*\}$").group(0))
                assert migrate.popen.wait(timeout=60) == 0, "".join(migrate.lines)
            assert "database schema is up to date" in "".join(migrate.lines)
            clusters = json.dumps({"main": {"bootstrap_servers": ready["bootstrap"]}})
            env = clean_env(PURGE_CLUSTERS=clusters, **settings)
            with running(installed.command("serve", "--port", "0"), env, empty_dir) as service:
                await produce(ready["bootstrap"], "orders", 3, records=40)  # while serve starts
                port = service.wait_for_line(r"serving HTTP on [\d.]+:(\d+)").group(1)
                try:
                    done = delete_through_http(f"http://127.0.0.1:{port}")
                except httpx.HTTPError as exc:
                    raise AssertionError("".join(service.lines)) from exc
                assert service.stop() == 0
    assert [p["status"] for p in done["partitions"]] == ["succeeded"] * 3
    assert sorted(os.listdir(empty_dir)) == []  # everything went to PostgreSQL


def delete_through_http(base: str) -> dict[str, object]:
    with httpx.Client(base_url=base, timeout=10) as client:
        grant = client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=("admin", "admin-secret")
        )
        headers = {"Authorization": f"Bearer {grant.json()['access_token']}"}
        body = {
            "cluster": "main",
            "partitions": [{"topic": "orders", "partition": p, "offset": 25} for p in range(3)],
            "reason": "installed wheel",
        }
        created = client.post("/v1/deletions", json=body, headers=headers)
        assert created.status_code == 202, created.text
        deadline = time.monotonic() + 30
        while (deletion := client.get(created.headers["location"], headers=headers).json())["status"] in (
            "pending",
            "in_progress",
        ):
            assert time.monotonic() < deadline, deletion
            time.sleep(0.1)
        return dict(deletion)


@pytest.mark.timeout(120)
def test_demo_from_an_empty_directory(installed: Installed, empty_dir: Path) -> None:
    with running(installed.command("demo", "--port", "0"), clean_env(), empty_dir) as demo:
        docs = demo.wait_for_line(r"Swagger UI:\s+(http://\S+)/docs").group(1)
        demo.wait_for_line(r"kafka-purge demo is running")
        assert httpx.get(f"{docs}/readyz", timeout=10).status_code == 200
        # Swagger UI's bundle comes from an installed dependency, not from the repository.
        bundle = httpx.get(f"{docs}/docs/assets/swagger-ui-bundle.js", timeout=10)
        assert bundle.status_code == 200
        assert "SwaggerUIBundle" in bundle.text
        assert demo.stop() == 0
    assert (empty_dir / "data" / "demo.db").is_file()
