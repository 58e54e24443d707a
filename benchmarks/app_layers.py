"""Where MCP's share of an HTTP request goes: bytecodes per call, by layer of the runtime.

``app_instructions.py`` counts the CPU instructions of the HTTP application per call;
this script says which layer runs them. It makes the same calls in-process (the scopes
the lean front end hands ``McpHttpApp``, the same server, the same warm-up) with
:func:`sys.settrace` counting every bytecode executed, each charged to the module of
the function running it, and each module to its layer:

- ``http``: the Streamable HTTP and SSE transport (``mcp_actors/transports/http``);
- ``session``: the session actor and its parts (``mcp_actors/runtime``);
- ``protocol``: the engine, decoding, the validation ladders (``mcp_actors/protocol``);
- ``server``: the dispatcher, the registry, the tool machinery (``mcp_actors/server``);
- ``tool``: the tool's own function (``benchmarks/servers/ours.py``);
- ``trio``: trio's scheduler and ``outcome``;
- ``other``: the standard library and the rest.

The ``__init__`` attrs generates is charged to its class's module. Bytecodes are not
instructions: a bytecode that calls C (msgspec decoding a body, say) counts one however
much the C does. What the counts give is the proportion of interpreted work per layer,
on any machine, in seconds. They are exact for a request served in one task; a workload
whose requests cross tasks (``seq``, and ``--plain`` ones) moves by a few bytecodes per
call from run to run, as trio runs the tasks ready at once in a random order.

Usage::

    python benchmarks/app_layers.py                    # every workload, 500 calls each
    python benchmarks/app_layers.py -w seq --calls 2000
    python benchmarks/app_layers.py --plain   # a plain async def tool, not declared inline
"""

from __future__ import annotations

import argparse
import collections
import sys
import types
from collections.abc import Callable
from typing import Any

from app_instructions import (  # benchmarks/: the same calls as the instruction counts
    PLAIN_HELP,
    WORKLOADS,
    Response,
    call_scopes,
    check_answered,
    never_disconnects,
    warmed_app,
)

LAYERS = ("http", "session", "protocol", "server", "tool", "trio", "other")
_PACKAGE_LAYERS = {
    "mcp_actors.transports.http": "http",
    "mcp_actors.runtime": "session",
    "mcp_actors.protocol": "protocol",
    "mcp_actors.server": "server",
}


def layer_of(filename: str) -> str:
    """The layer of the code in ``filename`` (a path, or attrs' ``<attrs generated ...>``)."""
    if filename.startswith("<attrs generated"):
        module = filename.rstrip(">").rsplit(" ", 1)[-1].rpartition(".")[0]
        for package, layer in _PACKAGE_LAYERS.items():
            if module.startswith(package + "."):
                return layer
        return "other"
    path = filename.replace("\\", "/")
    for package, layer in _PACKAGE_LAYERS.items():
        if "/" + package.replace(".", "/") + "/" in path:
            return layer
    if path.endswith("benchmarks/servers/ours.py"):
        return "tool"
    if "/trio/" in path or "/outcome/" in path:
        return "trio"
    return "other"


class BytecodeCounter:
    """Counts the bytecodes executed while on, by layer (see the module docstring)."""

    def __init__(self) -> None:
        self.by_layer: collections.Counter[str] = collections.Counter()
        self._layers: dict[str, str] = {}

    def _trace(self, frame: types.FrameType, event: str, arg: Any) -> Callable[..., Any]:
        frame.f_trace_opcodes = True
        if event == "opcode":
            filename = frame.f_code.co_filename
            layer = self._layers.get(filename)
            if layer is None:
                layer = self._layers[filename] = layer_of(filename)
            self.by_layer[layer] += 1
        return self._trace

    def start(self) -> None:
        sys.settrace(self._trace)

    def stop(self) -> None:
        sys.settrace(None)


async def count(workload: str, calls: int, plain: bool) -> collections.Counter[str]:
    """Bytecodes by layer for ``calls`` calls of ``workload``, after the warm-up."""
    counter = BytecodeCounter()
    async with warmed_app(workload, plain) as (app, headers):
        scopes = call_scopes(workload, headers, calls)
        response = Response()
        counter.start()
        for each in scopes:
            await app(each, never_disconnects, response)
        counter.stop()
        check_answered(workload, response)
    return counter.by_layer


def report(workload: str, by_layer: collections.Counter[str], calls: int) -> str:
    """One workload's table: bytecodes per call and share, per layer, then the total."""
    total = sum(by_layer.values())
    lines = [f"{workload}: {total / calls:,.0f} bytecodes per call ({calls} calls)"]
    for layer in LAYERS:
        share = by_layer[layer] / total if total else 0.0
        lines.append(f"  {layer:9s} {by_layer[layer] / calls:8,.0f}  {share:6.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-w", "--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--plain", action="store_true", help=PLAIN_HELP)
    options = parser.parse_args(argv)
    workloads = options.workloads.split(",")
    for workload in workloads:
        if workload not in WORKLOADS:
            parser.error(f"unknown workload {workload!r}")
    import trio

    for workload in workloads:
        by_layer = trio.run(count, workload, options.calls, options.plain)
        print(report(workload, by_layer, options.calls), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
