"""The change bus over a Redis stream: a worker that loses Redis misses nothing silently.

Two ``mcp-actors run`` workers share a real ``redis-server``; worker B reaches it
through a TCP relay the test controls (:class:`CuttableRelay`). A 2026-07-28 client
listens on B while B is cut off from Redis for 5 s and a client of A makes changes:
when B is back it delivers every change published meanwhile (read on from its cursor
in the stream), or — when the stream's retention was exceeded meanwhile and what B
missed was trimmed — the re-list signal: a ``list_changed`` for every list the
stream follows and a ``resources/updated`` for every resource it follows.

Nothing here waits on timing: the relay says when B tried Redis and was refused,
the test reads the stream to know the changes are in Redis before B is let back, and
a last change published after the outage marks the end of what B delivers. The 5 s
of the outage are the issue's figure; shorter works the same.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import attrs
import coredis
import trio

from mcp_actors import open_client
from mcp_actors.runtime.bus import CHANGES_MISSED

from deployment import SCALE_OUT_SERVER, Running, mcp_actors_run, redis_server

OUTAGE_SECONDS = 5.0
STREAM = "mcp-actors:bus"
TOOLS_CHANGED = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"


@attrs.define(eq=False)
class CuttableRelay:
    """A loopback TCP relay to ``target``: :meth:`cut` closes every connection through
    it and refuses new ones (accepted, then closed at once) until :meth:`restore`."""

    target: int
    port: int = 0
    #: Connections refused while cut (each a reconnection attempt of the worker).
    refused: int = 0
    _cut: bool = False
    _scopes: set[trio.CancelScope] = attrs.field(factory=set)
    _changed: trio.Event = attrs.field(factory=trio.Event)

    async def serve(self, *, task_status: trio.TaskStatus[None]) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, self._relay, listeners)
            task_status.started()

    async def _relay(self, client: trio.SocketStream) -> None:
        if self._cut:
            self.refused += 1
            self._changed.set()
            await client.aclose()
            return
        with trio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                server = await trio.open_tcp_stream("127.0.0.1", self.target)
                async with client, server, trio.open_nursery() as nursery:
                    nursery.start_soon(_pump, client, server, nursery.cancel_scope)
                    nursery.start_soon(_pump, server, client, nursery.cancel_scope)
            finally:
                self._scopes.discard(scope)

    def cut(self) -> None:
        self._cut = True
        for scope in list(self._scopes):
            scope.cancel()

    def restore(self) -> None:
        self._cut = False

    async def wait_refused(self) -> None:
        """Until a connection was refused since the cut (the worker tried Redis again)."""
        while self.refused == 0:
            await self._changed.wait()
            self._changed = trio.Event()


async def _pump(source: trio.SocketStream, sink: trio.SocketStream, done: trio.CancelScope) -> None:
    try:
        while data := await source.receive_some(65536):
            await sink.send_all(data)
    except trio.BrokenResourceError:
        pass
    done.cancel()


@attrs.define
class Deployment:
    redis: coredis.Redis[bytes]
    relay: CuttableRelay
    #: A worker connected to Redis directly, and one through the relay.
    a: Running
    b: Running

    async def entries_added(self) -> int:
        """Changes ever appended to the bus stream (0: it does not exist yet)."""
        if not await self.redis.exists([STREAM]):
            return 0
        info = await self.redis.xinfo_stream(STREAM)
        return int(info.get("entries-added", 0))


@asynccontextmanager
async def deployment(**env: str) -> AsyncIterator[Deployment]:
    """Redis, worker A on it directly and worker B through a :class:`CuttableRelay`."""
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(redis_server())
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        nursery = await stack.enter_async_context(trio.open_nursery())
        stack.callback(nursery.cancel_scope.cancel)
        relay = CuttableRelay(port)
        await nursery.start(relay.serve)
        workers = []
        for redis_url in (url, f"redis://127.0.0.1:{relay.port}/0"):
            arguments = ("--transport", "http", "--port", "0", "--redis-url", redis_url)
            running = mcp_actors_run(SCALE_OUT_SERVER, *arguments, env=env)
            workers.append(await stack.enter_async_context(running))
        redis = await stack.enter_async_context(coredis.Redis.from_url(url))
        yield Deployment(redis, relay, workers[0], workers[1])


async def heard_until(events: Any, last: str) -> list[tuple[str, str | None]]:
    """What the listener delivers, up to the update of ``last`` (included)."""
    heard: list[tuple[str, str | None]] = []
    with trio.fail_after(30):
        async for event in events:
            heard.append((event.method, event.uri))
            if (event.method, event.uri) == (UPDATED, last):
                return heard
    raise AssertionError(f"the stream ended before {last}: {heard}")


async def cut_b_while(deployed: Deployment, changes: int, make_changes: Any) -> None:
    """Cut B off Redis; make ``changes`` changes on A; keep the outage at least
    OUTAGE_SECONDS, until B was refused once and the changes are in the stream."""
    before = await deployed.entries_added()
    deployed.relay.cut()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.sleep, OUTAGE_SECONDS)
        await make_changes()
        with trio.fail_after(30):
            await deployed.relay.wait_refused()
            while await deployed.entries_added() < before + changes:
                await trio.sleep(0.05)
    deployed.relay.restore()


async def test_a_listener_whose_worker_lost_redis_gets_every_change_made_meanwhile() -> None:
    notes = [f"note://{n}" for n in range(5)]
    async with deployment() as deployed:
        a, b = (open_client(w.url, era="modern") for w in (deployed.a, deployed.b))
        async with a as on_a, b as on_b:
            subscribed = [*notes, "note://never", "note://end"]
            async with on_b.listen(
                resource_subscriptions=subscribed, tools_list_changed=True
            ) as events:
                await events.wait_acknowledged()

                async def make_changes() -> None:
                    for uri in notes:
                        await on_a.call_tool("touch", {"uri": uri})
                    await on_a.call_tool("grow")

                await cut_b_while(deployed, len(notes) + 1, make_changes)
                await on_a.call_tool("touch", {"uri": "note://end"})
                heard = await heard_until(events, "note://end")
        assert deployed.relay.refused >= 1
    # Each change, once, in the order it was made: replayed, not the re-list signal
    # (which would have announced note://never too).
    assert heard == [
        *((UPDATED, uri) for uri in notes),
        (TOOLS_CHANGED, None),
        (UPDATED, "note://end"),
    ]


async def test_a_listener_that_missed_trimmed_changes_gets_the_relist_signal() -> None:
    """A 2026-07-28 listen stream and a legacy session's subscription, both on B."""
    retention = 3
    async with deployment(MCP_ACTORS_SHARED_BUS_RETENTION=str(retention)) as deployed:
        a, b = (open_client(w.url, era="modern") for w in (deployed.a, deployed.b))
        legacy = open_client(deployed.b.url, era="legacy")
        watched = ["note://x", "note://y", "note://end"]
        async with (
            a as on_a,
            b as on_b,
            legacy as legacy_on_b,
            legacy_on_b.subscribe("note://x") as legacy_updates,
            on_b.listen(resource_subscriptions=watched, tools_list_changed=True) as events,
        ):
            await events.wait_acknowledged()
            others = [f"note://other-{n}" for n in range(3 * retention)]

            async def make_changes() -> None:
                for uri in others:  # nobody listens to these: they only fill the stream
                    await on_a.call_tool("touch", {"uri": uri})

            await cut_b_while(deployed, len(others), make_changes)
            await on_a.call_tool("touch", {"uri": "note://end"})
            heard = await heard_until(events, "note://end")
            with trio.fail_after(30):
                legacy_heard = await legacy_updates.receive()
    # B cannot know what it missed: the stream re-announces all it follows. note://end
    # comes once more or not (the signal's update of it may coalesce with the real one).
    signal = {(TOOLS_CHANGED, None), (UPDATED, "note://x"), (UPDATED, "note://y")}
    assert signal <= set(heard) <= signal | {(UPDATED, "note://end")}, heard
    assert CHANGES_MISSED not in {method for method, _ in heard}
    assert legacy_heard.uri == "note://x"  # the legacy session's subscription: re-read it


async def test_changes_made_on_a_worker_that_lost_redis_reach_the_others_once_it_is_back() -> None:
    """The sender side: B's changes wait in its outbox while B cannot reach Redis."""
    notes = [f"note://{n}" for n in range(3)]
    async with deployment() as deployed:
        a, b = (open_client(w.url, era="modern") for w in (deployed.a, deployed.b))
        watched = [*notes, "note://end"]
        async with a as on_a, b as on_b, on_a.listen(resource_subscriptions=watched) as events:
            await events.wait_acknowledged()
            before = await deployed.entries_added()
            deployed.relay.cut()
            for uri in notes:
                await on_b.call_tool("touch", {"uri": uri})
            with trio.fail_after(30):
                await deployed.relay.wait_refused()  # B tried Redis again: still cut
            assert await deployed.entries_added() == before  # nothing got through
            deployed.relay.restore()
            await on_b.call_tool("touch", {"uri": "note://end"})
            heard = await heard_until(events, "note://end")
    assert heard == [*((UPDATED, uri) for uri in notes), (UPDATED, "note://end")], heard


async def test_changes_a_cut_off_worker_could_not_keep_make_the_others_relist() -> None:
    """B's outbox holds 2 changes; B makes 4 while it cannot reach Redis: 2 are lost,
    and once B is back the listeners on A are told to re-list."""
    env = {"MCP_ACTORS_SHARED_BUS_OUTBOX": "2"}
    async with deployment(**env) as deployed:
        a, b = (open_client(w.url, era="modern") for w in (deployed.a, deployed.b))
        watched = ["note://x", "note://end"]
        async with (
            a as on_a,
            b as on_b,
            on_a.listen(resource_subscriptions=watched, tools_list_changed=True) as events,
        ):
            await events.wait_acknowledged()
            deployed.relay.cut()
            for n in range(4):
                await on_b.call_tool("touch", {"uri": f"note://other-{n}"})
            with trio.fail_after(30):
                await deployed.relay.wait_refused()
            deployed.relay.restore()
            await on_b.call_tool("touch", {"uri": "note://end"})
            heard = await heard_until(events, "note://end")
    signal = {(TOOLS_CHANGED, None), (UPDATED, "note://x")}
    assert signal <= set(heard) <= signal | {(UPDATED, "note://end")}, heard
