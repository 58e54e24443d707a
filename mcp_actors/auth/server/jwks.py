"""An authorization server's signing keys (its JWKS), fetched on demand and cached by ``kid``.

A JWT verifier needs the public key a token names in its header (``kid``). Fetching the
JWKS for every token would put the authorization server on every request's path, so
:class:`JwksCache` keeps the keys it fetched for ``ttl`` seconds, and refetches early when
a token names a ``kid`` it does not have — that is how a key rotation is picked up. An
attacker can send tokens with made-up ``kid`` values at will, so such refetches are rate
limited (one per ``min_refetch_interval`` seconds); between them an unknown ``kid`` is
simply unknown. The cache is bounded: at most ``max_keys`` keys are kept from a document
(the rest are ignored), and the document itself is read up to a size limit.

One fetch at a time: a token that needs a fetch while one is under way waits for it and
takes its outcome (tokens arriving together cause one request, not one each). A failed
fetch keeps the keys already held (an authorization server that is briefly down does not
lock everyone out) and is logged; a token whose key is not held is refused. After a
failure no fetch is tried for a while (``backoff``, see :mod:`.backoff`: 1 s, doubling up
to 60 s), whatever tokens arrive: at most one request per backoff window.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio
from joserfc import jwk
from joserfc.errors import JoseError

from .backoff import Backoff, Retry
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
    backoff: Backoff = attrs.field(factory=Backoff)
    _keys: dict[str | None, jwk.Key] = attrs.field(init=False, factory=dict)
    _fetched_at: float | None = attrs.field(init=False, default=None)
    _tried_at: float | None = attrs.field(init=False, default=None)
    _lock: trio.Lock = attrs.field(init=False, factory=trio.Lock)
    _retry: Retry = attrs.field(
        init=False, default=attrs.Factory(lambda self: Retry(self.backoff), takes_self=True)
    )
    _fetches: int = attrs.field(init=False, default=0)
    _failed: int = attrs.field(init=False, default=0)

    def statistics(self) -> JwksStatistics:
        return JwksStatistics(len(self._keys), self._fetches, self._failed)

    async def key(self, kid: str | None) -> jwk.Key | None:
        """The signing key named ``kid`` (None: a token without ``kid``, served only by a
        JWKS holding exactly one key), fetching the JWKS when stale or when ``kid`` is new."""
        now = trio.current_time()
        if self._fetched_at is None or now - self._fetched_at >= self.ttl:
            await self._refresh()
        found = self._lookup(kid)
        if found is None and (
            self._tried_at is None or now - self._tried_at >= self.min_refetch_interval
        ):
            await self._refresh()
            found = self._lookup(kid)
        return found

    def _lookup(self, kid: str | None) -> jwk.Key | None:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    async def _refresh(self) -> None:
        """Fetch the JWKS — unless a fetch ended while we waited for the lock (one under
        way when we came, or one after: we take its outcome), or the last one failed less
        than a backoff window ago."""
        ended = self._fetches
        async with self._lock:
            if self._fetches != ended or not self._retry.ready():
                return
            self._tried_at = trio.current_time()
            try:
                document = await self.fetch(self.url)
            except FetchFailed as error:
                self._fetches += 1
                self._failed += 1
                delay = self._retry.failed()
                log.warning("could not fetch the JWKS (next try in %.0f s): %s", delay, error)
                return
            # Counted once it ended (not when cancelled): what waiters compare.
            self._fetches += 1
            self._retry.succeeded()
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
