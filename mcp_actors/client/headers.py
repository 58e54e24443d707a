"""Extra HTTP headers a client sends on every request: an API key, a bearer token, a tenant.

A server behind an API gateway, or protected by a static key, wants a header the MCP
transport knows nothing about (``X-Api-Key: ...``, ``Authorization: Bearer ...``).
:func:`request_headers` checks such headers once, before anything is sent, so a typo
fails in one clear line rather than as a confusing answer from the server:

- a name is an HTTP token (RFC 9110 §5.6.2: letters, digits and ``!#$%&'*+-.^_`|~``);
- a value is visible ASCII, spaces and tabs (no CR/LF, so no header injection);
- names the transport sets itself (``Host``, ``Content-Type``, ``Accept``,
  ``Mcp-Session-Id``, ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``,
  ``Mcp-Param-*``, ...) are refused: sending them would break the protocol;
- a name given twice (whatever its case) is refused;
- at most :data:`MAX_HEADERS` headers of at most :data:`MAX_HEADER_BYTES` bytes in all
  (what a server's request-head limit would refuse anyway).

``bearer`` is the usual access token: it becomes ``Authorization: Bearer TOKEN``, and
must be an RFC 6750 ``b64token`` (no spaces, no quotes) — giving it and an
``Authorization`` header both is an error. Names come back lowercase.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from ..auth.challenge import is_token68

#: The most extra headers a client sends.
MAX_HEADERS: Final = 32
#: The most bytes the extra headers take in all (names and values).
MAX_HEADER_BYTES: Final = 8192
#: Headers the transports set themselves (and ``Mcp-Param-*``, by prefix).
RESERVED: Final = frozenset(
    {
        "accept",
        "connection",
        "content-length",
        "content-type",
        "host",
        "keep-alive",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_RESERVED_PREFIXES: Final = ("mcp-param-", "sec-websocket-")
_NAME: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE: Final = re.compile(r"[\t\x20-\x7e]*")


class HeaderError(ValueError):
    """A header that cannot be sent; the message names it and says why."""


def request_headers(
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    bearer: str | None = None,
) -> dict[str, str]:
    """``headers`` (a mapping, or name-value pairs) checked (module docstring), names
    lowercased, with ``bearer`` added as ``authorization: Bearer TOKEN``; raises
    :class:`HeaderError` on the first problem."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers or ()
    checked: dict[str, str] = {}
    for name, value in pairs:
        key = _checked_name(name)
        if key in checked:
            raise HeaderError(f"header {name!r} is given twice")
        checked[key] = _checked_value(name, value)
    if bearer is not None:
        if "authorization" in checked:
            raise HeaderError("give either a bearer token or an Authorization header, not both")
        if not is_token68(bearer):
            raise HeaderError(
                "the bearer token is not a valid access token (RFC 6750: letters, digits"
                " and -._~+/ then any '='; no spaces or quotes)"
            )
        checked["authorization"] = f"Bearer {bearer}"
    if len(checked) > MAX_HEADERS:
        raise HeaderError(f"at most {MAX_HEADERS} extra headers, not {len(checked)}")
    size = sum(len(name) + len(value) for name, value in checked.items())
    if size > MAX_HEADER_BYTES:
        raise HeaderError(f"the extra headers take {size} bytes, more than {MAX_HEADER_BYTES}")
    return checked


def _checked_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise HeaderError(
            f"{name!r} is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)"
        )
    key = name.lower()
    if key in RESERVED or key.startswith(_RESERVED_PREFIXES):
        raise HeaderError(f"header {name!r} is set by the transport itself and cannot be given")
    return key


def _checked_value(name: str, value: str) -> str:
    if not isinstance(value, str) or not _VALUE.fullmatch(value):
        raise HeaderError(
            f"the value of header {name!r} may hold only visible ASCII, spaces and tabs"
        )
    return value.strip(" \t")
