"""The OAuth client of an MCP server: an ``httpx.Auth`` that gets and keeps tokens.

Give an :class:`OAuthClient` to :func:`mcp_actors.open_client` (``auth=``) and every
HTTP request to the server carries its access token. When the server answers
``401`` (no token, or one it no longer accepts) or ``403`` with
``error="insufficient_scope"`` (step-up), the client:

1. **discovers** the authorization server (:mod:`.discovery`): Protected Resource
   Metadata, then Authorization Server Metadata, both checked;
2. forgets what it had from **another issuer** (the server moved to a new
   authorization server: credentials never travel between issuers);
3. **refreshes** the access token when it holds a refresh token (on ``401``);
4. otherwise **registers** if it must — a pre-registered ``client_id``, else a
   Client ID Metadata Document URL when the server supports them, else Dynamic
   Client Registration (RFC 7591, ``application_type``) — and runs the **grant**:
   by default the authorization code flow with PKCE ``S256`` (refused when the
   server does not advertise it), ``state``, the ``resource`` indicator
   (RFC 8707) on every request, and the ``iss`` of the answer checked (RFC 9207)
   before the code is redeemed;
5. sends the request again with the new token.

Scopes: those of the challenge, else the resource's ``scopes_supported``, else
none (the parameter is omitted); a step-up asks for the union of what was granted
and what the challenge names; ``offline_access`` is added when the authorization
server lists it (so a refresh token comes back). After ``max_attempts``
authorizations for one request that the server still refuses, the client stops and
the request fails with the server's answer (no infinite loop).

A failed authorization fails its request (an ``httpx.HTTPError``, which a transport
reports as it reports any failed exchange); :attr:`OAuthClient.failure` keeps the
reason, so that a caller can say what went wrong rather than "cannot reach". A user
who did not complete an authorization (:class:`~.errors.AuthorizationNotCompleted`)
is not asked again by the same client: its later requests fail at once with the same
reason (a new :class:`OAuthClient` asks again).

One :class:`OAuthClient` serves one MCP server (the URL of its first request, or
``server_url``) and puts its token only on requests to that server's origin;
concurrent requests share one authorization (a lock). Tokens and
registrations live in a :class:`~.tokens.TokenStore`, bound to their issuer.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Generator
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

import attrs
import httpx
import msgspec
import trio

from ..challenge import Challenge, find_challenge
from ..metadata import AuthorizationServerMetadata, same_issuer
from ..scopes import format_scope, union
from .assertions import DPoPKey
from .authorization_code import AuthorizationCodeGrant
from .discovery import Discovery, discover
from .errors import AuthorizationFailed, AuthorizationNotCompleted
from .http import oauth_http_client
from .token_endpoint import AssertionSigner, TokenRequests, choose_auth_method
from .tokens import Authorization, MemoryTokenStore, RegisteredClient, Tokens, TokenStore
from .user_agent import HeadlessUserAgent

log = logging.getLogger("mcp_actors.auth.client")

#: Longest answer read from a registration endpoint (bytes).
MAX_REGISTRATION_RESPONSE = 64 * 1024


@attrs.frozen
class ClientRegistration:
    """Who the client is at an authorization server, and how it gets a ``client_id``.

    ``client_id`` (and ``client_secret``) — a pre-registered client, used as is;
    else ``metadata_url`` — the HTTPS URL of the client's metadata document, used
    as its ``client_id`` where the server says it supports them; else Dynamic
    Client Registration with ``client_name``, ``application_type`` and the user
    agent's redirect URI.
    """

    client_id: str | None = None
    client_secret: str | None = None
    #: Forces the token endpoint auth method (else chosen from what the server supports).
    token_endpoint_auth_method: str | None = None
    metadata_url: str | None = None
    client_name: str = "mcp-actors"
    application_type: str = "native"


class _RegistrationResponse(msgspec.Struct):
    """The members of an RFC 7591 §3.2.1 registration response the client keeps."""

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    client_secret_expires_at: float | None = None


class Grant(Protocol):
    """How the client obtains tokens once it knows the authorization server."""

    #: The grant types to register (``grant_types`` of RFC 7591).
    grant_types: tuple[str, ...]

    async def obtain(self, flow: TokenRequests, scope: str | None) -> Tokens: ...


def _expired(record: Authorization | None) -> bool:
    """Whether ``record`` holds tokens whose access token has expired."""
    return record is not None and record.tokens is not None and record.tokens.expired()


class OAuthClient(httpx.Auth):
    """OAuth 2.1 authorization for the requests of an MCP client (module docstring).

    - ``grant``: how tokens are obtained — by default the authorization code flow
      with a :class:`~.user_agent.HeadlessUserAgent` (for servers that approve
      without a login page, as in tests); for a person,
      ``AuthorizationCodeGrant(LoopbackUserAgent())``; without a user,
      :class:`~.grants.ClientCredentialsGrant`, :class:`~.grants.JwtBearerGrant` or
      :class:`~.grants.IdJagGrant`;
    - ``registration``: a pre-registered client, a metadata document URL, or how to
      register dynamically (:class:`ClientRegistration`);
    - ``scope``: scopes asked for on top of those the server requires;
    - ``store``: where registrations and tokens are kept (default: in memory);
    - ``assertion_signer``: signs ``private_key_jwt`` client assertions
      (:class:`~.assertions.PrivateKeyJwt`);
    - ``dpop``: ``True`` (a new key) or a :class:`~.assertions.DPoPKey` binds tokens
      to a key where the authorization server supports DPoP (RFC 9449);
    - ``max_attempts``: authorizations for one request before giving up;
      ``timeout``: seconds for each OAuth HTTP exchange.
    """

    def __init__(
        self,
        *,
        grant: Grant | None = None,
        registration: ClientRegistration | None = None,
        scope: str | None = None,
        store: TokenStore | None = None,
        server_url: str | None = None,
        max_attempts: int = 3,
        timeout: float = 30.0,
        assertion_signer: AssertionSigner | None = None,
        dpop: DPoPKey | bool = False,
        http_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.grant = grant or AuthorizationCodeGrant(HeadlessUserAgent())
        self.registration = registration or ClientRegistration()
        #: Scopes always asked for, on top of those the server requires.
        self.scope = scope
        self.store: TokenStore = store or MemoryTokenStore()
        self.server_url = server_url
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.assertion_signer = assertion_signer
        #: Binds tokens to this key (RFC 9449) where the authorization server supports it.
        self.dpop = DPoPKey() if dpop is True else (dpop or None)
        self._http_transport = http_transport
        self._lock = trio.Lock()
        #: This server's record, once read from (or written to) the store.
        self._record: Authorization | None = None
        #: Why the last authorization failed (None: none has, or the last one succeeded).
        self.failure: AuthorizationFailed | None = None

    # -- httpx.Auth ---------------------------------------------------------------------

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("OAuthClient works with httpx.AsyncClient (on trio) only")

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        server_url = self._server_url(request)
        if _origin(str(request.url)) != _origin(server_url):
            # Never hand this server's token to another origin (a legacy SSE server's
            # `endpoint` event, a redirect target...).
            yield request
            return
        tokens = await self._usable_tokens(server_url)
        self._apply(request, tokens)
        response = yield request
        nonce_retried = False
        authorizations = 0
        while response.status_code in (401, 403):
            challenge = _challenge(response)
            if self._new_dpop_nonce(response, challenge) and not nonce_retried:
                nonce_retried = True  # RFC 9449 §9: once more, with the server's nonce
                self._apply(request, tokens)
                response = yield request
                continue
            step_up = response.status_code == 403
            if step_up and (challenge is None or challenge.get("error") != "insufficient_scope"):
                return  # forbidden for another reason: more scopes would not help
            if authorizations >= self.max_attempts:
                log.warning("giving up after %d authorizations for one request", authorizations)
                return
            sent = tokens
            async with self._lock:
                tokens = await self._load_tokens(server_url)
                if step_up or _same(tokens, sent):  # else another request got new ones
                    authorizations += 1
                    await response.aread()
                    tokens = await self._authorize_once(server_url, challenge, step_up)
            self._apply(request, tokens)
            response = yield request
        if self.dpop is not None:
            self.dpop.remember_nonce(str(request.url), response.headers.get("dpop-nonce"))

    def _server_url(self, request: httpx.Request) -> str:
        if self.server_url is None:
            url = request.url
            self.server_url = urlunsplit((url.scheme, url.netloc.decode("ascii"), url.path, "", ""))
        return self.server_url

    def _apply(self, request: httpx.Request, tokens: Tokens | None) -> None:
        """Put the access token on ``request`` (as a DPoP-bound token with a fresh proof
        when it is one)."""
        request.headers.pop("dpop", None)
        if tokens is None:
            request.headers.pop("authorization", None)
            return
        if self.dpop is not None and tokens.token_type.lower() == "dpop":
            request.headers["authorization"] = f"DPoP {tokens.access_token}"
            request.headers["dpop"] = self.dpop.proof(
                request.method, str(request.url), tokens.access_token
            )
        else:
            request.headers["authorization"] = f"Bearer {tokens.access_token}"

    def _new_dpop_nonce(self, response: httpx.Response, challenge: Challenge | None) -> bool:
        """Whether the server asks for a DPoP nonce we did not send (``use_dpop_nonce``)."""
        if self.dpop is None or challenge is None or challenge.get("error") != "use_dpop_nonce":
            return False
        return self.dpop.remember_nonce(
            str(response.request.url), response.headers.get("dpop-nonce")
        )

    # -- tokens ------------------------------------------------------------------------

    async def _load(self, server_url: str) -> Authorization | None:
        """The record of ``server_url``: read from the store once, then kept in memory."""
        if self._record is None:
            self._record = await self.store.load(server_url)
        return self._record

    async def _save(self, server_url: str, record: Authorization) -> None:
        self._record = record
        await self.store.save(server_url, record)

    async def _load_tokens(self, server_url: str) -> Tokens | None:
        record = await self._load(server_url)
        return None if record is None else record.tokens

    async def _usable_tokens(self, server_url: str) -> Tokens | None:
        """The stored access token; refreshed first when it has expired (one refresh at
        a time: a caller that waited for the lock finds the token another refreshed)."""
        record = await self._load(server_url)
        if not _expired(record):
            return None if record is None else record.tokens
        async with self._lock:
            record = await self._load(server_url)
            if record is None or not _expired(record):
                return None if record is None else record.tokens
            return await self._refresh(server_url, record)

    async def _refresh(self, server_url: str, record: Authorization) -> Tokens | None:
        """New tokens for the expired ones of ``record``, saved; None when there is no
        refresh token (or nowhere to use it) or the refresh fails."""
        tokens = record.tokens
        if tokens is None or not (tokens.refresh_token and record.client and record.token_endpoint):
            return None
        async with self._http() as http:
            flow = TokenRequests(
                http,
                record.client,
                record.token_endpoint,
                record.resource or server_url,
                record.issuer,
                signer=self.assertion_signer,
                dpop=self.dpop if tokens.token_type.lower() == "dpop" else None,
            )
            try:
                refreshed = await flow.refresh(tokens)
            except AuthorizationFailed as error:
                log.info("refreshing the expired token failed: %s", error)
                return None
        await self._save(server_url, msgspec.structs.replace(record, tokens=refreshed))
        return refreshed

    async def _authorize_once(
        self, server_url: str, challenge: Challenge | None, step_up: bool
    ) -> Tokens:
        """:meth:`_authorize`, its failure kept in :attr:`failure`; refused at once after a
        user did not complete one (see the module docstring)."""
        if isinstance(self.failure, AuthorizationNotCompleted):
            raise AuthorizationNotCompleted(str(self.failure))
        try:
            tokens = await self._authorize(server_url, challenge, step_up)
        except httpx.InvalidURL as error:  # a URL in a peer's metadata
            self.failure = AuthorizationFailed(f"bad URL in OAuth metadata: {error}")
            raise self.failure from None
        except AuthorizationFailed as error:
            self.failure = error
            raise
        self.failure = None
        return tokens

    async def _authorize(
        self, server_url: str, challenge: Challenge | None, step_up: bool
    ) -> Tokens:
        """Discover, (re-)register if need be, and obtain new tokens (module docstring)."""
        async with self._http() as http:
            found = await discover(http, server_url, challenge)
            record = await self._load(server_url)
            if record is None or not same_issuer(record.issuer, found.metadata.issuer):
                if record is not None:
                    log.info(
                        "%s moved from %s to %s: registering anew",
                        server_url,
                        record.issuer,
                        found.metadata.issuer,
                    )
                record = Authorization(issuer=found.metadata.issuer)
            token_endpoint = found.metadata.token_endpoint
            if not token_endpoint:
                raise AuthorizationFailed(f"{found.issuer} names no token endpoint")
            client = record.client or await self._register(http, found)
            record = msgspec.structs.replace(
                record, client=client, token_endpoint=token_endpoint, resource=found.resource
            )
            flow = TokenRequests(
                http,
                client,
                token_endpoint,
                found.resource,
                found.metadata.issuer,
                found,
                signer=self.assertion_signer,
                dpop=self._dpop_for(found.metadata),
            )
            tokens = None
            if not step_up and record.tokens is not None and record.tokens.refresh_token:
                try:
                    tokens = await flow.refresh(record.tokens)
                except AuthorizationFailed as error:
                    log.info("refreshing failed (%s): authorizing anew", error)
            if tokens is None:
                tokens = await self.grant.obtain(
                    flow, self._scope(challenge, found, record, step_up)
                )
            await self._save(server_url, msgspec.structs.replace(record, tokens=tokens))
            return tokens

    def _dpop_for(self, metadata: AuthorizationServerMetadata) -> DPoPKey | None:
        """The DPoP key, when the server takes proofs signed with its algorithm."""
        if self.dpop is None:
            return None
        if self.dpop.algorithm not in (metadata.dpop_signing_alg_values_supported or ()):
            return None
        return self.dpop

    def _scope(
        self, challenge: Challenge | None, found: Discovery, record: Authorization, step_up: bool
    ) -> str | None:
        """The scopes to ask for (module docstring)."""
        required = challenge.get("scope") if challenge is not None else None
        if required is None and found.resource_metadata is not None:
            required = format_scope(found.resource_metadata.scopes_supported or ())
        granted = record.tokens.scope if step_up and record.tokens is not None else None
        wanted = union(granted, required, self.scope)
        if not wanted:
            return None
        if (
            "offline_access" in (found.metadata.scopes_supported or ())
            and "refresh_token" in self.grant.grant_types
        ):
            wanted = union(wanted, "offline_access")
        return format_scope(wanted)

    async def _register(self, http: httpx.AsyncClient, found: Discovery) -> RegisteredClient:
        """The client's identity at this authorization server (see :class:`ClientRegistration`)."""
        wanted = self.registration
        metadata = found.metadata
        if wanted.client_id is not None:
            method = wanted.token_endpoint_auth_method
            if method is None and self.assertion_signer is not None:
                method = "private_key_jwt"
            if method is None:
                method = choose_auth_method(
                    wanted.client_secret is not None,
                    metadata.token_endpoint_auth_methods_supported,
                )
            return RegisteredClient(
                client_id=wanted.client_id,
                client_secret=wanted.client_secret,
                token_endpoint_auth_method=method,
            )
        if wanted.metadata_url is not None and metadata.client_id_metadata_document_supported:
            method = wanted.token_endpoint_auth_method or "none"
            return RegisteredClient(
                client_id=wanted.metadata_url, token_endpoint_auth_method=method
            )
        if metadata.registration_endpoint:
            return await self._register_dynamically(http, metadata)
        raise AuthorizationFailed(
            f"{metadata.issuer} offers no dynamic registration: give the client a"
            " pre-registered client_id (ClientRegistration(client_id=...))"
        )

    async def _register_dynamically(
        self, http: httpx.AsyncClient, metadata: AuthorizationServerMetadata
    ) -> RegisteredClient:
        wanted = self.registration
        supported = metadata.token_endpoint_auth_methods_supported
        method = wanted.token_endpoint_auth_method
        if method is None:
            method = (
                "none"
                if supported is None or "none" in supported
                else choose_auth_method(True, supported)
            )
        body: dict[str, object] = {
            "client_name": wanted.client_name,
            "grant_types": list(self.grant.grant_types),
            "token_endpoint_auth_method": method,
            "application_type": wanted.application_type,
        }
        redirect_uri = getattr(self.grant, "redirect_uri", None)
        if redirect_uri is not None:
            body["redirect_uris"] = [redirect_uri]
            body["response_types"] = ["code"]
        assert metadata.registration_endpoint is not None
        response = await http.post(metadata.registration_endpoint, json=body)
        if response.status_code not in (200, 201):
            raise AuthorizationFailed(
                f"dynamic client registration answered HTTP {response.status_code}:"
                f" {response.text[:200]}"
            )
        try:
            answer = msgspec.json.decode(
                response.content[:MAX_REGISTRATION_RESPONSE], type=_RegistrationResponse
            )
        except msgspec.DecodeError as error:
            raise AuthorizationFailed(f"malformed registration response: {error}") from None
        if answer.token_endpoint_auth_method is not None:
            method = answer.token_endpoint_auth_method
        elif answer.client_secret is None:
            method = "none"
        log.info("registered at %s as %s (%s)", metadata.issuer, answer.client_id, method)
        return RegisteredClient(
            client_id=answer.client_id,
            client_secret=answer.client_secret,
            token_endpoint_auth_method=method,
            client_secret_expires_at=answer.client_secret_expires_at,
        )

    def _http(self) -> httpx.AsyncClient:
        """A short-lived HTTP client for the OAuth exchanges (never this auth itself)."""
        return oauth_http_client(self.timeout, self._http_transport)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return scheme, parts.netloc.lower()


def _challenge(response: httpx.Response) -> Challenge | None:
    """The ``Bearer`` (or else ``DPoP``) challenge of a 401/403."""
    headers = response.headers.get_list("www-authenticate")
    return find_challenge(headers, "bearer") or find_challenge(headers, "dpop")


def _same(one: Tokens | None, other: Tokens | None) -> bool:
    if one is None or other is None:
        return one is other
    return one.access_token == other.access_token
