"""Shell examples of a Markdown document, and running them in order with bash, the way a reader pastes them.

An example is a fenced block tagged ``sh``, ``bash``, ``shell`` or ``console`` (``console``: only the
``$ `` lines and their continuations are commands). HTML comments on the lines right above the opening
fence say more about it (``CONTRIBUTING.md`` documents them):

- ``<!-- not-run: why -->``: not run (it needs Docker, starts the demo itself, ...);
- ``<!-- expect: REGEX -->``: its standard output must match (Python ``re.search``); may repeat;
- ``<!-- eventually: REGEX -->``: as ``expect``, but the block is run again (so it must only read) until
  the output matches or ``EVENTUALLY_SECONDS`` pass.

Blocks run one by one in a fresh ``bash -euo pipefail`` each, in one working directory; the shell
variables a block sets are handed to the next blocks, as in one terminal.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

RUN_LANGUAGES = frozenset({"sh", "bash", "shell", "console"})
BLOCK_TIMEOUT_SECONDS = 120.0
EVENTUALLY_SECONDS = 40.0

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w-]*)")
_DIRECTIVE = re.compile(r"^\s*<!--\s*(?P<name>not-run|expect|eventually)\b:?\s*(?P<value>.*?)\s*-->\s*$")


@dataclass
class ShellExample:
    line: int  # 1-based line of the opening fence
    language: str
    script: str
    not_run: str | None = None
    expect: list[str] = field(default_factory=list)
    eventually: list[str] = field(default_factory=list)

    @property
    def runs(self) -> bool:
        return self.not_run is None


def _console_commands(lines: list[str]) -> list[str]:
    commands: list[str] = []
    continued = False
    for line in lines:
        if continued or line.startswith("$ "):
            commands.append(line if continued else line[2:])
            continued = line.rstrip().endswith("\\")
    return commands


def shell_examples(markdown: str) -> list[ShellExample]:
    """Every fenced shell block of ``markdown``, in document order, with its directives."""
    lines = markdown.splitlines()
    found: list[ShellExample] = []
    directives: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            directive = _DIRECTIVE.match(lines[i])
            if directive:
                directives.append((directive["name"], directive["value"]))
            elif lines[i].strip():
                directives = []
            i += 1
            continue
        indent, closing, language = len(fence["indent"]), fence["fence"], fence["lang"]
        end = i + 1
        while end < len(lines) and lines[end].strip() != closing:
            end += 1
        body = [line[indent:] for line in lines[i + 1 : end]]
        if language in RUN_LANGUAGES:
            example = ShellExample(
                i + 1, language, "\n".join(_console_commands(body) if language == "console" else body)
            )
            for name, value in directives:
                if name == "not-run":
                    example.not_run = value or "not run"
                else:
                    getattr(example, name).append(value)
            found.append(example)
        directives = []
        i = end + 1
    return found


@dataclass
class Outcome:
    example: ShellExample
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return (
            f"README example at line {self.example.line} (exit {self.returncode}):\n{self.example.script}\n"
            f"--- stdout:\n{self.stdout[-3000:]}\n--- stderr:\n{self.stderr[-3000:]}"
        )


class ShellSession:
    """Runs examples in ``workdir`` with ``env``; ``replacements`` rewrite each script first (the
    documented address of the demo to the one under test)."""

    def __init__(self, workdir: Path, env: Mapping[str, str], replacements: Mapping[str, str]) -> None:
        self.workdir = workdir
        self.env = dict(env)
        self.replacements = dict(replacements)
        self.state = workdir / ".shell-variables"
        self.state.write_text("", encoding="utf-8")

    def _script(self, example: ShellExample) -> str:
        script = example.script
        for documented, actual in self.replacements.items():
            script = script.replace(documented, actual)
        # The block is a file of its own, sourced between loading the variables earlier blocks set and
        # saving every variable a fresh shell (with this environment) does not have.
        block = self.workdir / ".example.sh"
        block.write_text(script + "\n", encoding="utf-8")
        return (
            "shell_own=\" $(compgen -v | tr '\\n' ' ') shell_own name \"\n"
            f"source {self.state}\n"
            f"source {block}\n"
            "for name in $(compgen -v); do\n"
            '  case "$shell_own" in *" $name "*) ;; *) declare -p "$name" ;; esac\n'
            f"done > {self.state}.next\n"
        )

    def run(self, example: ShellExample) -> Outcome:
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-euo", "pipefail", "-c", self._script(example)],
            cwd=self.workdir,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT_SECONDS,
        )
        outcome = Outcome(example, result.returncode, result.stdout, result.stderr)
        if result.returncode == 0:
            Path(f"{self.state}.next").replace(self.state)
        return outcome

    def run_checked(self, example: ShellExample) -> Outcome:
        """Runs ``example``; raises AssertionError when it fails or its output misses an expectation."""
        deadline = time.monotonic() + EVENTUALLY_SECONDS
        while True:
            outcome = self.run(example)
            assert outcome.returncode == 0, outcome.describe()
            missing = [p for p in example.expect if not re.search(p, outcome.stdout)]
            assert not missing, f"expected {missing}\n{outcome.describe()}"
            waiting = [p for p in example.eventually if not re.search(p, outcome.stdout)]
            if not waiting:
                return outcome
            assert time.monotonic() < deadline, f"never matched {waiting}\n{outcome.describe()}"
            time.sleep(0.5)


def runnable(examples: list[ShellExample]) -> Iterator[ShellExample]:
    return (example for example in examples if example.runs)
