"""The exit codes of ``kafka-purge``'s client commands, as ``--help`` and the README list them."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    UNEXPECTED = 1
    USAGE = 2
    REFUSED = 3
    PARTIALLY_FAILED = 4
    FAILED = 5
    INTERRUPTED = 130


EXIT_CODES_HELP = """\
exit codes:
  0    done (a preview, a deletion that succeeded, a verified audit trail or certificate)
  1    unexpected: the service could not be reached or answered 5xx
  2    usage: bad flags or input (nothing was sent), no credentials, no TTY to confirm on
  3    refused: by the service (401, 403, 404, 409 unread records or offsets, 422) or at the prompt
  4    partially failed: some partitions of the deletion failed
  5    failed: every partition failed, evidence finds records not deleted, the audit chain is broken,
       or a certificate does not verify
  130  interrupted (Ctrl-C)"""


def deletion_exit(status: str) -> Exit:
    """The exit code for a deletion's final status (``cancelled`` ends normally: someone asked for it)."""
    if status == "partially_failed":
        return Exit.PARTIALLY_FAILED
    if status == "failed":
        return Exit.FAILED
    if status in ("rejected", "expired"):
        return Exit.REFUSED  # its approvers said no, or nobody said yes in time
    return Exit.OK
