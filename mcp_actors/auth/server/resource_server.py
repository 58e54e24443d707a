"""An MCP server as an OAuth 2.1 resource server: the HTTP auth hook every front end calls.

:class:`ResourceServer` implements :class:`~mcp_actors.transports.http.auth.HttpAuthHook`:

- it serves the Protected Resource Metadata document (RFC 9728) at
  ``/.well-known/oauth-protected-resource`` followed by the resource's path (and at the
  bare well-known path too, the fallback clients probe), naming the authorization servers
  and the scopes;
- it takes the access token from the ``Authorization: Bearer`` header only. A request
  without one gets ``401`` with ``WWW-Authenticate: Bearer resource_metadata="…",
  scope="…"``; a token in the query string (``access_token=``), ``401``
  ``invalid_request``; a malformed header — one whose credentials are not the
  ``b64token`` of RFC 6750 §2.1, which no access token can fail to be — ``400``, without
  troubling the verifier (nor, through it, the authorization server); a token the
  verifier refuses, ``401 invalid_token`` with the reason;
- a request needing scopes the token lacks gets ``403 insufficient_scope`` with the
  ``scope`` it needs — the scopes every request needs (``required_scopes``) plus those of
  the tool, prompt or resource it acts on (declared with ``scopes=[...]`` on the
  decorator), so that the client can step up.

``public_methods`` may be called without a token (none by default; e.g.
``{"server/discover"}`` lets a client probe versions before it authorizes). A token, if
sent, is always checked.

``resource`` is the server's canonical URI, the audience its tokens must name; left None,
:func:`~mcp_actors.server.serve_http.serve_http` sets it to the URL it serves at.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final
from urllib.parse import parse_qs, urlsplit

import attrs
import msgspec

from ...protocol.targets import request_targets
from ...transports.http.auth import HttpAnswer, Principal
from ..challenge import bearer_challenge, is_token68
from ..metadata import ProtectedResourceMetadata, canonical_uri
from ..scopes import format_scope
from .verifier import InvalidToken, ResourceRestricted, TokenVerifier

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
#: The scopes a request's method needs, by method and the name or URI it acts on.
ScopesOf = Callable[[str, str | None], frozenset[str]]


def _no_scopes(method: str, target: str | None) -> frozenset[str]:
    return frozenset()


@attrs.define(eq=False)
class ResourceServer:
    """The resource-server side of OAuth for one MCP endpoint (module docstring)."""

    verifier: TokenVerifier
    authorization_servers: Sequence[str]
    #: Our canonical URI (RFC 8707); None until serve_http sets it (see module docstring).
    resource: str | None = attrs.field(default=None)
    #: Advertised in the metadata document (the minimal set for basic use).
    scopes_supported: Sequence[str] | None = None
    #: Scopes every request needs, whatever it does.
    required_scopes: Sequence[str] = ()
    public_methods: frozenset[str] = frozenset()
    resource_name: str | None = None
    resource_documentation: str | None = None
    #: The scopes a method needs beyond ``required_scopes``; serve_http sets it from the
    #: server's decorators (see :meth:`protect`).
    scopes_of: ScopesOf = _no_scopes

    def __attrs_post_init__(self) -> None:
        if self.resource is not None:
            self.resource = canonical_uri(self.resource)
        if not self.authorization_servers:
            raise ValueError("a resource server names at least one authorization server")

    def protect(self, scopes_of: ScopesOf, url: str) -> None:
        """Bind to the server it protects: its per-method scopes, and its URL when
        ``resource`` was left None (what serve_http calls once it listens). A verifier
        that may not protect that resource (:class:`~.verifier.ResourceRestricted`: a
        development key on a public address) raises here, before anything is served."""
        resource = canonical_uri(url) if self.resource is None else self.resource
        if isinstance(self.verifier, ResourceRestricted):
            self.verifier.check_resource(resource)
        self.scopes_of = scopes_of
        self.resource = resource

    # -- what the front end calls --------------------------------------------------------

    async def check_request(
        self, method: str, path: str, headers: Mapping[str, str], query_string: str
    ) -> Principal | HttpAnswer:
        resource = self.resource
        if resource is None:
            return HttpAnswer(503, (("retry-after", "1"),), b"not serving yet")
        if path.rstrip("/") in self._metadata_paths(resource):
            return self._metadata_answer(method)
        if "access_token" in parse_qs(query_string):
            return self._challenge(
                401,
                "invalid_request",
                "access tokens are accepted in the Authorization header only",
            )
        authorization = headers.get("authorization")
        if authorization is None or not authorization[:7].lower().startswith("bearer "):
            if authorization is None and method == "POST" and self.public_methods:
                return Principal.anonymous()  # check_body lets public methods through
            return self._challenge(401)
        token = authorization[7:].strip()
        if not is_token68(token):
            return self._challenge(400, "invalid_request", "malformed Authorization header")
        try:
            principal = await self.verifier.verify(token, resource)
        except InvalidToken as refusal:
            return self._challenge(401, "invalid_token", str(refusal))
        missing = frozenset(self.required_scopes) - principal.scopes
        if missing:
            return self._insufficient(frozenset(self.required_scopes))
        return principal

    def check_body(self, principal: Principal, body: bytes) -> HttpAnswer | None:
        targets = request_targets(body)
        if targets is None:
            return None if principal.authenticated else self._challenge(401)
        if not principal.authenticated:
            public = self.public_methods
            if targets and all(target.method in public for target in targets):
                return None
            return self._challenge(401)
        needed = frozenset(self.required_scopes).union(
            *(self.scopes_of(target.method, target.name) for target in targets)
        )
        if not principal.has_scopes(needed):
            return self._insufficient(needed)
        return None

    # -- the answers ---------------------------------------------------------------------

    def metadata_url(self) -> str:
        """Where this resource's metadata document is (RFC 9728 §3.1): over HTTP(S) at the
        resource's host, even for a ``ws://`` (``wss://``) resource."""
        assert self.resource is not None
        parts = urlsplit(self.resource)
        scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
        return f"{scheme}://{parts.netloc}{WELL_KNOWN}{parts.path}"

    def metadata(self) -> ProtectedResourceMetadata:
        """The Protected Resource Metadata document (RFC 9728 §2)."""
        assert self.resource is not None
        return ProtectedResourceMetadata(
            resource=self.resource,
            authorization_servers=list(self.authorization_servers),
            scopes_supported=None if self.scopes_supported is None else list(self.scopes_supported),
            bearer_methods_supported=["header"],
            resource_name=self.resource_name,
            resource_documentation=self.resource_documentation,
        )

    def _metadata_paths(self, resource: str) -> tuple[str, ...]:
        path = urlsplit(resource).path
        return (WELL_KNOWN + path, WELL_KNOWN) if path else (WELL_KNOWN,)

    def _metadata_answer(self, method: str) -> HttpAnswer:
        if method not in ("GET", "HEAD"):
            return HttpAnswer(405, (("allow", "GET"),))
        headers = (
            ("content-type", "application/json"),
            ("cache-control", "max-age=300"),
            ("access-control-allow-origin", "*"),
        )
        return HttpAnswer(200, headers, msgspec.json.encode(self.metadata()))

    def _challenge(
        self, status: int, error: str | None = None, description: str | None = None
    ) -> HttpAnswer:
        """A ``401``/``400`` with the ``WWW-Authenticate`` challenge (RFC 6750 §3): where
        the metadata is, and the scopes to ask for (every request's, else the advertised)."""
        scope = format_scope(self.required_scopes or self.scopes_supported or ())
        return self._answer(status, scope, error, description)

    def _insufficient(self, needed: frozenset[str]) -> HttpAnswer:
        """A ``403 insufficient_scope`` naming the scopes the operation needs."""
        description = "the token lacks scopes this request needs"
        return self._answer(403, format_scope(sorted(needed)), "insufficient_scope", description)

    def _answer(
        self, status: int, scope: str | None, error: str | None, description: str | None
    ) -> HttpAnswer:
        if description is not None:  # a header value: printable ASCII only
            description = "".join(c if " " <= c <= "~" else "?" for c in description)
        challenge = bearer_challenge(
            resource_metadata=self.metadata_url(),
            scope=scope,
            error=error,
            error_description=description,
        )
        body: dict[str, str] = {"error": error or "unauthorized"}
        if description is not None:
            body["error_description"] = description
        headers = (("www-authenticate", challenge), ("content-type", "application/json"))
        return HttpAnswer(status, headers, msgspec.json.encode(body))
