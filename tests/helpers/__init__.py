"""Helpers shared by the test suites, imported as a package (``from helpers.authorization import ...``)."""
