"""What an OAuth client keeps between requests and runs: its registration and its tokens.

Both are **bound to the issuer** that gave them (MCP authorization, "credentials
bound to the authorization server"): a client id registered at one authorization
server means nothing at another, and a token is for the resource it was issued
for. An :class:`Authorization` record holds, for one protected resource, the
issuer, the client registered there and the tokens; when the resource moves to
another authorization server the record is replaced, never reused.

A :class:`TokenStore` keeps records by resource URL:

- :class:`MemoryTokenStore` — for the life of the process; at most ``capacity``
  resources (the least recently saved one is dropped when full);
- :class:`FileTokenStore` — one JSON file, created with mode ``0600`` (only its
  owner may read the refresh tokens in it) and replaced atomically on every save;
  at most ``capacity`` resources too.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from pathlib import Path
from typing import Protocol

import msgspec
import trio

#: Seconds before expiry at which an access token counts as expired (clock skew, latency).
EXPIRY_MARGIN = 30.0


class RegisteredClient(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A client identity at one authorization server (pre-registered, CIMD or DCR)."""

    client_id: str
    client_secret: str | None = None
    #: ``none``, ``client_secret_basic``, ``client_secret_post`` or ``private_key_jwt``.
    token_endpoint_auth_method: str = "none"
    #: Unix time the secret expires (RFC 7591 ``client_secret_expires_at``; 0 = never).
    client_secret_expires_at: float | None = None


class Tokens(msgspec.Struct, kw_only=True, omit_defaults=True):
    """An access token (and maybe a refresh token) from a token response (RFC 6749 §5.1)."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    #: Unix time the access token expires, if the server said.
    expires_at: float | None = None
    #: The scopes granted (the response's ``scope``, else those requested).
    scope: str | None = None

    def expired(self, now: float | None = None) -> bool:
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at - EXPIRY_MARGIN


class Authorization(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Everything known about one protected resource's authorization, bound to ``issuer``."""

    issuer: str
    client: RegisteredClient | None = None
    tokens: Tokens | None = None
    #: Where to refresh the tokens (the issuer's token endpoint).
    token_endpoint: str | None = None
    #: The resource indicator (RFC 8707) the tokens were issued for.
    resource: str | None = None


class TokenStore(Protocol):
    """Where an OAuth client keeps its :class:`Authorization` records, by resource URL."""

    async def load(self, resource: str) -> Authorization | None: ...

    async def save(self, resource: str, record: Authorization) -> None: ...

    async def forget(self, resource: str) -> None: ...


class MemoryTokenStore:
    """Records in memory, at most ``capacity`` resources (the oldest saved dropped first)."""

    def __init__(self, capacity: int = 256) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._records: OrderedDict[str, Authorization] = OrderedDict()

    async def load(self, resource: str) -> Authorization | None:
        return self._records.get(resource)

    async def save(self, resource: str, record: Authorization) -> None:
        self._records[resource] = record
        self._records.move_to_end(resource)
        while len(self._records) > self.capacity:
            self._records.popitem(last=False)

    async def forget(self, resource: str) -> None:
        self._records.pop(resource, None)


_FileContent = dict[str, Authorization]


class FileTokenStore:
    """Records in one JSON file readable by its owner only (mode ``0600``).

    Every save rewrites the file through a temporary file in the same folder
    (created ``0600``) renamed over it, so a crash never leaves half a file. An
    unreadable or malformed file counts as empty (and is replaced at the next save).
    At most ``capacity`` resources are kept; the oldest saved are dropped first.
    """

    def __init__(self, path: str | os.PathLike[str], capacity: int = 256) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.path = Path(path)
        self.capacity = capacity
        self._lock = trio.Lock()

    async def load(self, resource: str) -> Authorization | None:
        return (await trio.to_thread.run_sync(self._read)).get(resource)

    async def save(self, resource: str, record: Authorization) -> None:
        async with self._lock:
            await trio.to_thread.run_sync(self._update, resource, record)

    async def forget(self, resource: str) -> None:
        async with self._lock:
            await trio.to_thread.run_sync(self._update, resource, None)

    def _read(self) -> _FileContent:
        try:
            return msgspec.json.decode(self.path.read_bytes(), type=_FileContent)
        except (OSError, msgspec.DecodeError):
            return {}

    def _update(self, resource: str, record: Authorization | None) -> None:
        records = self._read()
        records.pop(resource, None)
        if record is not None:
            records[resource] = record
        while len(records) > self.capacity:
            del records[next(iter(records))]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(msgspec.json.encode(records))
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        os.chmod(self.path, 0o600)
