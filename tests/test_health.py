"""The health endpoint load balancers poll: ``GET /healthz``."""

from __future__ import annotations

import json
from functools import partial

import httpx
import trio

from mcp_actors import Server
from mcp_actors.server.serve_http import serve_http

from deployment import SCALE_OUT_SERVER, mcp_actors_run, redis_server


async def test_a_server_taking_work_says_ok() -> None:
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, Server("health"), port=0))
        async with httpx.AsyncClient() as http:
            response = await http.get(handle.base_url + "/healthz")
            refused = await http.post(handle.base_url + "/healthz")
        nursery.cancel_scope.cancel()
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "sessions": 0, "sessionRequests": 0}
    assert response.headers["cache-control"] == "no-store"
    assert refused.status_code == 405


async def test_a_worker_whose_redis_is_gone_says_503() -> None:
    async with redis_server() as redis_url:
        arguments = ("--transport", "http", "--port", "0", "--redis-url", redis_url)
        async with mcp_actors_run(SCALE_OUT_SERVER, *arguments) as worker:
            health = worker.url.replace("/mcp", "/healthz")
            async with httpx.AsyncClient(timeout=15) as http:
                assert (await http.get(health)).status_code == 200
                # redis-cli may see the connection close before an answer: no check.
                shutdown = ["redis-cli", "-u", redis_url, "shutdown", "nosave"]
                await trio.run_process(shutdown, check=False)
                response = await http.get(health)
    assert response.status_code == 503
    assert json.loads(response.content) == {
        "status": "unavailable",
        "reason": "the shared Redis does not answer",
    }
