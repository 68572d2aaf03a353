"""The image, read statically (no Docker engine in CI): its build stage makes the wheel the install test
makes, from the same inputs and with the same command, and the image installs that wheel (and nothing from
the source tree), runs ``kafka-purge serve`` and declares a HEALTHCHECK."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from wheel_build import BUILD_INPUTS, WHEEL_COMMAND

ROOT = Path(__file__).resolve().parents[2]


def instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) per Dockerfile instruction, continuation lines joined, comments dropped."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for instruction in instructions():
        if instruction[0] == "FROM":
            result.append([])
        result[-1].append(instruction)
    return result


def test_the_build_stage_builds_the_wheel_from_the_install_tests_inputs() -> None:
    build, _ = stages()
    copied = {source for name, args in build if name == "COPY" for source in shlex.split(args)[:-1]}
    assert copied == set(BUILD_INPUTS)
    [run] = [shlex.split(args) for name, args in build if name == "RUN"]
    assert run[: len(WHEEL_COMMAND)] == list(WHEEL_COMMAND)
    assert run[len(WHEEL_COMMAND) :] == ["/dist", "."]


def test_the_image_installs_that_wheel_and_nothing_else() -> None:
    _, image = stages()
    copies = [args for name, args in image if name == "COPY"]
    assert copies == ["--from=build /dist /dist"]
    [run] = [args for name, args in image if name == "RUN"]
    assert "pip install --no-cache-dir /dist/kafka_purge-*.whl" in run


def test_the_image_serves_and_declares_a_healthcheck() -> None:
    _, image = stages()
    steps = dict(image)
    assert json.loads(steps["CMD"])[:2] == ["kafka-purge", "serve"]
    assert "USER" in steps
    check = steps["HEALTHCHECK"]
    assert "CMD" in check
    assert "http://127.0.0.1:8080/healthz" in check
    assert json.loads(steps["CMD"])[-2:] == ["--port", "8080"]
