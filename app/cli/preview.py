"""What a deletion would do, from the service's dry run (``POST /v1/deletions`` with ``dry_run``): the
``preview`` command's output and the summary the confirmation prompt shows before ``delete`` sends."""

from __future__ import annotations

from typing import Any

from app.cli.output import say, table
from app.cli.prompt import ask

PREVIEW_HEADERS = (
    "TOPIC",
    "PARTITION",
    "OFFSET",
    "LOG_START",
    "HIGH_WATERMARK",
    "RECORDS",
    "WOULD",
    "UNREAD_BY",
)


def would(partition: dict[str, Any]) -> str:
    """What sending this partition would do, in words (Kafka's error name when it would fail)."""
    outcome = partition["predicted_outcome"]
    if outcome != "NONE":
        return f"fail: {outcome}"
    if partition["records_deleted"] == 0:
        return "nothing to delete"
    return "delete"


def summary_lines(preview: dict[str, Any]) -> list[str]:
    """Records and partitions affected, consumer groups with unread records, partitions that would fail
    and why the service would refuse the request."""
    partitions = preview["partitions"]
    topics = sorted({p["topic"] for p in partitions})
    lines = [
        f"This deletes {preview['records_deleted']} record(s) from {len(partitions)} partition(s) of "
        f"{', '.join(topics)} on cluster {preview['cluster']}."
    ]
    groups = preview["unconsumed_groups"]
    if groups:
        lines.append(f"{len(groups)} consumer group(s) have not read these records yet:")
        for group in groups:
            active = "active members" if group["has_active_members"] else "no active members"
            lines.append(
                f"  {group['group']} ({group['state']}, {active}): "
                f"{group['unread_records']} unread record(s) "
                f"in {group['partitions']} partition(s)"
            )
    else:
        lines.append("No consumer group has unread records among them.")
    failing = [p for p in partitions if p["predicted_outcome"] != "NONE"]
    if failing:
        names = ", ".join(f"{p['topic']}-{p['partition']} ({p['predicted_outcome']})" for p in failing[:10])
        lines.append(f"{len(failing)} partition(s) would fail: {names}")
    for p in partitions:
        checked = (p.get("cut_time") or {}).get("timestamps") or {}
        if checked.get("out_of_order"):
            lines.append(
                f"warning: {p['topic']}-{p['partition']}: timestamps around the cut are out of order "
                f"({checked['newer_below_cut']} newer below, {checked['older_at_or_after_cut']} older above)"
            )
    lines.extend(f"the service would refuse it: {refusal}" for refusal in preview["refusals"])
    return lines


def print_preview(preview: dict[str, Any]) -> None:
    rows = [
        [
            p["topic"],
            p["partition"],
            p["resolved_offset"],
            p["log_start_offset"],
            p["high_watermark"],
            p["records_deleted"],
            would(p),
            ", ".join(f"{g['group']} ({g['unread_records']})" for g in p["unconsumed_groups"]),
        ]
        for p in preview["partitions"]
    ]
    table(PREVIEW_HEADERS, rows)
    say()
    for line in summary_lines(preview):
        say(line)
    say("Preview only: nothing was deleted.")


def confirmed(preview: dict[str, Any]) -> bool:
    """Show the preview's summary on the terminal and ask; only ``y`` or ``yes`` goes ahead."""
    for line in summary_lines(preview):
        say(line, err=True)
    return ask("Delete these records? This cannot be undone.")


def refused(preview: dict[str, Any]) -> None:
    """The summary and why nothing is sent: the service would refuse the request as it stands."""
    for line in summary_lines(preview):
        say(line, err=True)
    say("Not deleted: the service would refuse this request (see above).", err=True)
