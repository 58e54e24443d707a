"""``mcp-actors run TARGET``: serve a Server over stdio, Streamable HTTP, SSE or WebSocket.

Over stdio from a terminal (stdin is a TTY: a person, not a client, started it), one
line on stderr says it is serving and how to try it (:func:`stdio_hint`); a client
launching it sees nothing on stderr.

The network options are one table, :data:`NETWORK_OPTIONS`: each row is the flag,
the transports it applies to, how its value is read and its help line, so the parser
and the check "does this flag apply to ``--transport X``" read the same rows. A
network option left out keeps :class:`~.transports.http.config.HttpConfig`'s (or the
WebSocket server's) default; a value is read strictly (a positive count, positive
seconds, or ``none`` for no limit) and a bad one is an argparse error naming it.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .auth.server import ResourceServer

from .cli_errors import EXIT_FAILURE, CliFailure
from .cli_targets import SERVED_METAVAR, load_served
from .server.app import Server
from .server.serve import MAX_PORT, PORT_RANGE, run_stdio

_HTTP = frozenset({"http", "sse"})
_NETWORK = frozenset({"http", "sse", "ws"})


def _port(text: str) -> int:
    """A TCP port number, 0 (any free port) to 65535 (nothing else)."""
    if text.isdecimal() and int(text) <= MAX_PORT:
        return int(text)
    raise argparse.ArgumentTypeError(f"expected {PORT_RANGE}, got {text!r}")


def _count(text: str) -> int:
    """A positive integer (nothing else)."""
    if text.strip().isdecimal() and int(text) > 0:
        return int(text)
    raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")


def _count_or_none(text: str) -> int | None:
    """A positive integer, or ``none`` for no limit (nothing else)."""
    if text.strip().lower() == "none":
        return None
    if text.strip().isdecimal() and int(text) > 0:
        return int(text)
    raise argparse.ArgumentTypeError(f"expected a positive integer or 'none', got {text!r}")


def positive_seconds(text: str) -> float:
    """Positive, finite seconds (nothing else)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if math.isfinite(seconds) and seconds > 0:
        return seconds
    raise argparse.ArgumentTypeError(f"expected positive seconds, got {text!r}")


def _seconds_or_none(text: str) -> float | None:
    """Positive, finite seconds, or ``none`` for no limit (nothing else)."""
    if text.strip().lower() == "none":
        return None
    try:
        return positive_seconds(text)
    except argparse.ArgumentTypeError:
        message = f"expected positive seconds or 'none', got {text!r}"
        raise argparse.ArgumentTypeError(message) from None


class NetworkOption(NamedTuple):
    """One network limit of ``run``: its flag, where it applies, and how it is read."""

    flag: str
    transports: frozenset[str]
    read: Callable[[str], Any]
    metavar: str
    help: str
    repeatable: bool = False


#: The network limits, by the ``HttpConfig`` (and WebSocket server) setting they give.
NETWORK_OPTIONS: dict[str, NetworkOption] = {
    "max_sessions": NetworkOption(
        "--max-sessions", _NETWORK, _count_or_none, "N|none",
        "http, ws: sessions at once (default 1000)",
    ),
    "max_sessions_per_client": NetworkOption(
        "--max-sessions-per-client", _NETWORK, _count_or_none, "N|none",
        "http, ws: sessions at once from one IP address (default 100)",
    ),
    "max_connections": NetworkOption(
        "--max-connections", _HTTP, _count_or_none, "N|none",
        "http: connections at once (default 1000; past it 503, health checks served)",
    ),
    "max_connections_per_client": NetworkOption(
        "--max-connections-per-client", _HTTP, _count_or_none, "N|none",
        "http: connections at once from one IP address (default 100)",
    ),
    "send_timeout": NetworkOption(
        "--send-timeout", _HTTP, _seconds_or_none, "SECONDS|none",
        "http: drop a client that reads no reply bytes this long (default 30)",
    ),
    "session_idle_timeout": NetworkOption(
        "--session-idle-timeout", _HTTP, _seconds_or_none, "SECONDS|none",
        "http: close a session unused this long (default 1800)",
    ),
    "allowed_hosts": NetworkOption(
        "--allowed-host", _HTTP, str, "NAME[:PORT]",
        "http: a Host value to accept (repeatable; NAME:* any port, '*' any Host);"
        " required when --host is not a loopback address",
        repeatable=True,
    ),
}  # fmt: skip


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``run`` sub-command to the CLI's sub-parsers."""
    run: argparse.ArgumentParser = commands.add_parser(
        "run", help="serve a module's, a file's or a plugin's server"
    )
    run.add_argument(
        "server",
        metavar=SERVED_METAVAR,
        help="a server, or a gateway file mounting upstreams (see mcp_actors.gateway.config)",
    )
    run.add_argument("--config", type=Path, default=None, help="TOML file with plugin settings")
    run.add_argument("--transport", choices=["stdio", "http", "sse", "ws"], default="stdio")
    run.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    run.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0: any free)")
    run.add_argument("--path", default="/mcp", help="Streamable HTTP endpoint (default /mcp)")
    run.add_argument("--stateless", action="store_true", help="http: no sessions")
    run.add_argument(
        "--session-prefix",
        default="",
        metavar="TAG.",
        help="http: start every session id with TAG. (which worker made it: see deploy/nginx.conf)",
    )
    run.add_argument(
        "--redis-url",
        default=None,
        metavar="URL",
        help="http: share tasks, listen notifications and stored events through this Redis:"
        " redis://, rediss://, unix://, redis+cluster://h:p,h:p, redis+sentinel://h:p,h:p/SERVICE"
        " (overrides [shared] redis_url; see docs/deployment.md)",
    )
    run.add_argument(
        "--workers",
        type=_count,
        default=1,
        metavar="N",
        help="http: serve from N processes sharing the port (default 1)",
    )
    run.add_argument(
        "--json-response", action="store_true", help="http: answer requests with JSON, not SSE"
    )
    run.add_argument(
        "--reload",
        action="store_true",
        help="http, sse, ws: restart when a .py or .toml file of the target's folder changes"
        " (development; needs mcp-actors[reload])",
    )
    run.add_argument(
        "--dev-auth",
        type=Path,
        default=None,
        metavar="DIR",
        help="http, ws: accept only tokens signed with DIR's development key (from"
        " mcp-actors auth keygen; loopback addresses only)",
    )
    limits = run.add_argument_group(
        "network limits",
        "When the session table is full, a new session replaces the least recently used idle"
        " one; if every session is busy it is refused (503 with Retry-After).",
    )
    for dest, option in NETWORK_OPTIONS.items():
        limits.add_argument(
            option.flag,
            dest=dest,
            type=option.read,
            action="append" if option.repeatable else "store",
            default=argparse.SUPPRESS,
            metavar=option.metavar,
            help=option.help,
        )
    run.set_defaults(action=run_command)
    return run


def _misplaced(options: argparse.Namespace) -> str | None:
    """The first option given that does not apply to the chosen transport, if any."""
    given = [(o.flag, o.transports) for name, o in NETWORK_OPTIONS.items() if name in options]
    if options.redis_url is not None:
        given.append(("--redis-url", _HTTP))
    if options.workers != 1:
        given.append(("--workers", _HTTP))
    if options.dev_auth is not None:
        given.append(("--dev-auth", _NETWORK))
    for flag, transports in given:
        if options.transport not in transports:
            return f"{flag} does not apply to --transport {options.transport}"
    return None


def run_command(options: argparse.Namespace) -> int:
    """Serve the target until interrupted; 2 (one line on stderr) for a misplaced option."""
    if (message := _misplaced(options)) is not None:
        print(f"mcp-actors: {message}", file=sys.stderr)
        return EXIT_FAILURE
    if options.reload:
        from .cli_reload import run_reloading

        return run_reloading(options.server, options.transport, options.argv)
    given = {name: getattr(options, name) for name in NETWORK_OPTIONS if name in options}
    auth = None if options.dev_auth is None else _dev_auth(options.dev_auth, options.host)
    server = load_served(options.server, config_file=options.config)
    if options.transport == "stdio":
        if sys.stdin.isatty():  # a person ran it: say it is serving, not hung
            print(stdio_hint(server.name, options.server), file=sys.stderr, flush=True)
        run_stdio(server)
    elif options.transport == "ws":
        from .server.serve_websocket import run_websocket  # imports trio_websocket

        run_websocket(
            server, host=options.host, port=options.port, announce=True, auth=auth, **given
        )
    else:
        return _serve_http(server, options, given, auth)
    return 0


def stdio_hint(name: str, target: str) -> str:
    """The line a stdio server started from a terminal prints on stderr, so that a person
    who ran it does not wait for output that only an MCP client would get."""
    return (
        f"mcp-actors: serving {name!r} over stdio: an MCP client talks to it on stdin/stdout"
        f" (Ctrl-D or Ctrl-C stops it); to try it, run mcp-actors dev {target}, or"
        f" --transport http"
    )


def _dev_auth(directory: Path, host: str) -> ResourceServer:
    """The resource server of ``--dev-auth DIR``, refused (exit code 2, before anything
    binds) on a non-loopback ``host`` or with no usable key in ``directory``."""
    from .auth.server.dev_key import DevelopmentOnly, DevKeyError, dev_resource_server

    try:
        return dev_resource_server(directory, host=host)
    except (DevKeyError, DevelopmentOnly) as error:
        raise CliFailure(EXIT_FAILURE, f"--dev-auth: {error}") from None


def _serve_http(
    server: Server,
    options: argparse.Namespace,
    given: dict[str, Any],
    auth: ResourceServer | None,
) -> int:
    """``--transport http|sse``: the endpoint's settings checked before anything binds."""
    from .server.serve_http import run_http  # imports hypercorn
    from .shared.settings import load_shared_settings
    from .transports.http.config import HttpConfig
    from .transports.http.security import AllowedHostsRequired, HostPolicy

    if "allowed_hosts" in given:
        given["allowed_hosts"] = tuple(given["allowed_hosts"])
    config = HttpConfig(
        path=options.path,
        stateless=options.stateless,
        json_response=options.json_response,
        session_id_prefix=options.session_prefix,
        **given,
    )
    try:  # serve_http would raise this from inside trio.run; say it plainly instead
        HostPolicy.for_bind(options.host, allowed_hosts=config.allowed_hosts)
    except AllowedHostsRequired as error:
        print(f"mcp-actors: {error}", file=sys.stderr)
        return EXIT_FAILURE
    shared = load_shared_settings(options.config)
    if options.redis_url is not None:
        shared = shared.with_redis_url(options.redis_url)
    run_http(
        server,
        shared=shared,
        host=options.host,
        port=options.port,
        config=config,
        announce="sse" if options.transport == "sse" else "http",
        workers=options.workers,
        auth=auth,
    )
    return 0
