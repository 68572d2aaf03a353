"""Helpers of the emulator suites: raw wire clients, record batches, schema samples."""
