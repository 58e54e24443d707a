"""The bare limit of an HTTP front end: an ASGI app that answers every request with a fixed
``tools/call`` reply, no MCP at all.

Run: ``python benchmarks/servers/bare_http.py --http PORT [--front-end lean|hypercorn]``
(127.0.0.1). ``lean`` is mcp_actors' trio + httptools server
(:mod:`mcp_actors.transports.http.lean`),
``hypercorn`` is hypercorn's trio worker: what a request costs each before any MCP work.
"""

from __future__ import annotations

import sys
from typing import Any

import trio

from mcp_actors.transports.http.asgi import lifespan

REPLY = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(REPLY)).encode())]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    more = True
    while more:  # read the body, as a real endpoint must
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": REPLY, "more_body": False})


async def main(port: int, front_end: str) -> None:
    if front_end == "lean":
        from mcp_actors.transports.http.lean import LeanHttpServer

        await LeanHttpServer(app).serve("127.0.0.1", port)
    else:
        import hypercorn.config
        import hypercorn.trio

        config = hypercorn.config.Config()
        config.bind = [f"127.0.0.1:{port}"]
        config.accesslog = None
        await hypercorn.trio.serve(app, config)  # type: ignore[arg-type]


if __name__ == "__main__":
    port = int(sys.argv[sys.argv.index("--http") + 1])
    front_end = sys.argv[sys.argv.index("--front-end") + 1] if "--front-end" in sys.argv else "lean"
    trio.run(main, port, front_end)
