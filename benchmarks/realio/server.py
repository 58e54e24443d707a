"""Our server of the benchmark: the three tools of :mod:`.shop` on mcp_actors, over Streamable HTTP.

Configured as the reference servers are: stateless, JSON replies (no SSE framing),
``--workers`` processes sharing the port (one worker: served in this process). Each
worker opens its own Redis client and API client when it starts (:func:`serve_worker`,
the serve routine handed to :func:`~mcp_actors.server.workers.run_workers`), binds them
to the tools through a :class:`ShopSlot`, and closes them when it stops: clients with
connections cannot be shared across ``fork``.

Pools, per worker: ``--redis-connections`` to Redis (a command beyond waits for one,
``--io-timeout`` at most) and ``--api-connections`` to the API (the same). Sessions and
requests are bounded by :class:`~mcp_actors.transports.http.config.HttpConfig`'s
defaults.

Run: ``python -m benchmarks.realio.server --port 8090 --workers 2 --redis-url
redis://127.0.0.1:6379/0 --api-url http://127.0.0.1:8100``.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import attrs
import trio

from mcp_actors import Server, types
from mcp_actors.runtime.gc_policy import apply_serving_gc_policy
from mcp_actors.server.serve import run_until_interrupted
from mcp_actors.server.serve_http import serve_http
from mcp_actors.server.workers import WorkerPolicy, run_workers
from mcp_actors.transports.http.config import HttpConfig

from .api_client import open_api
from .resp_client import open_resp
from .shop import DEFAULT_ITEMS, Item, Shop, load_functions


@attrs.define(eq=False)
class ShopSlot:
    """Where a worker's :class:`Shop` is, once :func:`serve_worker` has opened it."""

    _shop: Shop | None = None

    @property
    def shop(self) -> Shop:
        if self._shop is None:
            raise RuntimeError("the shop is not open: serve through serve_worker")
        return self._shop

    def bind(self, shop: Shop | None) -> None:
        self._shop = shop


def build_server(slot: ShopSlot) -> Server:
    """The benchmark's MCP server: its tools call ``slot``'s shop."""
    server = Server("BenchmarkMcpActorsServer")

    def text(json: bytes) -> types.TextContent:
        # Returned as content, not a str: a str result would also be sent a second
        # time as structuredContent {"result": ...}.
        return types.TextContent(text=json.decode())

    @server.tool
    async def search_products(
        category: str = "Electronics",
        min_price: float = 50.0,
        max_price: float = 500.0,
        limit: int = 10,
    ) -> types.TextContent:
        """Search products by category and price range, merged with popularity data."""
        return text(await slot.shop.search_products(category, min_price, max_price, limit))

    @server.tool
    async def get_user_cart(user_id: str = "user-00042") -> types.TextContent:
        """Get user cart details with recent order history."""
        return text(await slot.shop.get_user_cart(user_id))

    @server.tool
    async def checkout(
        user_id: str = "user-00042", items: list[Item] | None = None
    ) -> types.TextContent:
        """Process checkout: calculate total, update rate limit, record history."""
        return text(await slot.shop.checkout(user_id, DEFAULT_ITEMS if items is None else items))

    return server


@attrs.frozen
class Backends:
    """Where the tools' I/O goes, and how much of it a worker may hold."""

    redis_url: str
    api_url: str
    redis_connections: int = attrs.field(default=32, validator=attrs.validators.ge(1))
    api_connections: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))


async def serve_worker(
    server: Server,
    *,
    slot: ShopSlot,
    backends: Backends,
    task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """One worker: open the Redis and API clients, then :func:`serve_http` until it stops."""
    api, redis = urlsplit(backends.api_url), urlsplit(backends.redis_url)
    if api.hostname is None or api.port is None:
        raise ValueError(f"--api-url needs a host and a port: {backends.api_url!r}")
    if redis.scheme != "redis" or redis.hostname is None or redis.username or redis.password:
        raise ValueError(
            f"--redis-url: redis://host[:port][/0] (no TLS, no password): {backends.redis_url!r}"
        )
    if redis.path not in ("", "/", "/0"):
        raise ValueError(f"--redis-url: the tools' keys are in database 0: {backends.redis_url!r}")
    async with (
        open_resp(
            redis.hostname,
            redis.port or 6379,
            max_connections=backends.redis_connections,
            timeout=backends.timeout,
        ) as redis_client,
        open_api(
            api.hostname,
            api.port,
            max_connections=backends.api_connections,
            timeout=backends.timeout,
        ) as api_client,
    ):
        await load_functions(redis_client)
        slot.bind(Shop(redis_client, api_client))
        try:
            await serve_http(server, task_status=task_status, **options)
        finally:
            slot.bind(None)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--api-url", default="http://127.0.0.1:8100")
    parser.add_argument("--redis-connections", type=int, default=32)
    parser.add_argument("--api-connections", type=int, default=64)
    parser.add_argument("--io-timeout", type=float, default=10.0)
    options = parser.parse_args(argv)
    backends = Backends(
        options.redis_url,
        options.api_url,
        options.redis_connections,
        options.api_connections,
        options.io_timeout,
    )
    slot = ShopSlot()
    config = HttpConfig(stateless=True, json_response=True)
    server = build_server(slot)
    serve = partial(serve_worker, slot=slot, backends=backends)
    if options.workers == 1:  # in this process, as run_http serves one worker
        run_one(server, serve, port=options.port, config=config)
        return
    run_workers(
        server,
        WorkerPolicy(options.workers),
        serve,
        host="127.0.0.1",
        port=options.port,
        announce="http",
        config=config,
    )


def run_one(server: Server, serve: Any, *, port: int, config: HttpConfig) -> None:
    """One worker in this process until Ctrl-C or SIGTERM (no supervising process)."""

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            handle = await nursery.start(partial(serve, server, port=port, config=config))
            apply_serving_gc_policy()
            print(f"mcp-actors: serving {server.name} at {handle.url}", file=sys.stderr, flush=True)

    run_until_interrupted(main)


if __name__ == "__main__":
    main()
