"""Settings for plugins: attrs classes, filled strictly from a TOML file and the environment.

A plugin declares its settings as an attrs class with defaults::

    @attrs.frozen
    class Settings:
        root: str = "."
        max_bytes: int = 1_000_000

:func:`load_settings` fills it from, in rising priority, the class defaults, the
``[plugins.<name>]`` table of a TOML file, and environment variables named
``MCP_ACTORS_<NAME>_<FIELD>`` (``MCP_ACTORS_FILESYSTEM_MAX_BYTES=500``).

**Parsing is strict**, because a lenient parser turns mistakes into surprises
(``bool("False")`` is ``True``: a setting meant to switch writing off would switch it
on). Each value must already have its field's type; nothing is coerced:

========== ===================================== =========================================
field type TOML value                            environment value (text)
========== ===================================== =========================================
``bool``   ``true`` or ``false`` (not a string)  ``true/false``, ``1/0``, ``yes/no``,
                                                 ``on/off``, in any case
``int``    an integer (not a float or a bool)    decimal digits with an optional sign
                                                 (``_`` between digits allowed)
``float``  a float or an integer (not a bool)    a decimal or exponent number
``str``,   a string                              the text as it is
``Path``
others     the TOML value, checked element by    JSON (``["a", "b"]``), checked element
           element with the rules above          by element with the rules above
========== ===================================== =========================================

``X | None`` fields take X's forms (None is the default's business, not a value to
set). A key of the TOML table that is not a field is an error. Every bad value is
reported — all of them at once — by a :class:`SettingsError` naming the setting and
where its value came from (``$MCP_ACTORS_FILESYSTEM_ALLOW_WRITE``, or the TOML file
and key). Environment variables are looked up by field name, so a misspelt variable
is not seen at all (nothing can tell it from a variable of another program).
"""

from __future__ import annotations

import json
import os
import re
import reprlib
import tomllib
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, cast, get_args, get_origin

import attrs
import cattrs
from attrs import AttrsInstance

T = TypeVar("T", bound=AttrsInstance)

TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})
_ENV_BOOL_FORMS = "true/false, 1/0, yes/no or on/off"
_ENV_INT = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*")
_MAX_DIGITS = 1000
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = 80
_ENV_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class SettingsError(ValueError):
    """Settings that cannot be used; ``problems`` lists one readable line per bad field."""

    def __init__(self, plugin: str, problems: list[str]) -> None:
        super().__init__(f"bad settings for plugin {plugin!r}: " + "; ".join(problems))
        self.plugin = plugin
        self.problems = problems


class WrongType(TypeError):
    """A value that is not of the type its setting needs (never coerced)."""


def env_prefix(plugin: str) -> str:
    """The environment variable prefix of a plugin's settings."""
    return "MCP_ACTORS_" + "".join(c if c.isalnum() else "_" for c in plugin).upper() + "_"


def load_settings(
    settings_class: type[T],
    plugin: str,
    *,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    table: str | None = None,
) -> T:
    """Build ``settings_class`` for ``plugin`` from defaults, a TOML file and the environment.

    ``table``: read the TOML file's top-level ``[table]`` instead of ``[plugins.<plugin>]``
    (settings of mcp_actors itself, such as ``[shared]``).

    Raises :class:`SettingsError` listing every bad value (see the module docstring
    for the forms accepted).
    """
    fields = {field.name: field for field in attrs.fields(attrs.resolve_types(settings_class))}
    values: dict[str, Any] = {}
    problems: list[str] = []
    if config_file is not None:
        _read_file(config_file, plugin, table, fields, values, problems)
    environ = os.environ if environ is None else environ
    _read_environment(environ, env_prefix(plugin), fields, values, problems)
    if problems:
        raise SettingsError(plugin, problems)
    try:
        return settings_class(**{fields[name].alias: value for name, value in values.items()})
    except (TypeError, ValueError) as error:  # the class's own validators
        raise SettingsError(plugin, [str(error)]) from None


def _read_file(
    config_file: Path,
    plugin: str,
    table: str | None,
    fields: Mapping[str, attrs.Attribute[Any]],
    values: dict[str, Any],
    problems: list[str],
) -> None:
    """The settings of the TOML file's table into ``values`` (a bad or unknown key: a
    line in ``problems``)."""
    where = f"plugins.{plugin}" if table is None else table
    for key, value in _file_table(config_file, plugin, table).items():
        source = f"{config_file} [{where}] {key}"
        if key not in fields or not fields[key].init:
            known = ", ".join(name for name, field in fields.items() if field.init)
            problems.append(f"unknown setting {key!r} (from {source}; known: {known})")
            continue
        _structure(fields[key], value, source, values, problems)


def _read_environment(
    environ: Mapping[str, str],
    prefix: str,
    fields: Mapping[str, attrs.Attribute[Any]],
    values: dict[str, Any],
    problems: list[str],
) -> None:
    """The settings given as ``<prefix><FIELD>`` variables into ``values`` (over the
    file's); a bad value is a line in ``problems``."""
    for field in fields.values():
        variable = prefix + field.name.upper()
        if not field.init or variable not in environ:
            continue
        source = f"${variable}"
        try:
            value = from_environment(environ[variable], field.type)
        except WrongType as error:
            problems.append(f"{field.name}: {error} (from {source})")
            continue
        _structure(field, value, source, values, problems)


def from_environment(text: str, field_type: Any) -> Any:
    """The value of an environment variable's ``text`` for a field of ``field_type``."""
    kind = _without_none(field_type)
    if kind is bool:
        word = text.lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return word in TRUE_WORDS
        raise WrongType(f"expected a bool ({_ENV_BOOL_FORMS}), got {_short(text)}")
    if kind is int:
        if not _ENV_INT.fullmatch(text) or len(text) > _MAX_DIGITS:
            raise WrongType(f"expected an integer, got {_short(text)}")
        return int(text)
    if kind is float:
        if not _ENV_FLOAT.fullmatch(text):
            raise WrongType(f"expected a number, got {_short(text)}")
        return float(text)
    if kind is str or kind is Path:
        return kind(text)
    try:
        return json.loads(text)
    except ValueError:
        message = f"expected JSON for a {_type_name(field_type)}, got {_short(text)}"
        raise WrongType(message) from None


# -- strict structuring --------------------------------------------------------------------


def _short(value: object) -> str:
    """``repr(value)``, shortened: a bad value may be long, the message should not be."""
    return _SHORT.repr(value)


def describe_value(value: Any) -> str:
    """A bad value as an error message names it: ``the string 'x'``, ``int 3``, ``true``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {_short(value)}"
    return f"{type(value).__name__} {_short(value)}"


def _strict(
    accepts: Callable[[Any], bool], expected: str, convert: Callable[[Any], Any] = lambda v: v
) -> Callable[[Any, Any], Any]:
    """A cattrs structure hook that takes values ``accepts`` allows and refuses the rest."""

    def structure(value: Any, _type: Any) -> Any:
        if not accepts(value):
            raise WrongType(f"expected {expected}, got {describe_value(value)}")
        return convert(value)

    return structure


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_converter = cattrs.Converter(forbid_extra_keys=True)
_converter.register_structure_hook(
    bool, _strict(lambda v: isinstance(v, bool), "a bool (true or false, unquoted)")
)
_converter.register_structure_hook(
    int,
    _strict(lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
)
_converter.register_structure_hook(float, _strict(_is_number, "a number", float))
_converter.register_structure_hook(str, _strict(lambda v: isinstance(v, str), "a string"))
_converter.register_structure_hook(Path, _strict(lambda v: isinstance(v, str), "a string", Path))


def _structure_literal(value: Any, literal: Any) -> Any:
    """A ``Literal[...]`` field takes one of its values, of its type (``1`` is not ``true``)."""
    choices = get_args(literal)
    if any(type(value) is type(choice) and value == choice for choice in choices):
        return value
    expected = ", ".join(repr(choice) for choice in choices)
    raise WrongType(f"expected one of {expected}, got {describe_value(value)}")


def _is_literal(field_type: Any) -> bool:
    return get_origin(field_type) is cast(Any, Literal)


_converter.register_structure_hook_func(_is_literal, _structure_literal)


def _structure(
    field: attrs.Attribute[Any],
    value: Any,
    source: str,
    values: dict[str, Any],
    problems: list[str],
) -> None:
    """Structure one field's ``value`` into ``values``, or add why not to ``problems``."""
    try:
        values[field.name] = _converter.structure(value, cast(Any, field.type))
    except (TypeError, ValueError) as error:
        problems.append(f"{field.name}: {error} (from {source})")
    except cattrs.BaseValidationError as error:
        for line in cattrs.transform_error(error, path=field.name, format_exception=_format):
            message, _, where = line.rpartition(" @ ")  # cattrs says "<message> @ <path>"
            problems.append(f"{where}: {message} (from {source})")


def structure_strictly(value: Any, cls: type[T]) -> tuple[T | None, list[str]]:
    """``value`` (parsed TOML, say) as an attrs ``cls``, with this module's strict rules
    (no coercion, no unknown keys): the instance, or None and one line per problem."""
    try:
        return _converter.structure(value, cls), []
    except cattrs.BaseValidationError as error:
        problems = []
        for line in cattrs.transform_error(error, format_exception=_format):
            message, _, where = line.rpartition(" @ ")  # cattrs says "<message> @ <path>"
            place = "top level" if where == "$" else where.removeprefix("$.")
            problems.append(f"{place}: {message}")
        return None, problems
    except (TypeError, ValueError) as error:  # the class's own validators
        return None, [str(error)]


def _format(error: BaseException, _type: Any) -> str:
    if isinstance(error, WrongType):
        return str(error)
    if type(error) is ValueError and str(error):  # a class's own validator: its message
        return str(error)
    return cattrs.v.format_exception(error, _type)


def _without_none(field_type: Any) -> Any:
    """``X`` for ``X | None``; any other type as it is."""
    if get_origin(field_type) in (Union, types.UnionType):
        others = [arg for arg in get_args(field_type) if arg is not type(None)]
        if len(others) == 1:
            return others[0]
    return field_type


def _type_name(field_type: Any) -> str:
    return field_type.__name__ if isinstance(field_type, type) else str(field_type)


def _file_table(config_file: Path, plugin: str, table: str | None) -> dict[str, Any]:
    try:
        document = tomllib.loads(config_file.read_text())
    except (OSError, ValueError) as error:  # unreadable, not UTF-8, not TOML, huge numbers
        raise SettingsError(plugin, [f"cannot read {config_file}: {error}"]) from None
    if table is not None:
        found = document.get(table, {})
        if not isinstance(found, dict):
            raise SettingsError(plugin, [f"{config_file}: [{table}] must be a table"])
        return found
    plugins = document.get("plugins", {})
    table = plugins.get(plugin, {}) if isinstance(plugins, dict) else None
    if not isinstance(table, dict):
        raise SettingsError(plugin, [f"{config_file}: [plugins.{plugin}] must be a table"])
    return table
