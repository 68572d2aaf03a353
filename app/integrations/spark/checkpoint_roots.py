"""Where the service may read Spark checkpoints from: the operator's ``PURGE_SPARK_CHECKPOINT_ROOTS``.

A consumer's ``checkpoint_location`` is chosen by whoever registers it, and the service reads it at every
sweep, so an unchecked location would let a caller make the service fetch any URL (``http://``) or probe
any local file (``/proc/self``, ``/etc``). A location is admitted only when it lies under one of the
configured roots, comma-separated:

- a local root is an absolute path; a location under it is resolved to its real path (symlinks followed)
  and must still lie under the root's real path, both when it is registered and when it is read;
- a remote root is a URL of an object store or HDFS (``s3``, ``s3a``, ``gs``, ``gcs``, ``abfs``,
  ``abfss``, ``az``, ``hdfs``); a location must start with it.

``file://``, ``http(s)://``, ``ftp://`` and any other scheme are refused, as are ``..`` segments, query
strings, fragments and control characters. With no root configured pull mode is off and every location
is refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, urlsplit

from app.urls import has_user_info, shown_url

REMOTE_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "abfs", "abfss", "az", "hdfs"})


class CheckpointLocationRefused(ValueError):
    """The location lies outside the configured roots (or pull mode is off)."""


def _scheme(text: str) -> str | None:
    """The URL scheme of ``text``, or None for a plain path."""
    head, sep, _ = text.partition("://")
    if sep:
        return head
    scheme = urlsplit(text).scheme
    return scheme or None


def _has_dot_segments(path: str) -> bool:
    return any(part in ("..", ".") for part in unquote(path).replace("\\", "/").split("/"))


def _as_folder(path: str) -> str:
    return path if path.endswith("/") else f"{path}/"


def _parse_root(entry: str) -> tuple[str, bool]:
    """(root as a folder, is_local); raises ``ValueError`` for a root that may not be configured."""
    scheme = _scheme(entry)
    if scheme is None:
        if not os.path.isabs(entry) or _has_dot_segments(entry.rstrip("/")):
            raise ValueError(f"checkpoint root {entry!r} must be an absolute path without '..' or '.'")
        return _as_folder(os.path.realpath(entry)), True
    if has_user_info(entry):
        raise ValueError(
            f"checkpoint root {shown_url(entry)!r} must not carry user info (user:password@): the object "
            "store's credentials belong in the Spark or Hadoop configuration"
        )
    if scheme not in REMOTE_SCHEMES:
        allowed = ", ".join(sorted(REMOTE_SCHEMES))
        raise ValueError(f"checkpoint root {entry!r}: scheme {scheme!r} is not one of {allowed}")
    parts = urlsplit(entry)
    if not parts.netloc or parts.query or parts.fragment or _has_dot_segments(parts.path.rstrip("/")):
        raise ValueError(f"checkpoint root {entry!r} must name a bucket or host and a plain path")
    return _as_folder(entry), False


@dataclass(frozen=True)
class CheckpointRoots:
    local: tuple[str, ...] = ()
    remote: tuple[str, ...] = ()

    @property
    def pull_mode(self) -> bool:
        return bool(self.local or self.remote)

    def admit(self, location: str) -> str:
        """The location to read (a local one as its real path); raises ``CheckpointLocationRefused``."""
        if not self.pull_mode:
            raise CheckpointLocationRefused(
                "pull mode is off: the operator has configured no PURGE_SPARK_CHECKPOINT_ROOTS; "
                "report progress with the listener instead"
            )
        if any(ord(char) < 32 or ord(char) == 127 for char in location):
            raise CheckpointLocationRefused("the location contains control characters")
        scheme = _scheme(location)
        if scheme is None:
            return self._admit_local(location)
        parts = urlsplit(location)
        if scheme not in REMOTE_SCHEMES or parts.query or parts.fragment or _has_dot_segments(parts.path):
            raise CheckpointLocationRefused(f"scheme {scheme!r} or the URL's form is not allowed")
        if not any(location.startswith(root) and len(location) > len(root) for root in self.remote):
            raise CheckpointLocationRefused("the location is outside every configured checkpoint root")
        return location

    def _admit_local(self, location: str) -> str:
        if not os.path.isabs(location) or _has_dot_segments(location.rstrip("/")):
            raise CheckpointLocationRefused("a local location must be an absolute path without '..' or '.'")
        real = os.path.realpath(location)
        if not any(real.startswith(root) for root in self.local):
            raise CheckpointLocationRefused(
                "the location (symlinks followed) is outside every configured checkpoint root"
            )
        return real


@lru_cache(maxsize=8)
def parse_checkpoint_roots(text: str) -> CheckpointRoots:
    """``PURGE_SPARK_CHECKPOINT_ROOTS``: comma-separated roots; raises ``ValueError`` for a bad one."""
    local: list[str] = []
    remote: list[str] = []
    for entry in (part.strip() for part in text.split(",")):
        if entry:
            root, is_local = _parse_root(entry)
            (local if is_local else remote).append(root)
    return CheckpointRoots(tuple(local), tuple(remote))
