"""Soak: 1,000 sessions subscribed to one URI, 1,000 updates, and nothing left behind.

Every session is a real client/server pair over the in-memory transport, the
server sessions supervised. The publisher never waits on a subscriber: updates a
subscriber cannot keep up with are coalesced, but the final one always arrives.
Once the clients leave, the supervisor and the subscription hub are back where
they started (no session, no subscription, no extra task).
"""

from __future__ import annotations

import time

import trio

from mcp_actors import Server, memory_pair, open_client, open_supervisor

SESSIONS = 1000
UPDATES = 1000
URI = "soak://value"
#: Updates published between two checkpoints of the publisher: a publisher faster than
#: its subscribers, which is what coalescing is for (1 would deliver ~N*U/2 messages).
BURST = 20


def all_tasks() -> int:
    """Every task alive in this Trio run."""
    count = 0
    root = trio.lowlevel.current_root_task()
    assert root is not None
    pending = [root]
    while pending:
        task = pending.pop()
        count += 1
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return count


async def test_one_thousand_subscribers_one_thousand_updates() -> None:
    server = Server("soak")

    @server.resource(URI)
    def value() -> str:
        return "value"

    started = time.perf_counter()
    async with open_supervisor() as supervisor:
        baseline = supervisor.statistics()
        baseline_tasks = all_tasks()
        subscribed = 0
        all_subscribed = trio.Event()
        finished: list[int] = []
        received = 0

        async def subscriber(index: int) -> None:
            nonlocal subscribed, received
            client_end, server_end = memory_pair()
            await supervisor.start_session(server.create_session(server_end))
            async with (
                open_client(client_end, era="legacy") as client,
                client.subscribe(URI) as updates,
            ):
                subscribed += 1
                if subscribed == SESSIONS:
                    all_subscribed.set()
                async for update in updates:
                    received += 1
                    assert update.uri == URI
                    if update.meta == {"seq": UPDATES}:
                        finished.append(index)
                        break

        with trio.fail_after(40):
            async with trio.open_nursery() as clients:
                for index in range(SESSIONS):
                    clients.start_soon(subscriber, index)
                await all_subscribed.wait()
                assert supervisor.statistics().sessions_active == SESSIONS
                assert server.subscription_statistics().subscriptions == SESSIONS
                connected = time.perf_counter()
                for seq in range(1, UPDATES + 1):
                    assert server.notify_resource_updated(URI, meta={"seq": seq}) == SESSIONS
                    if seq % BURST == 0:
                        # Let subscribers run; between runs, updates coalesce.
                        await trio.lowlevel.checkpoint()
                published = time.perf_counter()
            delivered = time.perf_counter()

            assert sorted(finished) == list(range(SESSIONS))
            # The server sessions end once their clients have gone.
            while supervisor.statistics().sessions_active:
                await trio.sleep(0.01)
            await trio.testing.wait_all_tasks_blocked()

        hub = server.subscription_statistics()
        stats = supervisor.statistics()
        assert hub.subscriptions == 0 and hub.topics == 0
        assert hub.delivered + hub.coalesced == SESSIONS * UPDATES
        assert stats.sessions_active == 0 and stats.sessions_failed == 0
        assert stats.sessions_started == baseline.sessions_started + SESSIONS
        assert stats.tasks == baseline.tasks
        assert stats.inbound_requests == stats.outbound_calls == 0
        assert all_tasks() == baseline_tasks
        print(
            f"\n{SESSIONS} sessions: connected+subscribed in {connected - started:.2f} s;"
            f" {UPDATES} updates published in {published - connected:.2f} s,"
            f" all delivered after {delivered - connected:.2f} s;"
            f" {hub.delivered} notifications sent, {hub.coalesced} coalesced;"
            f" {received} received by clients"
        )
