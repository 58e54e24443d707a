"""DNS-rebinding protection: which ``Host`` and ``Origin`` headers an HTTP transport accepts.

A web page on ``evil.example.com`` can make a victim's browser send requests to a
server on ``127.0.0.1`` by pointing its own DNS name at that address: the
request then carries ``Host: evil.example.com`` and ``Origin:
http://evil.example.com``. The specification therefore requires servers to
check ``Origin`` (403 if present and not allowed). ``Origin`` alone is not
enough: a page served from the rebound name sends requests that are
*same-origin* (``Origin: http://evil.example.com:8000``, ``Host:
evil.example.com:8000``). Only a ``Host`` allow-list stops those, so every
server checks ``Host`` (403 when refused): a loopback bind against the loopback
names by default, any other bind against a list that must be given explicitly —
:meth:`HostPolicy.for_bind` refuses to build a policy without one
(:class:`AllowedHostsRequired`). The pattern ``"*"`` allows any ``Host``, for a
server behind a proxy that checks it; it turns the protection off.

Patterns are exact (``"localhost:3000"``, ``"http://localhost:3000"``) or end in
``:*`` to allow any port (``"127.0.0.1:*"``). A request without ``Origin``
(any non-browser client) passes the origin check; a same-origin request passes
too (``Origin`` equal to the scheme plus the ``Host`` the request was sent to),
except that the ``Host`` itself must then pass its own check.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Final

import attrs

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether a bind address only accepts connections from this machine."""
    host = host.strip("[]")
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_hosts() -> tuple[str, ...]:
    return ("127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*")


def loopback_origins() -> tuple[str, ...]:
    return tuple(
        f"{scheme}://{host}"
        for scheme in ("http", "https")
        for host in ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
    )


#: The ``allowed_hosts`` pattern that admits any ``Host`` (no DNS-rebinding protection).
ANY_HOST = "*"


class AllowedHostsRequired(ValueError):
    """A server bound beyond loopback was given no ``Host`` allow-list."""

    def __init__(self, host: str) -> None:
        super().__init__(
            f"binding to {host} (not a loopback address) requires an allow-list of Host values"
            " to protect against DNS rebinding: give allowed_hosts (--allowed-host NAME[:PORT],"
            " repeatable; NAME:* allows any port, '*' allows any Host)"
        )


#: How many ``Host`` values a policy remembers its answer for, each of at most
#: :data:`_HOST_LENGTH` characters (a name of 253 and a port).
_HOSTS_KEPT: Final = 64
_HOST_LENGTH: Final = 261


@attrs.frozen
class HostPolicy:
    """The allow-lists an HTTP transport checks each request against.

    ``allowed_hosts=None`` skips the ``Host`` check; an empty ``allowed_origins``
    still admits requests without ``Origin`` and same-origin ones.
    """

    allowed_hosts: tuple[str, ...] | None = None
    allowed_origins: tuple[str, ...] = ()
    #: Both lists lower-cased once, as every request is checked against them.
    _hosts: tuple[str, ...] | None = attrs.field(init=False, eq=False, repr=False)
    _origins: tuple[str, ...] = attrs.field(init=False, eq=False, repr=False)
    #: ``Host`` values checked already, with the answer: clients send the same one on
    #: every request. At most :data:`_HOSTS_KEPT`, then it starts over (a peer sending
    #: a new value each time costs a check each time, as without it).
    _checked_hosts: dict[str, bool] = attrs.field(init=False, eq=False, repr=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        hosts = self.allowed_hosts
        lowered = None if hosts is None else tuple(host.lower() for host in hosts)
        object.__setattr__(self, "_hosts", lowered)
        object.__setattr__(self, "_origins", tuple(o.lower() for o in self.allowed_origins))

    @classmethod
    def for_bind(
        cls,
        host: str,
        *,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
    ) -> HostPolicy:
        """The policy of a server bound to ``host``: loopback binds admit loopback names by
        default; any other bind needs ``allowed_hosts`` (else :class:`AllowedHostsRequired`)."""
        loopback = is_loopback(host)
        if allowed_hosts is None:
            if not loopback:
                raise AllowedHostsRequired(host)
            allowed_hosts = loopback_hosts()
        if allowed_origins is None:
            allowed_origins = loopback_origins() if loopback else ()
        hosts = None if ANY_HOST in allowed_hosts else tuple(allowed_hosts)
        return cls(hosts, tuple(allowed_origins))

    @classmethod
    def origins_for_bind(
        cls, host: str, *, allowed_origins: Sequence[str] | None = None
    ) -> HostPolicy:
        """An ``Origin``-only policy, for a server that cannot see ``Host`` (WebSocket).

        Without ``Host`` no request counts as same-origin, so a rebound page's
        ``Origin`` is always checked against the list.
        """
        if allowed_origins is None:
            allowed_origins = loopback_origins() if is_loopback(host) else ()
        return cls(None, tuple(allowed_origins))

    def check(self, host: str | None, origin: str | None, scheme: str = "http") -> str | None:
        """Why the request must be refused (answer 403), or None if it may proceed."""
        if self._hosts is not None and (host is None or not self._host_allowed(host)):
            return f"Host {host!r} is not allowed"
        if origin is None:
            return None
        origin = origin.lower().rstrip("/")
        if host is not None and origin == f"{scheme}://{host.lower()}":
            return None
        if _matches(origin, self._origins):
            return None
        return f"Origin {origin!r} is not allowed"

    def _host_allowed(self, host: str) -> bool:
        checked = self._checked_hosts
        allowed = checked.get(host)
        if allowed is None:
            assert self._hosts is not None
            allowed = _matches(host.lower(), self._hosts)
            if len(host) <= _HOST_LENGTH:
                if len(checked) >= _HOSTS_KEPT:
                    checked.clear()
                checked[host] = allowed
        return allowed


def _matches(value: str, patterns: Sequence[str]) -> bool:
    """Whether ``value`` matches one of ``patterns`` (both lower-cased)."""
    for pattern in patterns:
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if value == base:
                return True
            prefix, _, port = value.rpartition(":")
            if prefix == base and port.isdigit():
                return True
        elif value == pattern:
            return True
    return False
