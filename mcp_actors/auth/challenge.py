"""``WWW-Authenticate`` challenges: built by a protected server, read by its client.

A ``401`` or ``403`` answer names what the client must do in challenges (RFC 9110
§11.6.1): a scheme, then either one ``token68`` or comma-separated
``name=value`` parameters, several challenges in one header separated by commas::

    WWW-Authenticate: Bearer resource_metadata="https://mcp.example.com/.well-known/
        oauth-protected-resource", scope="files:read", error="insufficient_scope"

MCP uses the ``Bearer`` scheme (RFC 6750 §3) and its parameters ``error``,
``error_description``, ``scope``; RFC 9728 §5.1 adds ``resource_metadata``, the
URL of the server's Protected Resource Metadata; DPoP (RFC 9449 §7.1) uses the
``DPoP`` scheme with ``algs``. Scheme and parameter names are case-insensitive:
:func:`parse_challenges` lowercases both.

Parsing is lenient where real servers are sloppy (spaces around ``=``, empty
parameters, a trailing comma) and never raises: what cannot be read is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import attrs

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"?', re.DOTALL)
_SPACES = re.compile(r"[ \t]*")
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
#: Longest header read; the rest is ignored (a peer's header is untrusted input).
MAX_HEADER_LENGTH = 8192


@attrs.frozen
class Challenge:
    """One challenge: its scheme (lowercase), parameters (names lowercase) or token68."""

    scheme: str
    params: Mapping[str, str] = attrs.field(factory=dict)
    token68: str | None = None

    def get(self, name: str) -> str | None:
        """A parameter's value, by case-insensitive name."""
        return self.params.get(name.lower())


def parse_challenges(headers: Iterable[str]) -> list[Challenge]:
    """Every challenge in the given ``WWW-Authenticate`` header values, in order."""
    found: list[Challenge] = []
    for header in headers:
        found.extend(_Scanner(header[:MAX_HEADER_LENGTH]).challenges())
    return found


def find_challenge(headers: Iterable[str], scheme: str = "bearer") -> Challenge | None:
    """The first challenge of ``scheme`` (case-insensitive), if any."""
    wanted = scheme.lower()
    return next((c for c in parse_challenges(headers) if c.scheme == wanted), None)


def is_token68(text: str) -> bool:
    """Whether ``text`` is a ``token68`` (RFC 9110 §11.2) — the ``b64token`` of RFC 6750
    §2.1, which every Bearer access token is."""
    return _TOKEN68.fullmatch(text) is not None


def build_challenge(scheme: str, params: Mapping[str, str | None] | None = None) -> str:
    """One challenge as a header value: ``Bearer realm="mcp", scope="a b"``.

    Parameters whose value is None are left out; every value is sent as a quoted
    string (RFC 6750 §3 requires it for ``scope`` and ``error_description``).
    """
    if not _TOKEN.fullmatch(scheme):
        raise ValueError(f"not an HTTP auth scheme: {scheme!r}")
    parts = []
    for name, value in (params or {}).items():
        if value is None:
            continue
        if not _TOKEN.fullmatch(name):
            raise ValueError(f"not an auth parameter name: {name!r}")
        if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
            raise ValueError(f"control character in the {name} parameter")
        quoted = value.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(f'{name}="{quoted}"')
    return f"{scheme} {', '.join(parts)}" if parts else scheme


def bearer_challenge(
    *,
    resource_metadata: str | None = None,
    scope: str | None = None,
    error: str | None = None,
    error_description: str | None = None,
    realm: str | None = None,
) -> str:
    """The ``Bearer`` challenge of a ``401`` (no or a bad token) or a ``403``
    (``error="insufficient_scope"``, with the ``scope`` the request needs)."""
    return build_challenge(
        "Bearer",
        {
            "realm": realm,
            "error": error,
            "error_description": error_description,
            "scope": scope,
            "resource_metadata": resource_metadata,
        },
    )


class _Scanner:
    """Reads one header value: ``challenge *( "," challenge )``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def challenges(self) -> list[Challenge]:
        found: list[Challenge] = []
        while True:
            self._skip_separators()
            if self.pos >= len(self.text):
                return found
            scheme = self._match(_TOKEN)
            if scheme is None:  # not a challenge: skip to the next comma
                self._skip_past_comma()
                continue
            found.append(self._challenge(scheme.lower()))

    def _challenge(self, scheme: str) -> Challenge:
        self._match(_SPACES)
        start = self.pos
        if self._at_param():
            params: dict[str, str] = {}
            while self._at_param():
                name, value = self._param()
                params.setdefault(name, value)
                self._match(_SPACES)
                if not self._peek(","):
                    break
                mark = self.pos
                self._skip_separators()
                if not self._at_param():  # the next challenge starts here
                    self.pos = mark
                    break
            return Challenge(scheme, params)
        token68 = self._match(_TOKEN68)
        if token68 is not None and self._at_end_of_item():
            return Challenge(scheme, token68=token68)
        self.pos = start
        return Challenge(scheme)

    def _at_param(self) -> bool:
        mark = self.pos
        try:
            if self._match(_TOKEN) is None:
                return False
            self._match(_SPACES)
            if not self._peek("="):
                return False
            self.pos += 1
            self._match(_SPACES)
            # `name=` then a value (or an empty value before a comma/end), not `token68==`
            return not self._peek("=")
        finally:
            self.pos = mark

    def _param(self) -> tuple[str, str]:
        name = self._match(_TOKEN) or ""
        self._match(_SPACES)
        self.pos += 1  # "="
        self._match(_SPACES)
        if self._peek('"'):
            found = _QUOTED.match(self.text, self.pos)
            assert found is not None  # a quote always matches (the closing one is optional)
            self.pos = found.end()
            return name.lower(), _ESCAPED.sub(r"\1", found.group(1))
        return name.lower(), self._match(_TOKEN) or ""

    def _at_end_of_item(self) -> bool:
        self._match(_SPACES)
        return self.pos >= len(self.text) or self._peek(",")

    def _skip_separators(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t,":
            self.pos += 1

    def _skip_past_comma(self) -> None:
        comma = self.text.find(",", self.pos)
        self.pos = len(self.text) if comma < 0 else comma + 1

    def _peek(self, char: str) -> bool:
        return self.text.startswith(char, self.pos)

    def _match(self, pattern: re.Pattern[str]) -> str | None:
        found = pattern.match(self.text, self.pos)
        if found is None or found.end() == self.pos:
            return None
        self.pos = found.end()
        return found.group(0)


def describe_refusal(status: int, headers: Iterable[str]) -> str:
    """An HTTP refusal in words, with what its ``Bearer`` challenge says, e.g.
    ``HTTP 403 insufficient_scope: the token lacks scopes this request needs (scope
    needed: notes:read)``; just ``HTTP 500`` without a challenge."""
    challenge = find_challenge(headers)
    if challenge is None:
        return f"HTTP {status}"
    error = challenge.get("error")
    words = f"HTTP {status} {error}" if error else f"HTTP {status}"
    description = challenge.get("error_description")
    if description:
        words += f": {description}"
    elif error is None and status == 401:
        words += ": an access token is needed"
    scope = challenge.get("scope")
    if scope and (status == 403 or error is None):
        words += f" (scope needed: {scope})"
    return words
