"""How workers share state: the ``[shared]`` settings (TOML table, or ``MCP_ACTORS_SHARED_*``).

Parsed strictly, as plugin settings are (:mod:`mcp_actors.config`)::

    [shared]
    redis_url = "redis://127.0.0.1:6379/0"   # or redis+cluster://..., redis+sentinel://...
    key_prefix = "mcp-actors"          # every key and channel starts with "<prefix>:"
    state_keys = ["<64 hex digits>"]   # requestState keys: the first seals, all open
    heartbeat_seconds = 1.0            # a worker refreshes its lease (and looks for orphans)
    task_ttl_seconds = 86400.0         # for tasks kept "until the process ends" in memory
    bus_outbox = 1024                  # changes waiting to be sent to Redis (coalesced)
    bus_retention = 10000              # changes the bus stream keeps (a worker behind
                                       # by more is told to re-list)
    share_events = false               # legacy SSE events in Redis (resumable on any worker)
    event_stream_max = 1000            # SSE events kept per stream (oldest trimmed)
    event_ttl_seconds = 3600.0         # a stream's events expire after this idle time
    redis_connections = 16             # Redis connections per worker (commands beyond wait)
    redis_timeout = 5.0                # seconds per command
    task_lease_seconds = 3.0           # a worker silent this long is dead: its tasks are taken over
    task_max_attempts = 3              # runs a re-run-safe task gets, first included
    share_sessions = false             # legacy sessions served by any worker (no affinity)
    session_ttl_seconds = 3600.0       # a shared session's record expires after this idle time
    max_shared_sessions = 100000       # shared session records per deployment (then 503)

or ``MCP_ACTORS_SHARED_REDIS_URL=redis://...`` and so on; ``mcp-actors run
--redis-url URL`` overrides ``redis_url`` (its forms — one server, a Cluster, Sentinel —
are in :mod:`.redis_urls`; checked here, when the settings are read). Without
``redis_url`` nothing is shared (one worker keeps everything in memory) — except
``state_keys``, which workers need even without Redis for an MRTR retry to land on
any of them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from ..config import SettingsError, load_settings
from ..protocol.request_state import KEY_BYTES, StateKeys
from .redis_urls import RedisUrlError, parse_redis_url


class SharedStateUnavailable(Exception):
    """The shared store (Redis) did not answer when the worker started."""


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not value > 0:
        raise ValueError(f"{attribute.name} must be positive, not {value!r}")


def _state_key(text: str) -> bytes:
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise ValueError(f"state_keys: each key is {KEY_BYTES * 2} hex digits ({KEY_BYTES} bytes)")
    return key


def _check_state_keys(
    instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for text in value:
        _state_key(text)


def _outlasts_heartbeat(
    instance: SharedSettings, attribute: attrs.Attribute[float], value: float
) -> None:
    if value <= instance.heartbeat_seconds:
        raise ValueError(
            f"{attribute.name} ({value!r}) must be longer than heartbeat_seconds"
            f" ({instance.heartbeat_seconds!r}): a lease is renewed every heartbeat"
        )


def _check_redis_url(
    instance: object, attribute: attrs.Attribute[str | None], value: str | None
) -> None:
    if value is not None:
        parse_redis_url(value)


@attrs.frozen
class SharedSettings:
    """What workers share, and how (see the module docstring)."""

    redis_url: str | None = attrs.field(default=None, validator=_check_redis_url)
    key_prefix: str = "mcp-actors"
    state_keys: tuple[str, ...] = attrs.field(default=(), validator=_check_state_keys)
    heartbeat_seconds: float = attrs.field(default=1.0, validator=_positive)
    task_ttl_seconds: float = attrs.field(default=86400.0, validator=_positive)
    bus_outbox: int = attrs.field(default=1024, validator=attrs.validators.ge(1))
    bus_retention: int = attrs.field(default=10_000, validator=attrs.validators.ge(1))
    share_events: bool = False
    event_stream_max: int = attrs.field(default=1000, validator=attrs.validators.ge(1))
    event_ttl_seconds: float = attrs.field(default=3600.0, validator=_positive)
    redis_connections: int = attrs.field(default=16, validator=attrs.validators.ge(2))
    redis_timeout: float = attrs.field(default=5.0, validator=_positive)
    task_lease_seconds: float = attrs.field(default=3.0, validator=[_positive, _outlasts_heartbeat])
    task_max_attempts: int = attrs.field(
        default=3, validator=[attrs.validators.instance_of(int), attrs.validators.ge(1)]
    )
    share_sessions: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    session_ttl_seconds: float = attrs.field(default=3600.0, validator=_positive)
    max_shared_sessions: int = attrs.field(default=100_000, validator=attrs.validators.ge(1))

    def key(self, *parts: str) -> str:
        """A Redis key (or channel) of this deployment: ``<prefix>:<part>:<part>...``."""
        return ":".join((self.key_prefix, *parts))

    def with_redis_url(self, url: str) -> SharedSettings:
        """These settings with ``url`` as ``redis_url`` (``--redis-url``); raises
        :class:`~mcp_actors.config.SettingsError` for a URL of no known form."""
        try:
            return attrs.evolve(self, redis_url=url)
        except RedisUrlError as error:
            raise SettingsError("shared", [str(error)]) from None

    def request_state_keys(self) -> StateKeys | None:
        """The shared ``requestState`` keys (None: none configured)."""
        if not self.state_keys:
            return None
        return StateKeys(tuple(_state_key(text) for text in self.state_keys))


def load_shared_settings(
    config_file: Path | None = None, environ: Mapping[str, str] | None = None
) -> SharedSettings:
    """:class:`SharedSettings` from the ``[shared]`` table of ``config_file`` and the
    ``MCP_ACTORS_SHARED_*`` environment; raises :class:`~mcp_actors.config.SettingsError`."""
    return load_settings(
        SharedSettings,
        "shared",
        config_file=config_file,
        environ=os.environ if environ is None else environ,
        table="shared",
    )
