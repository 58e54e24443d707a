"""What a TARGET of the ``mcp-actors`` command names, loaded the same way by every command.

``run``, ``config`` and ``dev`` serve a Server; ``call`` and ``inspect`` connect to
one. All of them take what ``run`` takes:

- ``GATEWAY.toml``: a gateway mounting the upstreams the file names
  (:mod:`.gateway.config`);
- an installed plugin's name, ``MODULE[:ATTR]`` or ``path/to/file.py[:ATTR]``
  (:func:`~.plugins.load_server_or_plugin`);

and ``call`` and ``inspect`` also ``stdio:COMMAND ARGS...`` (a server to launch) or a
URL (:func:`~.client.targets.parse_target`). A target that cannot be loaded raises a
:class:`~.client.targets.TargetError` (or a ``PluginError``) with a one-line reason.
"""

from __future__ import annotations

from pathlib import Path

from .client.targets import StdioTarget, UrlTarget, parse_target
from .plugins import load_server_or_plugin
from .server.app import Server

#: How the help of ``run``, ``config`` and ``dev`` names the server they load.
SERVED_METAVAR = "MODULE[:ATTR]|FILE.py[:ATTR]|PLUGIN|GATEWAY.toml"

#: Target prefixes naming a server to reach rather than one to load.
_REMOTE = ("stdio:", "http://", "https://", "ws://", "wss://")


def is_gateway_file(spec: str) -> bool:
    """Whether ``spec`` names a gateway file (``*.toml``)."""
    return spec.endswith(".toml")


def load_served(spec: str, *, config_file: Path | None = None) -> Server:
    """The Server that ``spec`` names, as ``mcp-actors run`` serves it (module docstring);
    ``config_file`` holds a plugin's settings."""
    if is_gateway_file(spec):
        from .gateway.config import load_gateway  # gateway/ is built on client/

        return load_gateway(Path(spec))
    return load_server_or_plugin(spec, config_file=config_file)


def client_target(spec: str) -> StdioTarget | UrlTarget | Server:
    """What ``call`` and ``inspect`` connect to: a server to launch or a URL, else the
    Server :func:`load_served` loads (served in-process)."""
    if spec.startswith(_REMOTE):
        return parse_target(spec)
    return load_served(spec)
