"""Deletion requests: submit, plan, preview, cancel, the visibility of stored ones, and the group commit
that stores accepted deletions, their first rows claimed for the executor through ``ExecutorPort``."""
