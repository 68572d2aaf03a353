"""The ``AllowAll`` test double answers every question of ``Authorization`` with the same signature."""

from __future__ import annotations

import inspect

from helpers.authorization import AllowAll

from app.services.authorization import Authorization


def test_allow_all_implements_every_method_of_the_protocol() -> None:
    asked = {
        name for name, _ in inspect.getmembers(Authorization, inspect.isfunction) if not name.startswith("_")
    }
    assert asked
    for name in asked:
        double = getattr(AllowAll, name)
        assert inspect.signature(double) == inspect.signature(getattr(Authorization, name)), name
