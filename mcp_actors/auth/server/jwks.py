"""An authorization server's signing keys (its JWKS), fetched on demand and cached by ``kid``.

A JWT verifier needs the public key a token names in its header (``kid``). Fetching the
JWKS for every token would put the authorization server on every request's path, so
:class:`JwksCache` keeps the keys it fetched for ``ttl`` seconds, and refetches early when
a token names a ``kid`` it does not have — that is how a key rotation is picked up. An
attacker can send tokens with made-up ``kid`` values at will, so such refetches are rate
limited (one per ``min_refetch_interval`` seconds); between them an unknown ``kid`` is
simply unknown. The cache is bounded: at most ``max_keys`` keys are kept from a document
(the rest are ignored), and the document itself is read up to a size limit.

A failed fetch keeps the keys already held (an authorization server that is briefly down
does not lock everyone out) and is logged; a token whose key is not held is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio
from joserfc import jwk
from joserfc.errors import JoseError

from .fetch import FetchFailed, fetch_json

log = logging.getLogger("mcp_actors.auth")

Fetch = Callable[[str], Awaitable[dict[str, Any]]]


async def _fetch(url: str) -> dict[str, Any]:
    return await fetch_json(url)


@attrs.frozen
class JwksStatistics:
    keys: int
    fetches: int
    failed_fetches: int


@attrs.define(eq=False)
class JwksCache:
    """The signing keys published at ``url`` (module docstring)."""

    url: str
    ttl: float = 300.0
    min_refetch_interval: float = 30.0
    max_keys: int = 32
    fetch: Fetch = _fetch
    _keys: dict[str | None, jwk.Key] = attrs.field(init=False, factory=dict)
    _fetched_at: float | None = attrs.field(init=False, default=None)
    _tried_at: float | None = attrs.field(init=False, default=None)
    _lock: trio.Lock = attrs.field(init=False, factory=trio.Lock)
    _fetches: int = attrs.field(init=False, default=0)
    _failed: int = attrs.field(init=False, default=0)

    def statistics(self) -> JwksStatistics:
        return JwksStatistics(len(self._keys), self._fetches, self._failed)

    async def key(self, kid: str | None) -> jwk.Key | None:
        """The signing key named ``kid`` (None: a token without ``kid``, served only by a
        JWKS holding exactly one key), fetching the JWKS when stale or when ``kid`` is new."""
        now = trio.current_time()
        if self._fetched_at is None or now - self._fetched_at >= self.ttl:
            await self._refresh(now)
        found = self._lookup(kid)
        if found is None and (
            self._tried_at is None or now - self._tried_at >= self.min_refetch_interval
        ):
            await self._refresh(now)
            found = self._lookup(kid)
        return found

    def _lookup(self, kid: str | None) -> jwk.Key | None:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    async def _refresh(self, now: float) -> None:
        async with self._lock:
            if self._tried_at is not None and self._tried_at >= now:
                return  # another task refreshed while we waited for the lock
            self._tried_at = trio.current_time()
            self._fetches += 1
            try:
                document = await self.fetch(self.url)
            except FetchFailed as error:
                self._failed += 1
                log.warning("could not fetch the JWKS: %s", error)
                return
            self._keys = self._signing_keys(document)
            self._fetched_at = self._tried_at

    def _signing_keys(self, document: dict[str, Any]) -> dict[str | None, jwk.Key]:
        keys: dict[str | None, jwk.Key] = {}
        entries = document.get("keys")
        for entry in entries if isinstance(entries, list) else []:
            if len(keys) >= self.max_keys:
                log.warning("the JWKS at %s has more than %d keys", self.url, self.max_keys)
                break
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwk.import_key(entry)
            except (JoseError, ValueError, TypeError):
                continue  # a key type or curve we cannot use: not ours to choke on
            if key.is_private:
                continue  # a published private key is a mistake we will not use
            keys[key.kid] = key
        return keys
