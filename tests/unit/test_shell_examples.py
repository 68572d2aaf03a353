"""How the README examples test reads a Markdown document and runs its blocks (``helpers.shell_examples``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.shell_examples import ShellSession, runnable, shell_examples

DOCUMENT = """\
Intro.

<!-- not-run: needs Docker -->
```sh
docker compose up
```

<!-- expect: "status":409 -->
<!-- eventually: done -->
```bash
curl -s http://127.0.0.1:8080/x
```

A comment that is not right above a block is forgotten:
<!-- not-run: stale -->

text in between

```console
$ kafka-purge status "$ID" \\
    --output json
{"status": "succeeded"}
$ echo two
two
```

- a list item:

  <!-- expect: ok -->
  ```sh
  echo ok
  ```

```python
print("not a shell block")
```

```json
{"not": "a shell block"}
```
"""


def test_blocks_their_directives_and_console_commands() -> None:
    examples = shell_examples(DOCUMENT)
    assert [(e.line, e.language) for e in examples] == [(4, "sh"), (10, "bash"), (19, "console"), (30, "sh")]
    docker, curl, console, listed = examples
    assert docker.not_run == "needs Docker"
    assert not docker.runs
    assert curl.runs
    assert (curl.expect, curl.eventually) == (['"status":409'], ["done"])
    assert console.runs
    assert console.script == 'kafka-purge status "$ID" \\\n    --output json\necho two'
    assert (listed.script, listed.expect) == ("echo ok", ["ok"])
    assert list(runnable(examples)) == [curl, console, listed]


def test_a_session_carries_variables_and_files_from_block_to_block(tmp_path: Path) -> None:
    document = """\
```sh
GREETING=$(echo hello)
export TARGET=world
cat > note.txt <<'EOF'
from a heredoc
EOF
```

<!-- expect: ^hello world from a heredoc at http://demo:1$ -->
```sh
echo "$GREETING $TARGET $(cat note.txt) at http://127.0.0.1:8080"
```

```sh
false
echo never
```
"""
    first, second, failing = shell_examples(document)
    shell = ShellSession(tmp_path, {"PATH": "/usr/bin:/bin"}, {"http://127.0.0.1:8080": "http://demo:1"})
    shell.run_checked(first)
    assert shell.run_checked(second).stdout == "hello world from a heredoc at http://demo:1\n"
    with pytest.raises(AssertionError, match="exit 1"):
        shell.run_checked(failing)
    assert "never" not in shell.run(failing).stdout
