"""``--bearer TOKEN`` and ``--header NAME=VALUE``: extra HTTP headers for a command's requests.

Shared by every command that talks to a server URL (``call``, ``inspect``, ``bench``)::

    mcp-actors call http://127.0.0.1:8000/mcp add a=1 b=2 --bearer "$TOKEN"
    mcp-actors inspect http://127.0.0.1:8000/mcp --header X-Api-Key=s3cret

``--header`` is repeatable; each is ``NAME=VALUE`` split at the first ``=``, and the
whole set is checked as :func:`~mcp_actors.client.headers.request_headers` checks it (a
valid name, a printable value, not one the transport sets, not twice, bounded in count
and bytes). ``--bearer`` defaults to ``$MCP_ACTORS_BEARER`` (so the token need not show
in the process list; it is not sent to a server launched over stdio or served
in-process, which has no HTTP). A bad header is an argparse error: one line, exit code 2.
"""

from __future__ import annotations

import argparse
import os

from .headers import HeaderError, request_headers

#: The environment variable ``--bearer`` defaults to.
BEARER_VARIABLE = "MCP_ACTORS_BEARER"


def _header(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` (nothing else), checked as a header alone."""
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        request_headers([(name, value)])
    except HeaderError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return name, value


def add_header_options(command: argparse.ArgumentParser) -> None:
    """Add ``--bearer`` and ``--header`` to ``command``."""
    group = command.add_argument_group("HTTP headers (http(s) and ws(s) URL targets)")
    group.add_argument(
        "--bearer",
        default=None,
        metavar="TOKEN",
        help=f"send Authorization: Bearer TOKEN, no OAuth (default: ${BEARER_VARIABLE})",
    )
    group.add_argument(
        "--header",
        dest="headers",
        type=_header,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="send this header on every request (repeatable)",
    )


def headers_of(options: argparse.Namespace, *, url: bool = True) -> dict[str, str] | None:
    """The extra headers ``--bearer`` (else ``$MCP_ACTORS_BEARER``, for a ``url`` target
    only) and ``--header`` give (None: none given); a problem of the set as a whole (a
    name twice, too many) raises ``HeaderError``."""
    bearer = options.bearer
    if bearer is None and url:
        bearer = os.environ.get(BEARER_VARIABLE) or None
    if not options.headers and bearer is None:
        return None
    return request_headers(options.headers, bearer)
