"""Deletion requests: submit, plan, preview, cancel, the visibility of stored ones, and the intake that
stores accepted deletions (group commit) and hands them to the executor through ``ExecutorPort``."""
