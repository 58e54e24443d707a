"""The forms of ``--redis-url`` (``[shared] redis_url``): one server, a Cluster, or Sentinel.

=======================================================  =====================================
form                                                     what it reaches
=======================================================  =====================================
``redis://[user:password@]host[:port][/db]``              one server (port 6379, db 0)
``rediss://...``                                         the same over TLS
``unix://[user:password@]/path/to/redis.sock[?db=N]``    one server on a Unix socket
``redis+cluster://[user:password@]host:port,host:port``  a Redis Cluster, from these seed nodes
``rediss+cluster://...``                                 the same over TLS
``redis+sentinel://[user:password@]host:port,host:port   the primary Sentinel names ``service``
/service[/db]``                                          (Sentinels on port 26379 by default)
``rediss+sentinel://...``                                the same over TLS (to the primary)
=======================================================  =====================================

Every form is checked when the settings are read (:func:`parse_redis_url`): a
scheme not in the table, a missing host, a port outside 1-65535, a db that is not a
number from 0 to 15 (Cluster has none: only db 0), a Sentinel URL without its
service, a query parameter other than ``db`` — each fails with a message saying
which part and what was expected. A user and password (``%``-escaped) are those of
the Redis servers (Cluster nodes, the Sentinel-managed primary); Sentinels themselves
are reached without a password.
"""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

import attrs

DEFAULT_PORT = 6379
DEFAULT_SENTINEL_PORT = 26379
#: A db is a number below this (Redis's default ``databases 16``).
MAX_DB = 16


@attrs.frozen
class Credentials:
    """Who connects (None: no ``AUTH``)."""

    username: str | None = None
    password: str | None = None


@attrs.frozen
class SingleServer:
    """One Redis server: ``url`` as coredis takes it."""

    url: str


@attrs.frozen
class ClusterNodes:
    """A Redis Cluster: the seed nodes coredis discovers the others from."""

    nodes: tuple[tuple[str, int], ...]
    credentials: Credentials
    tls: bool


@attrs.frozen
class SentinelService:
    """The primary Redis that ``sentinels`` know by the name ``service``."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int
    credentials: Credentials
    tls: bool


RedisTarget = SingleServer | ClusterNodes | SentinelService
_SINGLE = ("redis", "rediss", "unix")
_CLUSTER = ("redis+cluster", "rediss+cluster")
_SENTINEL = ("redis+sentinel", "rediss+sentinel")


class RedisUrlError(ValueError):
    """A ``redis_url`` that is none of the forms (the message says what is wrong)."""


def parse_redis_url(url: str) -> RedisTarget:
    """What ``url`` reaches, or :class:`RedisUrlError` (see the module docstring)."""
    scheme, separator, _ = url.partition("://")
    scheme = scheme.lower()
    if not separator or scheme not in (*_SINGLE, *_CLUSTER, *_SENTINEL):
        forms = ", ".join(f"{name}://" for name in (*_SINGLE, *_CLUSTER, *_SENTINEL))
        raise RedisUrlError(f"redis_url {_shown(url)}: the scheme must be one of {forms}")
    if scheme in _SINGLE:
        _check_single(url, scheme)
        return SingleServer(url)
    authority, path, query = _split(url, scheme)
    credentials, hosts = _credentials(authority)
    if query:
        raise RedisUrlError(f"redis_url {_shown(url)}: {scheme}:// takes no query parameters")
    tls = scheme.startswith("rediss")
    if scheme in _CLUSTER:
        if path not in ("", "/", "/0"):
            raise RedisUrlError(
                f"redis_url {_shown(url)}: a Redis Cluster has db 0 only; no path after the nodes"
            )
        return ClusterNodes(_nodes(url, hosts, DEFAULT_PORT), credentials, tls)
    parts = [part for part in path.split("/") if part]
    if not parts or len(parts) > 2:
        raise RedisUrlError(
            f"redis_url {_shown(url)}: a Sentinel URL names its service:"
            f" {scheme}://host:port,host:port/<service>[/<db>]"
        )
    db = _db(url, parts[1]) if len(parts) == 2 else 0
    service = unquote(parts[0])
    return SentinelService(_nodes(url, hosts, DEFAULT_SENTINEL_PORT), service, db, credentials, tls)


def _split(url: str, scheme: str) -> tuple[str, str, str]:
    rest = url.split("://", 1)[1]
    rest, _, query = rest.partition("?")
    authority, slash, path = rest.partition("/")
    return authority, slash + path, query


def _credentials(authority: str) -> tuple[Credentials, str]:
    userinfo, at, hosts = authority.rpartition("@")
    if not at:
        return Credentials(), authority
    username, colon, password = userinfo.partition(":")
    return Credentials(unquote(username) or None, unquote(password) if colon else None), hosts


def _nodes(url: str, hosts: str, default_port: int) -> tuple[tuple[str, int], ...]:
    if not hosts:
        raise RedisUrlError(f"redis_url {_shown(url)}: no host:port before the path")
    return tuple(_node(url, node, default_port) for node in hosts.split(","))


def _node(url: str, node: str, default_port: int) -> tuple[str, int]:
    if node.startswith("["):  # [IPv6]:port
        host, bracket, rest = node[1:].partition("]")
        port_text = rest.removeprefix(":") if bracket else ""
        if not bracket or (rest and not rest.startswith(":")):
            raise RedisUrlError(f"redis_url {_shown(url)}: {node!r} is not [address]:port")
    else:
        host, _, port_text = node.partition(":")
    if not host:
        raise RedisUrlError(f"redis_url {_shown(url)}: an empty host in {node!r}")
    return host, _port(url, port_text, default_port)


def _port(url: str, text: str, default: int) -> int:
    if not text:
        return default
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise RedisUrlError(f"redis_url {_shown(url)}: port {text!r} is not a number 1-65535")
    return int(text)


def _db(url: str, text: str) -> int:
    if not text.isdigit() or int(text) >= MAX_DB:
        raise RedisUrlError(f"redis_url {_shown(url)}: db {text!r} is not a number 0-{MAX_DB - 1}")
    return int(text)


def _check_single(url: str, scheme: str) -> None:
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"db"})
    if unknown:
        raise RedisUrlError(
            f"redis_url {_shown(url)}: unknown query parameter(s) {', '.join(unknown)}"
            " (only db is read)"
        )
    for value in query.get("db", []):
        _db(url, value)
    if scheme == "unix":
        if not parts.path:
            raise RedisUrlError(f"redis_url {_shown(url)}: unix:// needs the socket's path")
        return
    if "," in parts.netloc:
        raise RedisUrlError(
            f"redis_url {_shown(url)}: several hosts: use redis+cluster:// or redis+sentinel://"
        )
    if not parts.hostname:
        raise RedisUrlError(f"redis_url {_shown(url)}: no host")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 0 < port < 65536:
        port_text = parts.netloc.rpartition(":")[2]
        raise RedisUrlError(f"redis_url {_shown(url)}: port {port_text!r} is not a number 1-65535")
    path = parts.path.strip("/")
    if path:
        _db(url, path)


def _shown(url: str) -> str:
    """``url`` for a message: its password replaced by ``***``."""
    scheme, separator, rest = url.partition("://")
    authority, slash, tail = rest.partition("/")
    userinfo, at, hosts = authority.rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    return repr(f"{scheme}{separator}{userinfo}{at}{hosts}{slash}{tail}")
