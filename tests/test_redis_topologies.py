"""``--redis-url`` beyond one server: a Redis Cluster and Sentinel, with real ``redis-server``s.

Each test starts its topology on loopback — three cluster masters joined with
``redis-cli --cluster create``; or a primary, a replica and a Sentinel watching them —
and two ``mcp-actors run`` workers on it (``redis+cluster://...``,
``redis+sentinel://.../<service>``). Through them a 2026-07-28 client runs a task on
one worker and reads its result on the other, and hears on one worker a change made
on the other. The URL forms are checked strictly: each wrong one is refused with a
message that says what is wrong.
"""

from __future__ import annotations

import gc
import random
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_actors import open_client
from mcp_actors.config import SettingsError
from mcp_actors.protocol import types as t
from mcp_actors.runtime.task_store import TaskRecord
from mcp_actors.shared.redis_client import open_redis
from mcp_actors.shared.settings import load_shared_settings
from mcp_actors.shared.task_store import RedisTaskStore

from deployment import SCALE_OUT_SERVER, accepting, free_port, mcp_actors_run, need

WITH_TASKS = t.ClientCapabilities(extensions={t.TASKS_EXTENSION: {}})
SERVICE = "mcp-primary"


def free_cluster_port() -> int:
    """A free loopback port whose cluster bus port (+10000) is free too."""
    for _ in range(100):
        port = random.randint(20000, 55535)
        with socket.socket() as probe, socket.socket() as bus:
            try:
                probe.bind(("127.0.0.1", port))
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
            return port
    raise AssertionError("no free pair of ports for a cluster node")


@asynccontextmanager
async def redis_process(
    directory: Path, *arguments: str, port: int | None = None, config: Path | None = None
) -> AsyncIterator[int]:
    """``redis-server [config]`` on ``port`` (default: a free one) on loopback with
    ``arguments``; yields the port."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port() if port is None else port
    command = [need("redis-server"), *([str(config)] if config else [])]
    command += ["--port", str(port), "--bind", "127.0.0.1"]
    command += ["--save", "", "--appendonly", "no", "--loglevel", "warning"]
    command += ["--dir", str(directory), *arguments]
    async with trio.open_nursery() as nursery:
        quiet = partial(trio.run_process, stdout=subprocess.DEVNULL)
        process = await nursery.start(quiet, command)
        try:
            await accepting(port)
            yield port
        finally:
            process.terminate()


async def redis_cli(*arguments: str) -> str:
    done = await trio.run_process([need("redis-cli"), *arguments], capture_stdout=True)
    return done.stdout.decode()


async def until(predicate: str, port: int, *command: str) -> None:
    """Until ``redis-cli -p port COMMAND`` says ``predicate`` (a hang guard bounds it)."""
    with trio.fail_after(60):
        while predicate not in await redis_cli("-p", str(port), *command):
            await trio.sleep(0.1)


@asynccontextmanager
async def cluster(directory: Path) -> AsyncIterator[str]:
    """Three masters joined into one Redis Cluster; yields its ``redis+cluster://`` URL."""
    async with AsyncExitStack() as stack:
        ports = []
        options = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
        for n in range(3):
            node = redis_process(directory / f"node{n}", *options, port=free_cluster_port())
            ports.append(await stack.enter_async_context(node))
        nodes = [f"127.0.0.1:{port}" for port in ports]
        await redis_cli("--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes")
        for port in ports:
            await until("cluster_state:ok", port, "cluster", "info")
        yield "redis+cluster://" + ",".join(nodes)


@asynccontextmanager
async def sentinel(directory: Path) -> AsyncIterator[str]:
    """A primary, its replica, and a Sentinel watching them under SERVICE; yields the
    ``redis+sentinel://`` URL."""
    async with AsyncExitStack() as stack:
        primary = await stack.enter_async_context(redis_process(directory / "primary"))
        replica_dir = directory / "replica"
        replicaof = ("--replicaof", "127.0.0.1", str(primary))
        await stack.enter_async_context(redis_process(replica_dir, *replicaof))
        conf = directory / "sentinel" / "sentinel.conf"
        conf.parent.mkdir()
        conf.write_text(
            f"sentinel monitor {SERVICE} 127.0.0.1 {primary} 1\n"
            f"sentinel down-after-milliseconds {SERVICE} 60000\n"
        )
        port = await stack.enter_async_context(
            redis_process(conf.parent, "--sentinel", config=conf)
        )
        await until(str(primary), port, "sentinel", "get-master-addr-by-name", SERVICE)
        await until("connected_slaves:1", primary, "info", "replication")
        yield f"redis+sentinel://127.0.0.1:{port}/{SERVICE}/0"


TOPOLOGIES = {"cluster": cluster, "sentinel": sentinel}


@pytest.mark.parametrize("topology", list(TOPOLOGIES))
async def test_two_workers_share_tasks_and_changes_through_the_topology(
    topology: str, tmp_path: Path
) -> None:
    async with TOPOLOGIES[topology](tmp_path) as url, AsyncExitStack() as stack:
        workers = []
        for _ in range(2):
            arguments = ("--transport", "http", "--port", "0", "--redis-url", url)
            running = mcp_actors_run(SCALE_OUT_SERVER, *arguments)
            workers.append(await stack.enter_async_context(running))
        a, b = (open_client(w.url, era="modern", capabilities=WITH_TASKS) for w in workers)
        async with a as on_a, b as on_b:
            started = await on_a.start_tool_task("slow", {"seconds": 0.1})
            assert started.task_id is not None
            result = await on_b.tool_task(started.task_id).result()
            block = result.content[0]
            assert isinstance(block, t.TextContent)
            assert block.text == f"slept 0.1s in {workers[0].process.pid}"
            async with on_b.listen(resource_subscriptions=["note://x"]) as events:
                await events.wait_acknowledged()
                await on_a.call_tool("touch", {"uri": "note://x"})
                with trio.fail_after(10):
                    event = await events.__anext__()
            assert (event.method, event.uri) == ("notifications/resources/updated", "note://x")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1:6379", "the scheme must be one of redis://, rediss://, unix://"),
        ("redis://127.0.0.1:99999/0", "port '99999' is not a number 1-65535"),
        ("redis://127.0.0.1:6379/x", "db 'x' is not a number 0-15"),
        ("redis://127.0.0.1:6379/0?timeout=1", "unknown query parameter(s) timeout"),
        ("redis://a:1,b:2/0", "several hosts: use redis+cluster:// or redis+sentinel://"),
        ("unix://", "unix:// needs the socket's path"),
        ("redis+cluster://a:7000/1", "a Redis Cluster has db 0 only"),
        ("redis+cluster://a:7000,:7001", "an empty host in ':7001'"),
        ("redis+sentinel://s:26379", "a Sentinel URL names its service"),
        ("redis+sentinel://s:26379/mymaster/99", "db '99' is not a number 0-15"),
        ("redis+sentinel://user:secret@s:x/mymaster", "'redis+sentinel://user:***@s:x/mymaster'"),
    ],
)
def test_a_redis_url_of_no_known_form_is_refused_with_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(SettingsError) as refused:
        load_shared_settings(environ={"MCP_ACTORS_SHARED_REDIS_URL": url})
    assert says in str(refused.value)
    assert "secret" not in str(refused.value)


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:6379/0",
        "rediss://user:pw@redis.example:6380/2",
        "unix:///run/redis/redis.sock?db=1",
        "redis+cluster://10.0.0.1:7000,10.0.0.2:7000,[::1]:7001",
        "rediss+cluster://:pw@node:7000",
        "redis+sentinel://s1:26379,s2:26379,s3/mymaster/3",
    ],
)
def test_every_documented_redis_url_form_is_accepted(url: str) -> None:
    assert load_shared_settings(environ={"MCP_ACTORS_SHARED_REDIS_URL": url}).redis_url == url


def test_mcp_actors_run_refuses_a_bad_redis_url_before_serving() -> None:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", SCALE_OUT_SERVER]
    command += ["--transport", "http", "--port", "0", "--redis-url", "redis+cluster://"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "redis_url 'redis+cluster://': no host:port before the path" in done.stderr
    assert "Traceback" not in done.stderr


# coredis 6.9's cluster client leaves a discovery connection's memory streams for the
# garbage collector to close (a ResourceWarning each): its bug, collected here.
@pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning")
async def test_the_task_store_s_transactions_hold_on_a_cluster(tmp_path: Path) -> None:
    """A record with its requestor's index, and a compare-and-set of it, are transactions
    over several keys: one hash slot holds them all (``task_space``), so a Cluster
    takes them as one server does."""
    async with cluster(tmp_path) as url, open_redis(url) as redis:
        store = RedisTaskStore(redis, "mcp-actors", "worker-a")
        for n in range(20):  # ids that would land in different slots untagged
            record = TaskRecord(
                f"task-{n}", created=1.0, ttl_ms=60_000, poll_interval_ms=100, tool="t"
            )
            record.requestor = "alice"
            await store.add(record)
        listed = await store.of_requestor("alice")
        assert sorted(r.task_id for r in listed) == sorted(f"task-{n}" for n in range(20))
        done = await store.update("task-7", status="completed", result={"content": []})
        assert done is not None and done.status == "completed"
        again = await store.update("task-7", status="failed")
        assert again is not None and again.status == "completed"  # finished stays finished
    gc.collect()
