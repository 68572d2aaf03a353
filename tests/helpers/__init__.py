"""Helpers shared by the test suites, imported as a package (``from helpers.api import ...``): the
``tests`` folder is on the path through its root ``conftest.py``. Conftest files hold fixtures only, and
no test module imports another."""
