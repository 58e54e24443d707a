"""Plugins: installable packages that provide servers, found through entry points.

The contract. A distribution registers entry points in the group
``mcp_actors.plugins``; the entry point's name is the plugin's name, and the object
it names is one of:

- a :class:`Plugin` — the full form: a description, an optional attrs ``settings``
  class (filled strictly by :func:`mcp_actors.config.load_settings` from a TOML file and
  ``MCP_ACTORS_<NAME>_<FIELD>`` variables) and a ``create(settings)`` function
  returning the :class:`~mcp_actors.server.app.Server`;
- a ready :class:`~mcp_actors.server.app.Server` object;
- a function taking a Server and adding tools, resources or prompts to it (the
  runtime makes ``Server(<plugin name>)`` and hands it over).

In ``pyproject.toml``::

    [project.entry-points."mcp_actors.plugins"]
    everything = "mcp_actors_everything:plugin"

A plugin that fails to import or to build is reported with its reason; the others
still load.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

import attrs
import msgspec
from attrs import AttrsInstance

from .config import SettingsError, load_settings
from .server.app import Server

__all__ = ["GROUP", "InstalledPlugin", "Plugin", "PluginError", "installed"]

GROUP = "mcp_actors.plugins"


class PluginError(Exception):
    """A plugin that cannot be loaded or built, with the reason."""


class PluginNotConfigured(PluginError):
    """A plugin that needs a setting it was not given (raised by its ``create``, e.g. the
    folder to serve): nothing is wrong with it, it is waiting to be told what to serve.
    ``mcp-actors list`` shows it as such, not as broken; its message says what to set."""


@attrs.frozen
class Plugin:
    """What a plugin entry point may name: how to build its server, and its settings."""

    create: Callable[[Any], Server]
    description: str = ""
    #: An attrs class of settings, or None for a plugin without settings.
    settings: type[AttrsInstance] | None = None


@attrs.frozen
class InstalledPlugin:
    """A plugin found in the environment (not loaded yet)."""

    name: str
    entry_point: EntryPoint

    @property
    def distribution(self) -> str:
        dist = self.entry_point.dist
        return dist.name if dist is not None else "?"

    @property
    def version(self) -> str:
        dist = self.entry_point.dist
        return dist.version if dist is not None else "?"

    def load(self) -> Plugin:
        """Import the entry point and normalize it to a :class:`Plugin`."""
        try:
            target = self.entry_point.load()
        except Exception as error:
            raise PluginError(
                f"plugin {self.name!r} ({self.entry_point.value}) failed to import: "
                f"{type(error).__name__}: {error}"
            ) from error
        return as_plugin(self.name, target)

    def build(self, *, config_file: Path | None = None) -> Server:
        """Load the plugin, read its settings and build its server."""
        plugin = self.load()
        settings: Any = None
        if plugin.settings is not None:
            try:
                settings = load_settings(plugin.settings, self.name, config_file=config_file)
            except SettingsError as error:
                raise PluginError(str(error)) from error
        try:
            return plugin.create(settings)
        except PluginNotConfigured:
            raise
        except Exception as error:
            raise PluginError(
                f"plugin {self.name!r} failed to build its server: {type(error).__name__}: {error}"
            ) from error


def as_plugin(name: str, target: object) -> Plugin:
    """Normalize what an entry point names (Plugin, Server or extender) to a Plugin."""
    if isinstance(target, Plugin):
        return target
    if isinstance(target, Server):
        server = target
        return Plugin(create=lambda _settings: server, description=server.instructions or "")
    if callable(target):
        extend = target

        def create(_settings: object) -> Server:
            server = Server(name)
            extend(server)
            return server

        return Plugin(create=create, description=(getattr(target, "__doc__", None) or "").strip())
    raise PluginError(
        f"plugin {name!r} names a {type(target).__name__}; expected a Plugin, a Server"
        " or a function that adds to a Server"
    )


def offerings(server: Server) -> str:
    """A one-line account of what a server offers, for ``mcp-actors list``."""
    tools = ", ".join(sorted(server.tools)) or "none"
    capabilities = msgspec.structs.asdict(server.capabilities())
    declared = sorted(name for name, value in capabilities.items() if value is not msgspec.UNSET)
    return f"tools: {tools}; capabilities: {', '.join(declared)}"


def installed() -> dict[str, InstalledPlugin]:
    """Every plugin registered in this environment, by name."""
    return {ep.name: InstalledPlugin(ep.name, ep) for ep in entry_points(group=GROUP)}


def load_server_or_plugin(spec: str, *, config_file: Path | None = None) -> Server:
    """An installed plugin's server, or the Server ``MODULE[:ATTR]`` / ``FILE.py[:ATTR]`` names.

    A bare name is a plugin when one is installed by that name, else a module.
    """
    from .client.targets import load_server

    if ":" in spec or spec.endswith(".py") or "/" in spec:
        return load_server(spec)
    plugins = installed()
    if spec in plugins:
        return plugins[spec].build(config_file=config_file)
    if importlib.util.find_spec(spec.split(".")[0]) is None:
        known = ", ".join(sorted(plugins)) or "none"
        raise PluginError(
            f"no plugin named {spec!r} is installed (installed: {known}), nor a module by that name"
        )
    return load_server(spec)


def find(name: str) -> InstalledPlugin:
    """The installed plugin called ``name``, or a PluginError listing what is installed."""
    plugins = installed()
    if name not in plugins:
        known = ", ".join(sorted(plugins)) or "none"
        raise PluginError(f"no plugin named {name!r} is installed (installed: {known})")
    return plugins[name]
