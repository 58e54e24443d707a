"""What a client learned about its server, forwarded by the asyncio and sync fronts.

:class:`~mcp_actors.aio.AsyncClient` and :class:`~mcp_actors.sync.SyncClient` wrap a
Trio :class:`~.client.Client` running in its own thread. What the server said when the
client connected never changes, so reading it needs no trip into that thread: these
properties read it straight from the wrapped client.
"""

from __future__ import annotations

from typing import Literal

from ..protocol import types as t
from .client import Client


class ServerDescription:
    """The server's identity, capabilities, era, revision and instructions, read from
    ``_client``."""

    _client: Client

    @property
    def server_info(self) -> t.Implementation | None:
        return self._client.server_info

    @property
    def server_capabilities(self) -> t.ServerCapabilities:
        return self._client.server_capabilities

    @property
    def protocol_version(self) -> str:
        return self._client.protocol_version

    @property
    def era(self) -> Literal["modern", "legacy"]:
        return self._client.era

    @property
    def instructions(self) -> str | None:
        return self._client.instructions
