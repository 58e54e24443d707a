"""Settings for plugins: attrs classes, filled by cattrs from a TOML file and the environment.

A plugin declares its settings as an attrs class with defaults::

    @attrs.frozen
    class Settings:
        root: str = "."
        max_bytes: int = 1_000_000

:func:`load_settings` fills it from, in rising priority, the class defaults, the
``[plugins.<name>]`` table of a TOML file, and environment variables named
``MCP_ACTORS_<NAME>_<FIELD>`` (``MCP_ACTORS_FILESYSTEM_MAX_BYTES=500``). An
environment value is read as JSON when it parses (``3``, ``true``, ``["a"]``) and as
a plain string otherwise. Unknown keys and wrong types are refused with a
:class:`SettingsError` that names each bad field and where it came from.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
import cattrs
from attrs import AttrsInstance

T = TypeVar("T", bound=AttrsInstance)

_converter = cattrs.Converter(forbid_extra_keys=True)


class SettingsError(ValueError):
    """Settings that cannot be used; ``problems`` lists one readable line per bad field."""

    def __init__(self, plugin: str, problems: list[str]) -> None:
        super().__init__(f"bad settings for plugin {plugin!r}: " + "; ".join(problems))
        self.plugin = plugin
        self.problems = problems


def env_prefix(plugin: str) -> str:
    """The environment variable prefix of a plugin's settings."""
    return "MCP_ACTORS_" + "".join(c if c.isalnum() else "_" for c in plugin).upper() + "_"


def load_settings(
    settings_class: type[T],
    plugin: str,
    *,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> T:
    """Build ``settings_class`` for ``plugin`` from defaults, a TOML file and the environment."""
    fields = attrs.fields(settings_class)
    data: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if config_file is not None:
        table = _file_table(config_file, plugin)
        data.update(table)
        sources.update({key: f"{config_file} [plugins.{plugin}]" for key in table})
    prefix = env_prefix(plugin)
    environ = os.environ if environ is None else environ
    for field in fields:
        variable = prefix + field.name.upper()
        if variable in environ:
            data[field.name] = _parse_env(environ[variable])
            sources[field.name] = f"${variable}"
    try:
        return _converter.structure(data, settings_class)
    except cattrs.BaseValidationError as error:
        problems = [
            _with_source(message, sources) for message in cattrs.transform_error(error, path="")
        ]
        raise SettingsError(plugin, problems) from None


def _file_table(config_file: Path, plugin: str) -> dict[str, Any]:
    try:
        document = tomllib.loads(config_file.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise SettingsError(plugin, [f"cannot read {config_file}: {error}"]) from None
    table = document.get("plugins", {}).get(plugin, {})
    if not isinstance(table, dict):
        raise SettingsError(plugin, [f"{config_file}: [plugins.{plugin}] must be a table"])
    return table


def _parse_env(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _with_source(message: str, sources: Mapping[str, str]) -> str:
    """cattrs says ``... @ .field``; add where that field's value came from."""
    if message.endswith(" @ "):
        message = message[: -len(" @ ")]
    field = message.rsplit("@ .", 1)[-1].split(".")[0].split("[")[0] if "@ ." in message else ""
    source = sources.get(field)
    return f"{message} (from {source})" if source else message
