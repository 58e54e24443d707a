"""A gateway described in TOML: upstreams to mount, and the middleware in front of them.

``mcp-actors run gateway.toml`` serves it (over any transport ``run`` offers);
:func:`load_gateway` builds the :class:`~mcp_actors.Server` from Python. Example::

    name = "gateway"                 # the server's name (default "gateway")
    timing = true                    # log one line per request (Timing middleware)
    otel = false                     # spans + _meta trace propagation (needs extra "otel")
    allowed_tools = ["weather_forecast", "files_read"]   # expose only these (optional)

    [tool_search]                    # list a search tool instead of every tool (optional)
    max_results = 5                  # the ToolSearch settings, each optional

    [rate_limit]                     # per caller (optional)
    rate = 20.0                      # requests per second
    burst = 40

    [upstreams.weather]              # mounted with prefix "weather" (the table's name)
    command = "python"
    args = ["-m", "weather_server"]
    env = { API_KEY = "..." }

    [upstreams.files]
    url = "http://127.0.0.1:8001/mcp"
    headers = { Authorization = "Bearer ..." }
    prefix = "fs"                    # another prefix; "" for none
    era = "legacy"                   # "auto" (default), "modern" or "legacy"
    connect_timeout = 10.0

    [upstreams.local]
    server = "my_package.server:server"   # an in-process Server (MODULE:ATTR or FILE.py)

``[tool_search]`` puts a :class:`~mcp_actors.server.tool_search.ToolSearch` in front of
everything (its keys are its settings): ``tools/list`` answers ``search_tools`` and
``call_tool``, which search and call the upstreams' tools that the allow-list lets
through (it is given the two names itself).

Each upstream names exactly one of ``command``, ``url`` or ``server``. Settings are
parsed strictly: an unknown key, a wrong type, a value out of range, a missing or
doubled target is a :class:`GatewayConfigError` listing every problem, before
anything starts. The top level, ``[rate_limit]`` and each ``[upstreams.NAME]`` are
checked one by one, so a problem in one does not hide those of the others.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

import attrs

from ..client.targets import StdioTarget, Target, TargetError, UrlTarget, load_server
from ..config import describe_value, structure_strictly
from ..middleware import RateLimit, Timing, ToolAllowList
from ..runtime.middleware import Middleware
from ..server.app import Server
from ..server.tool_search import ToolSearch
from .upstream import Upstream


class GatewayConfigError(TargetError):
    """A gateway file that cannot be used; ``problems`` has one line per bad setting."""

    def __init__(self, source: str, problems: list[str]) -> None:
        super().__init__(f"bad gateway config {source}: " + "; ".join(problems))
        self.problems = problems


@attrs.frozen
class UpstreamConfig:
    """One ``[upstreams.NAME]`` table."""

    command: str | None = None
    args: list[str] = attrs.field(factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    server: str | None = None
    #: Default: the table's name; "" mounts without a prefix.
    prefix: str | None = None
    era: Literal["auto", "modern", "legacy"] = "auto"
    connect_timeout: float = 30.0

    def target(self, base: Path) -> Target:
        """Where to connect; a relative ``cwd`` or server file is relative to ``base``."""
        if self.command is not None:
            cwd = str(base / self.cwd) if self.cwd is not None else None
            return StdioTarget(self.command, tuple(self.args), env=self.env, cwd=cwd)
        if self.url is not None:
            target = UrlTarget.from_url(self.url)
            return attrs.evolve(target, headers=self.headers) if self.headers else target
        assert self.server is not None
        spec = self.server
        if spec.partition(":")[0].endswith(".py"):
            spec = str(base / spec)
        return load_server(spec)

    def problems(self) -> list[str]:
        given = [key for key in ("command", "url", "server") if getattr(self, key) is not None]
        found = []
        if len(given) != 1:
            found.append(
                "give exactly one of command, url or server"
                + (f" (got {', '.join(given)})" if given else "")
            )
        if self.args and self.command is None:
            found.append("args applies to command only")
        if self.headers and self.url is None:
            found.append("headers applies to url only")
        if not _positive_finite(self.connect_timeout):
            found.append("connect_timeout must be positive and finite")
        return found


@attrs.frozen
class RateLimitConfig:
    """The ``[rate_limit]`` table: :class:`~mcp_actors.middleware.RateLimit` per caller."""

    #: Requests per second.
    rate: float
    #: Requests at once beyond the rate.
    burst: int = 10

    def problems(self) -> list[str]:
        found = []
        if not _positive_finite(self.rate):
            found.append("rate must be positive and finite")
        if self.burst < 1:
            found.append("burst must be at least 1")
        return found


def _positive_finite(number: float) -> bool:
    return math.isfinite(number) and number > 0


@attrs.frozen
class GatewayConfig:
    """The whole file."""

    upstreams: dict[str, UpstreamConfig] = attrs.field(factory=dict)
    name: str = "gateway"
    version: str = "1.0"
    instructions: str | None = None
    timing: bool = False
    otel: bool = False
    allowed_tools: list[str] | None = None
    rate_limit: RateLimitConfig | None = None
    tool_search: ToolSearch | None = None

    def middleware(self) -> list[Middleware]:
        """The middleware the file asks for, outermost first: tracing, tool search,
        timing, rate limit, allow-list."""
        layers = self.tracing()
        allowed = self.allowed_tools
        if self.tool_search is not None:
            layers.append(self.tool_search)
            allowed = None if allowed is None else [*allowed, *self.tool_search.names]
        if self.timing:
            layers.append(Timing())
        if self.rate_limit is not None:
            layers.append(RateLimit(self.rate_limit.rate, self.rate_limit.burst))
        if allowed is not None:
            layers.append(ToolAllowList(allowed))
        return layers

    def tracing(self) -> list[Middleware]:
        """Tracing, if asked for: on the gateway's requests and on its upstream calls."""
        if not self.otel:
            return []
        from ..otel import OpenTelemetry  # needs opentelemetry-api (extra "otel")

        return [OpenTelemetry()]


def parse_gateway(text: str, source: str = "<gateway>") -> GatewayConfig:
    """The configuration in TOML ``text``; :class:`GatewayConfigError` lists what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise GatewayConfigError(source, [f"not valid TOML: {error}"]) from None
    rate_table = data.pop("rate_limit", None)
    search_table = data.pop("tool_search", None)
    upstream_tables = data.pop("upstreams", None)
    config, problems = structure_strictly(data, GatewayConfig)
    rate_limit = None
    if rate_table is not None:
        rate_limit, found = _section(rate_table, RateLimitConfig, "rate_limit")
        problems += found
    tool_search = None
    if search_table is not None:
        tool_search, found = _section(search_table, ToolSearch, "tool_search")
        problems += found
    upstreams: dict[str, UpstreamConfig] = {}
    if upstream_tables is None or upstream_tables == {}:
        problems.append("upstreams: at least one [upstreams.NAME] table is needed")
    elif not isinstance(upstream_tables, dict):
        problems.append(f"upstreams: expected a table, got {describe_value(upstream_tables)}")
    else:
        for name, table in upstream_tables.items():
            upstream, found = _section(table, UpstreamConfig, f"upstreams.{name}")
            problems += found
            if upstream is not None:
                upstreams[name] = upstream
    if problems or config is None:
        raise GatewayConfigError(source, problems)
    return attrs.evolve(config, upstreams=upstreams, rate_limit=rate_limit, tool_search=tool_search)


_Section = TypeVar("_Section", UpstreamConfig, RateLimitConfig, ToolSearch)


@runtime_checkable
class _Checked(Protocol):
    """A section whose settings are checked together once parsed."""

    def problems(self) -> list[str]: ...


def _section(table: Any, cls: type[_Section], where: str) -> tuple[_Section | None, list[str]]:
    """One table of the file as ``cls``, and its problems, each prefixed with ``where``."""
    if not isinstance(table, dict):
        return None, [f"{where}: expected a table, got {describe_value(table)}"]
    section, found = structure_strictly(table, cls)
    problems = [
        f"{where}: {problem.removeprefix('top level: ')}"
        if problem.startswith("top level: ")
        else f"{where}.{problem}"
        for problem in found
    ]
    if isinstance(section, _Checked):
        problems += [f"{where}: {problem}" for problem in section.problems()]
    return section, problems


def load_gateway(path: Path) -> Server:
    """The gateway Server that the TOML file at ``path`` describes (see the module docstring)."""
    try:
        text = path.read_text()
    except OSError as error:
        raise GatewayConfigError(str(path), [error.strerror or str(error)]) from None
    config = parse_gateway(text, str(path))
    server = Server(
        config.name,
        config.version,
        instructions=config.instructions,
        middleware=config.middleware(),
    )
    base = path.parent
    for name, upstream in config.upstreams.items():
        prefix = name if upstream.prefix is None else (upstream.prefix or None)
        target = upstream.target(base)
        server.mount(
            Upstream(
                target,
                name=name,
                era=upstream.era,
                connect_timeout=upstream.connect_timeout,
                middleware=config.tracing(),
            ),
            prefix=prefix,
        )
    return server
