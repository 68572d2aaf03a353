"""Retention: the sweep of a consumed-data policy, and who may manage policies and consumers."""
