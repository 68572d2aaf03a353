"""How the client commands reach the service: its URL, a bearer token, readable errors, exit codes.

The token is, in this order: the contents of ``--token-file`` (``PURGE_TOKEN_FILE``), ``PURGE_TOKEN``, or
one from the client-credentials grant (``--client-id``/``PURGE_CLIENT_ID`` with the secret from
``PURGE_CLIENT_SECRET`` or ``--client-secret-file``/``PURGE_CLIENT_SECRET_FILE``) at ``<url>/oauth/token``
unless ``--token-url``/``PURGE_TOKEN_URL`` names another issuer. Secrets never come from the command line,
where other users see them in the process list.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from authlib.integrations.httpx_client import OAuth2Client, OAuthError

from app.cli.exits import EXIT_CODES_HELP, Exit
from app.cli.input import InputError, read_text
from app.cli.output import say

DEFAULT_URL = "http://127.0.0.1:8080"

ENVIRONMENT_HELP = f"""\
environment:
  PURGE_URL                  service base URL (default {DEFAULT_URL}; --url)
  PURGE_DEFAULT_CLUSTER      cluster of delete/preview/acl/policy (--cluster)
  PURGE_TOKEN                a bearer token
  PURGE_TOKEN_FILE           a file holding a bearer token (--token-file)
  PURGE_CLIENT_ID            OAuth2 client id for the client-credentials grant (--client-id)
  PURGE_CLIENT_SECRET        its secret
  PURGE_CLIENT_SECRET_FILE   a file holding its secret (--client-secret-file)
  PURGE_TOKEN_URL            the token endpoint (default <url>/oauth/token; --token-url)"""

# What to do after each refusal, by HTTP status.
_ADVICE = {
    401: "the token is missing, expired or not accepted: check PURGE_TOKEN/--token-file or the client "
    "credentials",
    403: "not allowed: ask an administrator for the ACL (kafka-purge acl list) or the setting named above",
    404: "it does not exist or you may not see it: check the id, topic and --cluster (kafka-purge list)",
    409: "the request conflicts with the current state (see above)",
    413: "the request is too large: split it",
    415: "the service expects JSON",
    422: "fix the fields named above",
}


class ApiError(Exception):
    """The service (or its token issuer) refused or failed; ``exit`` is the command's exit code."""

    def __init__(self, message: str, exit: Exit) -> None:
        super().__init__(message)
        self.exit = exit


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


def connection_options(parser: argparse.ArgumentParser) -> None:
    """Where the service is, how to get a token, and the output format: every client command takes them
    (its ``--help`` ends with the environment variables and exit codes)."""
    parser.epilog = f"{ENVIRONMENT_HELP}\n\n{EXIT_CODES_HELP}"
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    group = parser.add_argument_group("connection (see environment below)")
    group.add_argument("--url", default=os.environ.get("PURGE_URL", DEFAULT_URL), help="service base URL")
    group.add_argument(
        "--token-file", type=Path, default=_env_path("PURGE_TOKEN_FILE"), help="bearer token file"
    )
    group.add_argument("--client-id", default=os.environ.get("PURGE_CLIENT_ID"), help="OAuth2 client id")
    group.add_argument(
        "--client-secret-file",
        type=Path,
        default=_env_path("PURGE_CLIENT_SECRET_FILE"),
        metavar="FILE",
        help="file holding the client secret (or PURGE_CLIENT_SECRET)",
    )
    group.add_argument(
        "--token-url",
        default=os.environ.get("PURGE_TOKEN_URL"),
        help="token endpoint (default <url>/oauth/token)",
    )
    parser.add_argument(
        "--format", choices=("table", "json"), default="table", help="output format (default table)"
    )


def cluster_option(parser: argparse.ArgumentParser) -> None:
    cluster = os.environ.get("PURGE_DEFAULT_CLUSTER")
    parser.add_argument(
        "-c",
        "--cluster",
        default=cluster,
        required=cluster is None,
        help="the Kafka cluster's name in the service (PURGE_DEFAULT_CLUSTER)",
    )


def _secret(path: Path | None, variable: str, what: str) -> str | None:
    if path is not None:
        secret = read_text(path, what).strip()
        if not secret:
            raise InputError(f"{what} {path} is empty")
        return secret
    return os.environ.get(variable) or None


@contextmanager
def api_client(args: argparse.Namespace) -> Iterator[httpx2.Client]:
    """An open HTTP client for ``--url`` carrying a bearer token: a given one as it is, or one from the
    client-credentials grant through Authlib, which fetches a new one once it expires (``--wait``)."""
    base_url = args.url.rstrip("/")
    if token := _secret(args.token_file, "PURGE_TOKEN", "token file"):
        with httpx2.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            yield c
        return
    secret = _secret(args.client_secret_file, "PURGE_CLIENT_SECRET", "client secret file")
    if not (args.client_id and secret):
        raise InputError(
            "no credentials: set PURGE_TOKEN (or --token-file), or a client id (--client-id, "
            "PURGE_CLIENT_ID) "
            "with its secret (PURGE_CLIENT_SECRET or --client-secret-file)"
        )
    token_url = args.token_url or f"{base_url}/oauth/token"
    client = OAuth2Client(
        args.client_id,
        secret,
        token_endpoint=token_url,
        grant_type="client_credentials",
        base_url=base_url,
        timeout=60,
    )
    with client:
        try:
            client.fetch_token()
        except (OAuthError, ValueError) as exc:
            raise ApiError(
                f"token request to {token_url} refused: {exc}; check the client id and secret", Exit.REFUSED
            ) from exc
        except httpx2.TransportError as exc:
            raise ApiError(
                _unreachable(token_url, exc, "--token-url or PURGE_TOKEN_URL"), Exit.UNEXPECTED
            ) from exc
        yield client


def _problem_text(response: httpx2.Response) -> str:
    """The problem's title, detail and its first 20 errors (a JSON pointer and what is wrong there)."""
    try:
        problem = response.json()
    except ValueError:
        return response.text[:300]
    if not isinstance(problem, dict):
        return response.text[:300]
    lines = [": ".join(str(p) for p in (problem.get("title"), problem.get("detail")) if p)]
    for error in (problem.get("errors") or [])[:20]:
        where = str(error.get("pointer") or error.get("parameter") or "").removeprefix("#") or "body"
        lines.append(f"  {where}: {error.get('detail')}")
    for group in (problem.get("groups") or [])[:20]:
        lines.append(f"  group {group.get('group')}: {group.get('unread_records')} unread record(s)")
    return "\n".join(lines)


def answer_json(response: httpx2.Response, *expected: int) -> Any:
    """The answer's JSON if its status is one of ``expected``; else ``ApiError`` naming the URL, the
    problem and what to do."""
    if response.status_code in expected:
        return response.json()
    request = response.request
    status = response.status_code
    message = f"{request.method} {request.url} answered {status}: {_problem_text(response)}"
    if status == 409 and "group" in message:
        message += "\n  to delete anyway: --allow-unconsumed, or --ignore-group GROUP for each group above"
    elif status in _ADVICE:
        message += f"\n  {_ADVICE[status]}"
    raise ApiError(message, Exit.UNEXPECTED if status >= 500 else Exit.REFUSED)


def _unreachable(url: str, exc: httpx2.TransportError, setting: str) -> str:
    reason = str(exc) or exc.__class__.__name__
    return f"cannot reach {url}: {reason}; is the service running there? (set {setting})"


def _request_url(exc: httpx2.TransportError) -> str | None:
    try:
        return str(exc.request.url)
    except RuntimeError:  # raised before a request existed
        return None


def run_client_command(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``handler``'s exit code, or the code of the error that ended it, with a message on stderr."""
    try:
        return int(handler(args))
    except InputError as exc:
        say(f"kafka-purge: {exc}", err=True)
        return Exit.USAGE
    except ApiError as exc:
        say(f"kafka-purge: {exc}", err=True)
        return exc.exit
    except httpx2.TransportError as exc:
        url = _request_url(exc) or args.url
        say(f"kafka-purge: {_unreachable(url, exc, '--url or PURGE_URL')}", err=True)
        return Exit.UNEXPECTED
    except (OAuthError, httpx2.HTTPError) as exc:
        say(f"kafka-purge: {args.url}: {exc}", err=True)
        return Exit.UNEXPECTED
