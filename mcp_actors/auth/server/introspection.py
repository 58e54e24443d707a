"""Opaque access tokens, asked of the authorization server (RFC 7662 token introspection).

:class:`IntrospectionVerifier` POSTs each token to the introspection endpoint,
authenticating as the resource server's own client (``client_secret_basic``), and accepts
it when the answer says ``active``, names the expected issuer (when one is configured),
names our canonical resource URI in ``aud`` (RFC 8707; an answer without ``aud`` is
refused unless ``require_audience`` is off), and its ``exp`` has not passed. The token
goes to the introspection endpoint and nowhere else.

Answers are cached by a digest of the token (never the token itself) for
``cache_ttl`` seconds — less when the token expires sooner — in a table of at most
``cache_size`` entries; when full, the entry closest to expiry goes first. A revoked token
may thus be accepted for up to ``cache_ttl`` seconds; set it to 0 to ask every time.

Garbage must not cost a request each. A token refused on the answer (inactive, another
issuer's, another audience's, expired) is remembered, by digest too, for
``refusal_cache_ttl`` seconds (10) in a table of its own of at most
``refusal_cache_size`` entries (1024; when full, the oldest goes — refusals never push
out accepted tokens). Requests carrying the same token at the same time share one call.
At most ``max_concurrent_calls`` (16) calls are under way at once; more wait for one to
end. A call that fails (no answer, not 200, not JSON) refuses its token and starts a
``backoff`` (see :mod:`.backoff`: 1 s, doubling up to 60 s) during which every token not
cached is refused without a call; until a call succeeds (and at start), calls go one at
a time, the others waiting for its outcome — so a failing endpoint gets at most one call
per backoff window, however many tokens arrive.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

import attrs
import trio
from attrs.validators import ge, gt, instance_of

from ...transports.http.auth import Principal
from .backoff import Backoff, Retry
from .fetch import FetchFailed, fetch_json
from .verifier import MAX_TOKEN_LENGTH, InvalidToken, audience_matches, principal_from_claims

log = logging.getLogger("mcp_actors.auth")


@attrs.define(eq=False)
class _Call:
    """One introspection call under way, which requests with the same token wait for:
    its principal, or the reason it refused (None: it did not finish)."""

    done: trio.Event = attrs.field(factory=trio.Event)
    outcome: Principal | str | None = None


@attrs.define(eq=False)
class IntrospectionVerifier:
    """Verifies tokens through ``endpoint`` (module docstring)."""

    endpoint: str
    client_id: str
    client_secret: str
    #: The issuer the answers must name (None: not checked).
    issuer: str | None = None
    require_audience: bool = True
    leeway: float = 30.0
    cache_ttl: float = 30.0
    cache_size: int = 1024
    refusal_cache_ttl: float = attrs.field(
        default=10.0, validator=[instance_of((int, float)), ge(0)]
    )
    refusal_cache_size: int = attrs.field(default=1024, validator=[instance_of(int), ge(0)])
    max_concurrent_calls: int = attrs.field(default=16, validator=[instance_of(int), gt(0)])
    backoff: Backoff = attrs.field(factory=Backoff)
    #: The time now, in seconds since the epoch (a test may move it).
    clock: Callable[[], float] = time.time
    _cache: dict[bytes, tuple[float, Principal]] = attrs.field(init=False, factory=dict)
    #: Refusals by digest, oldest first: until when (trio's clock), and why.
    _refused: dict[bytes, tuple[float, str]] = attrs.field(init=False, factory=dict)
    _calls: dict[bytes, _Call] = attrs.field(init=False, factory=dict)
    _limiter: trio.CapacityLimiter = attrs.field(
        init=False,
        default=attrs.Factory(
            lambda self: trio.CapacityLimiter(self.max_concurrent_calls), takes_self=True
        ),
    )
    _probe: trio.Lock = attrs.field(init=False, factory=trio.Lock)
    _retry: Retry = attrs.field(
        init=False, default=attrs.Factory(lambda self: Retry(self.backoff), takes_self=True)
    )

    async def verify(self, token: str, resource: str) -> Principal:
        if len(token) > MAX_TOKEN_LENGTH:
            raise InvalidToken("the token is too long")
        digest = hashlib.sha256(f"{resource} {token}".encode()).digest()
        while True:
            outcome = self._cached(digest)
            if outcome is None:
                call = self._calls.get(digest)
                if call is None:
                    outcome = await self._call(token, resource, digest)
                else:
                    await call.done.wait()
                    outcome = call.outcome
            if isinstance(outcome, Principal):
                return outcome
            if outcome is not None:
                raise InvalidToken(outcome)
            # the call we waited for was cancelled: try again

    def _cached(self, digest: bytes) -> Principal | str | None:
        """What is remembered of the token: its principal, why it was refused, or None."""
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > self.clock():
            return cached[1]
        refused = self._refused.get(digest)
        if refused is not None and refused[0] > trio.current_time():
            return refused[1]
        return None

    async def _call(self, token: str, resource: str, digest: bytes) -> Principal | str:
        """Introspect ``token`` for every request with it now (they wait for this call)."""
        call = self._calls[digest] = _Call()
        try:
            call.outcome = await self._introspect(token, resource, digest)
            return call.outcome
        finally:
            del self._calls[digest]
            call.done.set()

    async def _introspect(self, token: str, resource: str, digest: bytes) -> Principal | str:
        """The caller ``token`` stands for, or why it is refused; remembered."""
        answer = await self._ask(token)
        if isinstance(answer, str):
            return answer  # no answer: nothing to remember of the token
        now = self.clock()
        try:
            principal = self._check(answer, resource, now)
        except InvalidToken as refusal:
            self._remember_refusal(digest, str(refusal))
            return str(refusal)
        self._remember(digest, principal, now)
        return principal

    async def _ask(self, token: str) -> dict[str, Any] | str:
        """The endpoint's answer, or why there is none: one call at a time while the
        endpoint is not known to work (module docstring)."""
        if not self._retry.healthy:
            async with self._probe:
                if not self._retry.healthy:
                    return await self._post(token)
        return await self._post(token)

    async def _post(self, token: str) -> dict[str, Any] | str:
        if not self._retry.ready():
            remaining = self._retry.remaining()
            return f"the authorization server is unavailable (next try in {remaining:.0f} s)"
        async with self._limiter:
            try:
                answer = await fetch_json(
                    self.endpoint,
                    form={"token": token, "token_type_hint": "access_token"},
                    auth=(self.client_id, self.client_secret),
                )
            except FetchFailed as error:
                delay = self._retry.failed()
                log.warning("could not introspect a token (next try in %.0f s): %s", delay, error)
                return "the token could not be introspected"
        self._retry.succeeded()
        return answer

    def _check(self, answer: dict[str, Any], resource: str, now: float) -> Principal:
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        if self.issuer is not None and answer.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        audience = answer.get("aud")
        if audience is None:
            if self.require_audience:
                raise InvalidToken("the introspection answer names no audience")
        elif not audience_matches(audience, resource):
            raise InvalidToken(f"the token is not meant for this resource ({resource})")
        expires = answer.get("exp")
        if isinstance(expires, int | float) and now - self.leeway >= expires:
            raise InvalidToken("the token has expired")
        return principal_from_claims(answer)

    def _remember(self, digest: bytes, principal: Principal, now: float) -> None:
        if self.cache_ttl <= 0 or self.cache_size <= 0:
            return
        until = now + self.cache_ttl
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        for key in [key for key, (deadline, _) in self._cache.items() if deadline <= now]:
            del self._cache[key]
        if len(self._cache) >= self.cache_size:
            del self._cache[min(self._cache, key=lambda key: self._cache[key][0])]
        self._cache[digest] = (until, principal)

    def _remember_refusal(self, digest: bytes, reason: str) -> None:
        if self.refusal_cache_ttl <= 0 or self.refusal_cache_size <= 0:
            return
        self._refused.pop(digest, None)
        while len(self._refused) >= self.refusal_cache_size:
            del self._refused[next(iter(self._refused))]
        self._refused[digest] = (trio.current_time() + self.refusal_cache_ttl, reason)
