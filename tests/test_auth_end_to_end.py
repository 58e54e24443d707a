"""Our OAuth client, our protected server and a real authorization server, end to end.

Nobody holds a token at the start: the client meets the server's ``401``, discovers the
authorization server from the protected resource metadata, registers itself (dynamic
registration), runs the authorization code flow with PKCE through a browser-less user
agent (the authorization server's login and consent step approves at once), and calls.
Then a tool needing a scope it was not granted makes it step up (``403
insufficient_scope``), and a token that expires is refreshed.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import httpx
import trio

from mcp_actors import Context, Server, open_client
from mcp_actors.auth.client import ClientRegistration, OAuthClient
from mcp_actors.auth.client.authorization_code import AuthorizationCodeGrant
from mcp_actors.auth.client.tokens import MemoryTokenStore
from mcp_actors.auth.client.user_agent import redirect_parameters
from mcp_actors.auth.server import JwtVerifier, ResourceServer
from mcp_actors.server.serve_http import serve_http

from servers.authorization_server import AuthorizationServer

REDIRECT_URI = "http://127.0.0.1:33418/callback"


class BrowserlessUserAgent:
    """What a browser does for a user who approves at once: follows the authorization
    server's redirects (keeping its cookies) until one goes to the redirect URI."""

    redirect_uri = REDIRECT_URI

    def __init__(self) -> None:
        self.visits = 0

    async def authorize(self, authorization_url: str) -> Mapping[str, str]:
        self.visits += 1
        url = httpx.URL(authorization_url)
        async with httpx.AsyncClient(follow_redirects=False, timeout=10) as browser:
            for _ in range(10):
                response = await browser.get(url)
                assert response.is_redirect, response.text[:300]
                url = response.url.join(response.headers["location"])
                if str(url).startswith(REDIRECT_URI):
                    return redirect_parameters(str(url), REDIRECT_URI)
        raise AssertionError("the authorization server never redirected back")


def notes_server() -> Server:
    server = Server("notes")

    @server.tool(scopes=["notes:read"])
    async def whoami(ctx: Context) -> str:
        principal = ctx.principal
        assert principal is not None
        return f"{principal.subject} {' '.join(sorted(principal.scopes))}"

    @server.tool(scopes=["notes:write"])
    async def write_note(text: str, ctx: Context) -> str:
        assert ctx.principal is not None
        return f"{ctx.principal.subject} saved {text}"

    return server


async def test_our_client_authorizes_steps_up_and_refreshes(oauth: AuthorizationServer) -> None:
    auth = ResourceServer(
        verifier=JwtVerifier(oauth.issuer(), leeway=0),
        authorization_servers=[oauth.issuer()],
        scopes_supported=["notes:read"],
    )
    user_agent = BrowserlessUserAgent()
    store = MemoryTokenStore()
    client_auth = OAuthClient(
        grant=AuthorizationCodeGrant(user_agent),
        # The test authorization server gives clients so named 2-second access tokens.
        registration=ClientRegistration(client_name="mcp-actors e2e (2-second tokens)"),
        store=store,
    )
    async with trio.open_nursery() as nursery:
        http = await nursery.start(partial(serve_http, notes_server(), port=0, auth=auth))
        async with open_client(http.url, auth=client_auth) as client:
            result = await client.call_tool("whoami", {})
            assert result.content[0].text == "alice notes:read"  # type: ignore[union-attr]
            assert user_agent.visits == 1
            record = await store.load(http.url)
            assert record is not None and record.tokens is not None
            first = record.tokens
            assert first.refresh_token

            # Step-up: notes:write was never granted; the server says so (403) and the
            # client authorizes again for the union of the scopes.
            saved = await client.call_tool("write_note", {"text": "hello"})
            assert saved.content[0].text == "alice saved hello"  # type: ignore[union-attr]
            assert user_agent.visits == 2

            # Refresh: once the access token has expired, the refresh token replaces it
            # without the user.
            await trio.sleep(2.5)
            again = await client.call_tool("whoami", {})
            assert again.content[0].text == "alice notes:read notes:write"  # type: ignore[union-attr]
            assert user_agent.visits == 2
            record = await store.load(http.url)
            assert record is not None and record.tokens is not None
            assert record.tokens.access_token not in (first.access_token,)
        nursery.cancel_scope.cancel()
