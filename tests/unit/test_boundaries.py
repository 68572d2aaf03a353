"""Architecture rules that keep the product honest, checked on the import graph of the source."""

from __future__ import annotations

import ast
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


SPARK_MODULES = {
    ROOT / "app" / "integrations" / "spark" / "listener.py",
    ROOT / "app" / "integrations" / "spark" / "audit_report.py",
}


def test_web_app_never_imports_pyspark() -> None:
    # Only the listener and the report job (run inside Spark) may; the checkpoint reader the service uses
    # and everything else must not.
    found = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path, names in imported_modules("app").items()
        if path not in SPARK_MODULES
        for name in names
        if name == "pyspark" or name.startswith("pyspark.")
    ]
    assert found == []


def test_nothing_imports_the_spark_modules() -> None:
    spark_modules = {"app.integrations.spark.listener", "app.integrations.spark.audit_report"}
    found = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path, names in imported_modules("app").items()
        if path not in SPARK_MODULES
        for name in names & spark_modules
    ]
    assert found == []


def test_the_spark_guard_sees_the_spark_modules() -> None:
    assert all(path.exists() for path in SPARK_MODULES)
    assert (
        "pyspark.sql" in imported_modules("app/integrations")[ROOT / "app/integrations/spark/audit_report.py"]
    )


def test_the_checker_sees_imports() -> None:
    # Guards the guard: the import scanner must find a real import in this very package.
    assert any("ast" in names for names in imported_modules("tests/unit").values())
