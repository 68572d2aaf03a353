"""Architecture rules that keep the product honest, checked on the import graph of the source."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(package: str) -> dict[Path, set[str]]:
    """Every module imported (absolute, or relative resolved to absolute) by each file in ``package``."""
    result: dict[Path, set[str]] = {}
    for path in (ROOT / package).rglob("*.py"):
        module_parts = path.relative_to(ROOT).with_suffix("").parts
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module_parts[: len(module_parts) - node.level]
                    names.add(".".join((*base, node.module or "")).rstrip("."))
                else:
                    names.add(node.module or "")
        result[path] = names
    return result


def offenders(package: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{path.relative_to(ROOT)} imports {name}"
        for path, names in imported_modules(package).items()
        for name in names
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    )


def test_product_never_imports_the_emulator() -> None:
    assert offenders("app", ("kafka_emulator",)) == []


def test_domain_depends_on_no_framework() -> None:
    assert (
        offenders("app/domain", ("fastapi", "starlette", "sqlalchemy", "aiokafka", "app.adapters", "app.api"))
        == []
    )


SPARK_CLIENT = ROOT / "clients" / "spark"
SPARK_CLIENT_DEPENDENCIES = {"pyspark", "httpx2", "authlib"}


def test_the_service_never_imports_pyspark_nor_the_spark_client() -> None:
    assert offenders("app", ("pyspark", "kafka_purge_spark")) == []


def test_the_spark_client_imports_only_its_declared_dependencies() -> None:
    # Never the service (``app``), nor anything pip would not install with kafka-purge-spark.
    allowed = set(sys.stdlib_module_names) | SPARK_CLIENT_DEPENDENCIES | {"kafka_purge_spark"}
    found = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path, names in imported_modules("clients/spark/src").items()
        for name in names
        if name.split(".")[0] not in allowed
    ]
    assert found == []
    project = tomllib.loads((SPARK_CLIENT / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~;\[ ]", requirement)[0].lower() for requirement in project["dependencies"]}
    assert declared == SPARK_CLIENT_DEPENDENCIES


def test_the_spark_guard_sees_the_spark_modules() -> None:
    client = imported_modules("clients/spark/src")
    assert "pyspark.sql" in client[SPARK_CLIENT / "src" / "kafka_purge_spark" / "audit_report.py"]
    assert (
        "authlib.integrations.httpx_client"
        in client[SPARK_CLIENT / "src" / "kafka_purge_spark" / "tokens.py"]
    )


def test_the_checker_sees_imports() -> None:
    # Guards the guard: the import scanner must find a real import in this very package.
    assert any("ast" in names for names in imported_modules("tests/unit").values())


# Arrows only point down: api -> services -> domain <- adapters; worker -> services/domain/adapters.
# Only the composition root (``app.main``) sees more. ``app.errors`` is below everyone.
UPWARD = {
    "app/api": ("app.worker",),
    "app/services": ("app.api", "app.worker"),
    "app/schemas": ("app.api", "app.services", "app.worker", "app.adapters"),
    "app/worker": ("app.api",),
    "app/adapters": ("app.api", "app.services", "app.worker", "app.services.runtime", "app.main"),
}
# Everything in ``app`` the domain may not import: all of it but ``app.errors`` and the domain itself.
DOMAIN_FORBIDDEN = tuple(
    f"app.{path.stem}"
    for path in (ROOT / "app").iterdir()
    if path.stem not in {"domain", "errors", "__init__", "__main__", "__pycache__"}
)


def test_imports_point_down() -> None:
    found = [offence for package, forbidden in UPWARD.items() for offence in offenders(package, forbidden)]
    assert found == []


def test_domain_imports_nothing_of_the_app_but_errors() -> None:
    assert offenders("app/domain", DOMAIN_FORBIDDEN) == []


def test_only_the_app_factory_imports_the_api() -> None:
    allowed = {ROOT / "app" / "main.py"}
    found = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path, names in imported_modules("app").items()
        if path not in allowed and not path.is_relative_to(ROOT / "app" / "api")
        for name in names
        if name == "app.api" or name.startswith("app.api.")
    ]
    assert found == []


def test_the_direction_rules_name_real_places() -> None:
    # Guards the guard: the package list names real folders, and the domain list names real modules.
    assert all((ROOT / package).is_dir() for package in UPWARD)
    assert {"app.api", "app.services", "app.worker", "app.adapters", "app.settings"} <= set(DOMAIN_FORBIDDEN)


def folder_graph() -> dict[str, set[str]]:
    """Which top-level parts of ``app`` (folders and modules) import which others."""
    graph: dict[str, set[str]] = {}
    for path, names in imported_modules("app").items():
        source = path.relative_to(ROOT / "app").parts[0].removesuffix(".py")
        targets = {name.split(".")[1] for name in names if name.startswith("app.") and name.count(".") >= 1}
        graph.setdefault(source, set()).update(targets - {source})
    return graph


def cycle_in(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of ``graph`` as the path that closes it, or [] when there is none."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str]:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return []
        for target in sorted(graph.get(node, ())):
            if found := visit(target, [*path, node]):
                return found
        done.add(node)
        return []

    for node in sorted(graph):
        if found := visit(node, []):
            return found
    return []


def test_no_import_cycle_between_the_parts_of_the_app() -> None:
    assert cycle_in(folder_graph()) == []


def test_the_cycle_finder_finds_cycles() -> None:
    # Guards the guard.
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) == []
    assert "services" in folder_graph()["api"]


def test_routers_open_no_transaction() -> None:
    # Routers parse, call one service and render: sessions and audit appends belong to the services.
    assert offenders("app/api", ("app.adapters.db.session", "app.audit.chain", "app.audit.events")) == []
