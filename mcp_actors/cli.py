"""The ``mcp-actors`` command: serve a server, or poke one from the shell.

- ``mcp-actors run TARGET`` serves a Server over stdio, or with
  ``--transport http|sse|ws --host 127.0.0.1 --port N [--path /mcp]`` over the network
  (``http`` serves Streamable HTTP at ``--path`` and legacy SSE at ``/sse``; ``sse``
  is the same server, announced by its legacy URL); ``mcp-actors run gateway.toml``
  serves a gateway mounting the upstreams the file names (:mod:`.gateway.config`);
- ``mcp-actors call TARGET TOOL [NAME=VALUE...|'{"json": "args"}']`` prints a tool's
  result's content (``--raw``: the result as JSON; see :mod:`.cli_call`);
- ``mcp-actors inspect TARGET`` prints a server's info, capabilities and offerings;
- ``mcp-actors config TARGET --client claude|claude-code|cursor|vscode|windsurf|gemini``
  prints the entry to paste into a client's configuration (:mod:`.cli_config`), and
  ``mcp-actors install TARGET --client ...`` writes it there (:mod:`.cli_install`);
- ``mcp-actors dev TARGET`` opens the server in the MCP Inspector (:mod:`.cli_dev`);
- ``mcp-actors status [REDIS_URL]`` shows the workers of a deployment sharing state
  through Redis, and Redis's health (:mod:`.cli_status`).

A server TARGET is ``MODULE[:ATTR]``, ``path/to/file.py[:ATTR]`` (without ``:ATTR``:
its ``server``, ``mcp`` or ``app``), an installed plugin's name or a ``GATEWAY.toml``
(every command loads it the same way: :mod:`.cli_targets`); ``call`` and
``inspect`` also take ``stdio:COMMAND ARGS...`` (a server to launch) or a URL
(``http://HOST:PORT/mcp``, ``http://HOST:PORT/sse``, ``ws://...``), and
``--era auto|modern|legacy`` or ``--protocol-version VERSION`` (default: probe with
``server/discover``, fall back to ``initialize``). ``--log-level``
sets what is logged to stderr (default warning: a tool's exception is logged with
its traceback). A failure is one line on stderr and an exit code: see
:mod:`.cli_errors` (0 success, 1 tool error, 2 bad option, target or server failed,
3 missing dependency, 4 cannot listen, 130 interrupted); a bad option too
(``--port`` takes 0-65535, 0 picking any free port).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import msgspec
import trio

from . import plugins
from ._version import __version__
from .bench.command import add_parser as add_bench_parser
from .cli_auth import add_auth_options, not_authorized, oauth_for, refused
from .cli_auth_dev import add_parser as add_auth_dev_parser
from .cli_call import parse_words, shown, typed
from .cli_config import add_parser as add_config_parser
from .cli_dev import add_parser as add_dev_parser
from .cli_errors import EXIT_CODES, EXIT_FAILURE, EXIT_TOOL_ERROR, CliFailure, explain
from .cli_install import add_parser as add_install_parser
from .cli_run import add_parser as add_run_parser
from .cli_status import add_parser as add_status_parser
from .cli_targets import client_target
from .client.client import Client, open_client
from .client.header_options import add_header_options, headers_of
from .client.targets import UrlTarget
from .protocol import types as t
from .protocol.errors import McpError
from .protocol.versions import MODERN, SUPPORTED
from .runtime.outbound import ConnectionClosed, RequestTimeout
from .transports.abc import TransportClosed


class _Parser(argparse.ArgumentParser):
    """argparse, failing as every other failure does: one line, exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_FAILURE, f"mcp-actors: {message} (see {self.prog} --help)\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcp-actors`` console script."""
    parser = _parser()
    options = parser.parse_args(argv)
    options.argv = list(sys.argv[1:] if argv is None else argv)  # as given (run --reload)
    _configure_logging(options.log_level)
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # MODULE:ATTR resolves from here, as with `python -m`
    try:
        result: int = options.action(options)
        return result
    except BaseException as error:  # one line and a documented exit code: cli_errors
        failure = explain(error, options)
        if failure is None:
            raise
        code, message = failure
        print(f"mcp-actors: {message}", file=sys.stderr)
        return code


def _configure_logging(level: str) -> None:
    """Log records (a tool's exception with its traceback, say) go to stderr from ``level`` up."""
    logging.basicConfig(
        level=level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _add_common_options(parser: argparse.ArgumentParser, commands: Any) -> None:
    """``--log-level`` before or after the command (``mcp-actors run --log-level info X``)."""
    parser.epilog = EXIT_CODES
    choices = ["debug", "info", "warning", "error", "critical"]
    parser.add_argument("--log-level", choices=choices, default="warning", help="default warning")
    for command in commands.choices.values():
        command.add_argument(
            "--log-level", choices=choices, default=argparse.SUPPRESS, help="default warning"
        )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mcp-actors", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"mcp-actors {__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    add_run_parser(commands)  # `mcp-actors run`: mcp_actors/cli_run.py

    call = commands.add_parser("call", help="call a tool and print its result")
    call.add_argument("target", metavar="TARGET")
    call.add_argument("tool")
    call.add_argument(
        "arguments",
        nargs="*",
        metavar="NAME=VALUE",
        help="tool arguments, typed by the tool's schema (a=1 b=two), or one JSON object",
    )
    call.add_argument("--timeout", type=float, default=60.0, help="seconds (default 60)")
    call.add_argument("--raw", action="store_true", help="print the result as JSON, as sent")
    _add_era_options(call)
    add_auth_options(call)
    add_header_options(call)
    call.set_defaults(action=_call)

    inspect = commands.add_parser(
        "inspect", help="print a server's info, capabilities, tools, resources and prompts"
    )
    inspect.add_argument("target", metavar="TARGET")
    _add_era_options(inspect)
    add_auth_options(inspect)
    add_header_options(inspect)
    inspect.set_defaults(action=_inspect)

    listing = commands.add_parser("list", help="list installed plugins")
    listing.add_argument("--config", type=Path, default=None, help="TOML file with plugin settings")
    listing.set_defaults(action=_list)

    add_bench_parser(commands)  # `mcp-actors bench`: mcp_actors/bench/command.py
    add_config_parser(commands)  # `mcp-actors config`: mcp_actors/cli_config.py
    add_install_parser(commands)  # `mcp-actors install`: mcp_actors/cli_install.py
    add_dev_parser(commands)  # `mcp-actors dev`: mcp_actors/cli_dev.py
    add_status_parser(commands)  # `mcp-actors status`: mcp_actors/cli_status.py
    add_auth_dev_parser(commands)  # `mcp-actors auth keygen|token`: mcp_actors/cli_auth_dev.py
    _add_common_options(parser, commands)
    return parser


def _add_era_options(command: argparse.ArgumentParser) -> None:
    era = command.add_mutually_exclusive_group()
    era.add_argument(
        "--era",
        choices=["auto", "modern", "legacy"],
        default="auto",
        help="auto (default): probe with server/discover, fall back to initialize;"
        " modern: 2026-07-28 only; legacy: initialize only",
    )
    era.add_argument(
        "--protocol-version",
        choices=[*MODERN, *SUPPORTED],
        default=None,
        metavar="VERSION",
        help=f"speak exactly this version (and its era): {', '.join((*MODERN, *SUPPORTED))}",
    )


def _list(options: argparse.Namespace) -> int:
    """One line per plugin: name, distribution and version, and what its server offers
    (or the settings it waits for, or why it cannot be built)."""
    for name, plugin in sorted(plugins.installed().items()):
        origin = f"{plugin.distribution} {plugin.version}"
        try:
            server = plugin.build(config_file=options.config)
        except plugins.PluginNotConfigured as waiting:
            print(f"{name}  ({origin})  needs settings: {waiting}")
            continue
        except plugins.PluginError as error:
            print(f"{name}  ({origin})  BROKEN: {error}")
            continue
        print(f"{name}  ({origin})  {plugins.offerings(server)}")
    return 0


def _call(options: argparse.Namespace) -> int:
    given = parse_words(options.arguments)  # a bad one: ArgumentError, exit code 2

    async def show_progress(progress: float, total: float | None, message: str | None) -> None:
        of_total = f"/{total:g}" if total is not None else ""
        print(f"progress {progress:g}{of_total} {message or ''}".rstrip(), file=sys.stderr)

    async def call(client: Client) -> int:
        arguments = (  # NAME=VALUE words: typed by the tool's schema
            typed(given, await _tool(client, options.tool)) if isinstance(given, list) else given
        )
        result = await client.call_tool(
            options.tool, arguments, timeout=options.timeout, on_progress=show_progress
        )
        if options.raw:
            _print_json(result)
        else:
            print(shown(result))
        return EXIT_TOOL_ERROR if result.is_error is True else 0

    return _with_client(options, call)


async def _tool(client: Client, name: str) -> t.Tool:
    """The tool called ``name``, for its input schema (a failure naming those there are)."""
    tools = await client.list_tools()
    for tool in tools:
        if tool.name == name:
            return tool
    known = ", ".join(sorted(tool.name for tool in tools)) or "none"
    raise CliFailure(EXIT_FAILURE, f"the server has no tool {name!r} (it has: {known})")


def _inspect(options: argparse.Namespace) -> int:
    async def inspect(client: Client) -> int:
        report: dict[str, Any] = {
            "era": client.era,
            "protocolVersion": client.protocol_version,
            "serverInfo": client.server_info,
            "capabilities": client.server_capabilities,
            "instructions": client.instructions,
        }
        capabilities = client.server_capabilities
        if capabilities.tools is not msgspec.UNSET:
            report["tools"] = await client.list_tools()
        if capabilities.resources is not msgspec.UNSET:
            report["resources"] = await client.list_resources()
            report["resourceTemplates"] = await client.list_resource_templates()
        if capabilities.prompts is not msgspec.UNSET:
            report["prompts"] = await client.list_prompts()
        _print_json(report)
        return 0

    return _with_client(options, inspect)


def _with_client(options: argparse.Namespace, work: Any) -> int:
    target_spec = options.target
    target = client_target(target_spec)
    headers = headers_of(options, url=isinstance(target, UrlTarget))
    oauth = None if headers and "authorization" in headers else oauth_for(options, target)

    async def session() -> int:
        async with open_client(
            target,
            era=options.era,
            protocol_version=options.protocol_version,
            auth=oauth,
            headers=headers,
        ) as client:
            result: int = await work(client)
            return result

    try:
        return trio.run(session)
    except (ConnectionClosed, McpError, RequestTimeout, TransportClosed, OSError) as error:
        failure = not_authorized(oauth) or refused(error)  # if it failed for want of a token
        if failure is not None:
            raise failure from None
        print(f"mcp-actors: {_failure_line(error, target_spec)}", file=sys.stderr)
    return EXIT_FAILURE


def _failure_line(error: Exception, target_spec: str) -> str:
    if isinstance(error, ConnectionClosed):
        return f"cannot talk to {target_spec}: {error.message}"
    if isinstance(error, (McpError, RequestTimeout)):
        return str(error)
    return f"cannot talk to {target_spec}: {error}"


def _print_json(value: Any) -> None:
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(value)).decode() + "\n")


if __name__ == "__main__":
    sys.exit(main())
