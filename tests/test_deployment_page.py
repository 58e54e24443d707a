"""docs/deployment.md, run: every command block of the page as written, then used.

Each test takes the block of the page that names it (``<!-- tested-by: ... -->``),
replaces what only exists in a real deployment — the ports 8000/8080/9001/9002, the Redis
address, the Cluster and Sentinel hosts — with the test's own on loopback, and runs the
block with bash in a project folder holding ``my_server.py`` (the scale-out test server)
and the shipped ``deploy/`` files (their ports replaced alike), every ``mcp-actors run``
and ``nginx`` line in the background. Then it drives what started: a legacy session and
a 2026-07-28 call through the block's entry point, and what the shape promises (a
round-robin session's requests served by both workers; an affine one's by one).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio
from test_redis_topologies import cluster, sentinel

from mcp_actors import Client, open_client

from deployment import (
    DEPLOYMENT_PAGE,
    NGINX_CONF,
    SCALE_OUT_SERVER,
    accepting,
    free_port,
    need,
    redis_server,
)
from docs_blocks import blocks_of

#: The addresses the page writes, and what each test puts in their place.
PAGE_REDIS = "redis://127.0.0.1:6379/0"
PAGE_CLUSTER = "redis+cluster://10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000"
PAGE_SENTINEL = "redis+sentinel://10.0.0.5:26379/mymaster/0"
PAGE_PORTS = ("8000", "8080", "9001", "9002")


def block_for(test: str) -> str:
    """The text of the one bash block the page says ``test`` runs."""
    found = [
        block.text
        for block in blocks_of(DEPLOYMENT_PAGE)
        if block.directive == "tested-by"
        and block.argument.endswith(f"::{test}")
        and block.language == "bash"
        and "mcp-actors run" in block.text
    ]
    assert len(found) == 1, f"{test}: {len(found)} blocks"
    return found[0]


def status_block() -> str:
    found = [b.text for b in blocks_of(DEPLOYMENT_PAGE) if b.text.startswith("mcp-actors status")]
    assert len(found) == 1, found
    return found[0]


def localised(text: str, ports: dict[str, int], swaps: dict[str, str]) -> str:
    for page, ours in swaps.items():
        text = text.replace(page, ours)
    return re.sub(r"\b(8000|8080|9001|9002)\b", lambda m: str(ports[m.group(1)]), text)


def project(directory: Path, ports: dict[str, int]) -> None:
    """``my_server.py`` and the shipped ``deploy/`` files, with this test's ports."""
    shutil.copy(SCALE_OUT_SERVER, directory / "my_server.py")
    (directory / "deploy").mkdir()
    for shipped in NGINX_CONF.parent.glob("*.conf"):
        (directory / "deploy" / shipped.name).write_text(localised(shipped.read_text(), ports, {}))


def as_script(block: str) -> str:
    """The block for bash: each server line in the background, then wait for them."""
    lines = []
    for line in block.splitlines():
        starts = line.startswith(("mcp-actors run", "nginx "))
        lines.append(f"{line.split('   #')[0]} &" if starts else line)
    return "\n".join([*lines, "wait"])


@asynccontextmanager
async def ran(
    block: str, swaps: dict[str, str], entry: str, folder: Path
) -> AsyncIterator[dict[str, int]]:
    """Run ``block`` (localised) in ``folder`` made a project; yield the ports once
    ``entry`` (one of the page's ports) accepts. Everything it started is stopped after."""
    ports = {page: free_port() for page in PAGE_PORTS}
    project(folder, ports)
    bin_dirs = [os.path.dirname(sys.executable), os.path.dirname(need("nginx"))]
    environment = {
        **os.environ,
        "PATH": ":".join([*bin_dirs, os.environ["PATH"]]),
        "TMPDIR": str(folder),  # nginx -p "$(mktemp -d)": in here
    }
    script = as_script(localised(block, ports, swaps))
    process = await trio.lowlevel.open_process(
        ["bash", "-c", script], cwd=folder, env=environment, start_new_session=True
    )
    try:
        workers = [page for page in PAGE_PORTS if re.search(rf"--port {page}\b", block)]
        for page in {*workers, entry}:
            await accepting(ports[page], seconds=60)
        yield ports
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # bash, the workers, nginx
        with trio.move_on_after(20):
            await process.wait()
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


async def pids_of_one_legacy_session(url: str, calls: int = 6) -> set[int]:
    async with open_client(url, era="legacy") as client:
        return {await whoami(client) for _ in range(calls)}


async def whoami(client: Client) -> int:
    result = await client.call_tool("whoami")
    assert isinstance(result.structured_content, dict), result
    pid: int = result.structured_content["result"]
    return pid


async def a_modern_call(url: str) -> int:
    async with open_client(url, era="modern") as client:
        assert client.protocol_version == "2026-07-28"
        return await whoami(client)


async def test_one_worker(tmp_path: Path) -> None:
    async with ran(block_for("test_one_worker"), {}, "8000", tmp_path) as ports:
        url = f"http://127.0.0.1:{ports['8000']}/mcp"
        assert len(await pids_of_one_legacy_session(url)) == 1
        await a_modern_call(url)


async def test_n_workers_on_one_port(tmp_path: Path) -> None:
    async with redis_server() as redis:
        swaps = {PAGE_REDIS: redis}
        block = block_for("test_n_workers_on_one_port")
        async with ran(block, swaps, "8000", tmp_path) as ports:
            url = f"http://127.0.0.1:{ports['8000']}/mcp"
            assert await pids_of_one_legacy_session(url)
            await a_modern_call(url)
            command = localised(status_block(), ports, swaps)
            with trio.fail_after(60):  # each worker reports at its first heartbeat
                while "workers: 4 alive, 0 dead" not in (shown := await run_status(command)):
                    await trio.sleep(0.5)
            assert shown.startswith(f"Redis {redis}: answers in ")


async def run_status(command: str) -> str:
    path = f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"
    done = await trio.run_process(
        ["bash", "-c", command], capture_stdout=True, env={**os.environ, "PATH": path}
    )
    return done.stdout.decode()


async def test_n_machines_round_robin(tmp_path: Path) -> None:
    async with redis_server() as redis:
        block = block_for("test_n_machines_round_robin")
        async with ran(block, {PAGE_REDIS: redis}, "8080", tmp_path) as ports:
            url = f"http://127.0.0.1:{ports['8080']}/mcp"
            # round robin, no affinity: one session's requests are served by both workers
            assert len(await pids_of_one_legacy_session(url)) == 2
            await a_modern_call(url)


async def test_n_machines_with_affinity(tmp_path: Path) -> None:
    async with redis_server() as redis:
        block = block_for("test_n_machines_with_affinity")
        async with ran(block, {PAGE_REDIS: redis}, "8080", tmp_path) as ports:
            url = f"http://127.0.0.1:{ports['8080']}/mcp"
            assert len(await pids_of_one_legacy_session(url)) == 1  # its worker serves it
            await a_modern_call(url)


async def test_redis_cluster_and_sentinel(tmp_path: Path) -> None:
    for part in ("c", "s", "p"):
        (tmp_path / part).mkdir()
    async with cluster(tmp_path / "c") as on_cluster, sentinel(tmp_path / "s") as on_sentinel:
        swaps = {PAGE_CLUSTER: on_cluster, PAGE_SENTINEL: on_sentinel}
        block = block_for("test_redis_cluster_and_sentinel")
        async with ran(block, swaps, "9001", tmp_path / "p") as ports:
            for page_port in ("9001", "9002"):
                url = f"http://127.0.0.1:{ports[page_port]}/mcp"
                assert await pids_of_one_legacy_session(url, calls=2)
                await a_modern_call(url)
