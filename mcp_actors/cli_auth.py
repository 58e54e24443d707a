"""OAuth for the command line: ``mcp-actors call/inspect URL`` against a protected server.

An ``http(s)://`` or ``ws(s)://`` target gets an :class:`~mcp_actors.auth.client.OAuthClient`. It
does nothing until the server answers ``401``; then it discovers the authorization
server, registers (or uses ``--client-id``/``--client-secret``), prints the
authorization URL and opens the browser (``--no-browser``: only prints it), and
takes the answer on a loopback redirect URI (``http://127.0.0.1:PORT/callback``),
waiting at most ``--timeout`` seconds (``call``; 300 for ``inspect``): a login not
completed by then fails the command with exit code 5 (:func:`not_authorized`).
Tokens and registrations are kept in a file readable by its owner only
(``--token-file``, default ``$XDG_CONFIG_HOME/mcp-actors/tokens.json``), so the next
command reuses (or refreshes) them. ``--no-auth`` turns all of it off.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .auth.challenge import describe_refusal
from .cli_errors import EXIT_NOT_AUTHORIZED, CliFailure
from .client.targets import UrlTarget
from .protocol.errors import McpError

if TYPE_CHECKING:
    from .auth.client import OAuthClient

#: Seconds to wait for the login when the command has no ``--timeout``.
LOGIN_TIMEOUT = 300.0


def default_token_file() -> Path:
    """``$XDG_CONFIG_HOME/mcp-actors/tokens.json`` (``~/.config`` when unset)."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "mcp-actors" / "tokens.json"


def add_auth_options(command: argparse.ArgumentParser) -> None:
    group = command.add_argument_group("authorization (OAuth; http(s) and ws(s) URL targets)")
    group.add_argument("--no-auth", action="store_true", help="never authorize (no OAuth)")
    group.add_argument("--client-id", default=None, help="a pre-registered OAuth client id")
    group.add_argument(
        "--client-secret",
        default=os.environ.get("MCP_ACTORS_CLIENT_SECRET"),
        help="its secret (default: $MCP_ACTORS_CLIENT_SECRET)",
    )
    group.add_argument("--scope", default=None, help="scopes to ask for, space-separated")
    group.add_argument(
        "--no-browser", action="store_true", help="print the authorization URL, open no browser"
    )
    group.add_argument(
        "--token-file",
        type=Path,
        default=None,
        help="where tokens are kept, mode 0600 (default: $XDG_CONFIG_HOME/mcp-actors/tokens.json)",
    )


def oauth_for(options: argparse.Namespace, target: object) -> OAuthClient | None:
    """The OAuth client for a URL target (None for other targets, or with --no-auth)."""
    if options.no_auth or not isinstance(target, UrlTarget):
        return None
    from .auth.client import ClientRegistration, FileTokenStore, OAuthClient
    from .auth.client.authorization_code import AuthorizationCodeGrant
    from .auth.client.loopback import LoopbackUserAgent

    timeout = getattr(options, "timeout", LOGIN_TIMEOUT)
    agent = LoopbackUserAgent(open_browser=not options.no_browser, timeout=timeout)
    return OAuthClient(
        grant=AuthorizationCodeGrant(agent),
        registration=ClientRegistration(
            client_id=options.client_id, client_secret=options.client_secret
        ),
        scope=options.scope,
        store=FileTokenStore(options.token_file or default_token_file()),
    )


def not_authorized(oauth: OAuthClient | None) -> CliFailure | None:
    """The failure to report when ``oauth`` could not authorize (whatever the transport
    made of it: a request failing with "cannot reach ..."), else None."""
    if oauth is None or oauth.failure is None:
        return None
    from .auth.client import AuthorizationNotCompleted

    if isinstance(oauth.failure, AuthorizationNotCompleted):
        return CliFailure(
            EXIT_NOT_AUTHORIZED,
            f"authorization was not completed: {oauth.failure} (open the URL printed above"
            " and log in before the wait ends)",
        )
    return CliFailure(EXIT_NOT_AUTHORIZED, f"authorization failed: {oauth.failure}")


def refused(error: BaseException) -> CliFailure | None:
    """The failure to report when the server refused a request for want of a (valid,
    sufficient) access token — its ``WWW-Authenticate`` challenge in words, e.g. ``HTTP
    401 invalid_token: the token has expired`` — else None."""
    data = error.data if isinstance(error, McpError) else None
    if not isinstance(data, dict) or not isinstance(data.get("wwwAuthenticate"), list):
        return None
    refusal = describe_refusal(data["status"], data["wwwAuthenticate"])
    return CliFailure(EXIT_NOT_AUTHORIZED, f"the server refused the request: {refusal}")
