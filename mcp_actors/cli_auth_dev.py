"""``mcp-actors auth keygen|token``: development access tokens, without an authorization server.

Protecting a server on your own machine takes three commands::

    mcp-actors auth keygen ./dev-key
    mcp-actors run notes.py --transport http --dev-auth ./dev-key
    mcp-actors call http://127.0.0.1:8000/mcp read_note id=1 \\
        --bearer "$(mcp-actors auth token --key ./dev-key --sub alice --scope notes:read)"

``keygen DIR`` writes an ES256 key pair (``DIR/private.jwk``, mode 0600, and
``DIR/public.jwk``) and never overwrites one; ``token`` prints a signed JWT access token
on stdout — ``--sub`` who it stands for, ``--scope`` what it grants (repeatable, or
space-separated), ``--audience`` the server's URL (default
``http://127.0.0.1:8000/mcp``, what ``run --transport http`` serves), ``--ttl`` its
lifetime in seconds (default 3600, at most a week). ``run --dev-auth DIR`` accepts exactly
those tokens and refuses to start on a non-loopback address. This is for development
only: see :mod:`mcp_actors.auth.server.dev_key`; a deployment verifies the tokens of an
authorization server (``JwtVerifier``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli_errors import EXIT_FAILURE, CliFailure
from .cli_run import positive_seconds

if TYPE_CHECKING:
    from .auth.server.dev_key import DevKeyError


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``auth`` sub-command (``keygen``, ``token``) to the CLI's sub-parsers."""
    auth: argparse.ArgumentParser = commands.add_parser(
        "auth", help="development keys and tokens (auth keygen DIR, auth token --key DIR)"
    )
    actions = auth.add_subparsers(required=True, metavar="ACTION")
    keygen = actions.add_parser("keygen", help="write a development key pair into DIR")
    keygen.add_argument("directory", metavar="DIR", type=Path)
    keygen.set_defaults(action=_keygen)
    token = actions.add_parser("token", help="print an access token signed with DIR's key")
    token.add_argument("--key", required=True, type=Path, metavar="DIR", help="from keygen")
    token.add_argument("--sub", required=True, help="who the token stands for")
    token.add_argument(
        "--scope",
        action="append",
        default=[],
        help="scopes granted (repeatable, or space-separated)",
    )
    token.add_argument(
        "--audience",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="the server's URL (default: what run --transport http serves, port 8000)",
    )
    token.add_argument(
        "--ttl",
        type=positive_seconds,
        default=argparse.SUPPRESS,
        help="lifetime in seconds (default an hour, at most a week)",
    )
    token.set_defaults(action=_token)
    return auth


def _keygen(options: argparse.Namespace) -> int:
    from .auth.server.dev_key import DevKeyError, generate_key_pair  # imports httpx

    try:
        kid = generate_key_pair(options.directory)
    except DevKeyError as error:
        raise _failure(error) from None
    print(
        f"mcp-actors: wrote {options.directory}/private.jwk (keep it private) and"
        f" public.jwk, key id {kid} (development only)",
        file=sys.stderr,
    )
    return 0


def _token(options: argparse.Namespace) -> int:
    from .auth.server.dev_key import DevKeyError, mint_token  # imports httpx

    scopes = [scope for given in options.scope for scope in given.split()]
    given = {name: getattr(options, name) for name in ("audience", "ttl") if name in options}
    try:
        token = mint_token(options.key, subject=options.sub, scopes=scopes, **given)
    except DevKeyError as error:
        raise _failure(error) from None
    print(token)
    return 0


def _failure(error: DevKeyError) -> CliFailure:
    return CliFailure(EXIT_FAILURE, str(error))
