"""What an operator reads when the configuration is wrong: one line naming the ``PURGE_*`` variable and
what it should hold (never its value: it may be a secret), and a warning for a ``PURGE_*`` variable no
setting reads, with the closest known name.
"""

from __future__ import annotations

import difflib
import json
import types
from collections.abc import Iterator, Mapping
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import SettingsError

from app.settings import Settings

PREFIX = "PURGE_"
# Read by the command-line client (``app/cli/client.py``), not by the service's settings.
CLIENT_VARIABLES = frozenset(
    {
        "PURGE_URL",
        "PURGE_DEFAULT_CLUSTER",
        "PURGE_TOKEN",
        "PURGE_TOKEN_FILE",
        "PURGE_TOKEN_URL",
        "PURGE_CLIENT_ID",
        "PURGE_CLIENT_SECRET",
        "PURGE_CLIENT_SECRET_FILE",
    }
)
# Read by the command line before the settings (``app.logs``).
PROCESS_VARIABLES = frozenset({"PURGE_LOG_FORMAT"})


SCALARS: dict[Any, str] = {
    str: "a string",
    SecretStr: "a string",
    bool: "true or false",
    int: "an integer",
    float: "a number",
}


class UnsafeConfiguration(ValueError):
    """A configuration the service refuses to start with, beyond what the settings validate alone."""


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _group_model(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def setting_fields() -> Iterator[tuple[str, FieldInfo]]:
    """Every environment variable the settings read, with the field it fills."""
    for name, field in Settings.model_fields.items():
        yield f"{PREFIX}{name.upper()}", field
        if (group := _group_model(field)) is not None:
            for member, member_field in group.model_fields.items():
                yield f"{PREFIX}{name.upper()}_{member.upper()}", member_field


def known_variables() -> frozenset[str]:
    return frozenset(name for name, _ in setting_fields()) | CLIENT_VARIABLES | PROCESS_VARIABLES


def unknown_variable_warnings(environ: Mapping[str, str]) -> list[str]:
    """One warning per ``PURGE_*`` variable nothing reads (a typo is otherwise silently ignored)."""
    known = known_variables()
    warnings = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(PREFIX) or upper in known:
            continue
        closest = difflib.get_close_matches(upper, known, n=1, cutoff=0.6)
        hint = f" (did you mean {closest[0]}?)" if closest else ""
        warnings.append(f"unknown environment variable {name} is ignored{hint}")
    return warnings


def expected_shape(annotation: Any) -> str:
    """What a value of ``annotation`` looks like, in words: ``a JSON array of strings``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        return " or ".join(expected_shape(arg) for arg in args if arg is not type(None))
    if origin is list:
        return f"a JSON array of {_plural(args[0])}"
    if origin is dict:
        return f"a JSON object mapping names to {_plural(args[1])}"
    if _is_model(annotation):
        return "a JSON object with " + ", ".join(annotation.model_fields)
    if origin is Literal:
        return "one of " + ", ".join(str(arg) for arg in args)
    return SCALARS.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _plural(annotation: Any) -> str:
    shape = expected_shape(annotation)
    if shape.startswith("a JSON object with"):
        return "objects with " + shape.removeprefix("a JSON object with ")
    if shape in ("a string", "an integer"):
        return shape.split(" ", 1)[1] + "s"
    return shape.replace("a JSON array", "arrays").replace("a JSON object", "objects")


def _is_json(field: FieldInfo) -> bool:
    """pydantic-settings decodes lists, dicts and models from JSON; scalars are read as they are."""
    annotation = field.annotation
    union = get_origin(annotation) in (Union, types.UnionType)
    options = [a for a in get_args(annotation) if a is not type(None)] if union else [annotation]
    return any(get_origin(a) in (list, dict) or _is_model(a) for a in options)


def _json_errors(environ: Mapping[str, str]) -> Iterator[str]:
    upper = {name.upper(): value for name, value in environ.items()}
    for name, field in setting_fields():
        value = upper.get(name)
        if value is None or not _is_json(field):
            continue
        try:
            json.loads(value)
        except ValueError as exc:
            # json's message gives a position, never the text it read (the value may hold secrets).
            yield f"{name} is not valid JSON ({exc}): expected {expected_shape(field.annotation)}"


def _variable(loc: tuple[int | str, ...]) -> tuple[str, list[str]]:
    """The variable an error location points into, and the path inside its JSON value."""
    head = str(loc[0])
    field = Settings.model_fields.get(head)
    if field is not None and _group_model(field) is not None and len(loc) > 1:
        return f"{PREFIX}{head.upper()}_{str(loc[1]).upper()}", [str(part) for part in loc[2:]]
    return f"{PREFIX}{head.upper()}", [str(part) for part in loc[1:]]


def _validation_errors(exc: ValidationError) -> Iterator[str]:
    fields = dict(setting_fields())
    for error in exc.errors(include_input=False, include_url=False):
        message = str(error["msg"]).removeprefix("Value error, ")
        if not error["loc"]:  # a rule across settings: its message names the variables
            yield message
            continue
        variable, inner = _variable(tuple(error["loc"]))
        field = fields.get(variable)
        if inner:
            yield f"{variable} at {'.'.join(inner)}: {message}"
        elif field is not None and _is_json(field):
            yield f"{variable}: {message} (expected {expected_shape(field.annotation)})"
        else:
            yield f"{variable}: {message}"


def describe(exc: ValidationError | SettingsError | UnsafeConfiguration, environ: Mapping[str, str]) -> str:
    """One line saying what is wrong with the configuration, without any value from it."""
    if isinstance(exc, ValidationError):
        problems = list(_validation_errors(exc))
    elif isinstance(exc, SettingsError):
        problems = list(_json_errors(environ)) or [str(exc)]
    else:
        problems = [str(exc)]
    return "invalid configuration: " + "; ".join(problems)
