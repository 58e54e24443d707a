"""The re-list signal on every transport: what a bus that lost changes makes clients do.

A bus spanning processes that may have lost changes on their way to this one
publishes :data:`~mcp_actors.runtime.bus.CHANGES_MISSED` (``RedisBus`` does, see
``test_shared_bus.py``; a third-party bus implementing ``Bus`` may too). Here the
server's own bus publishes it, in process, and each client must hear it as the
notifications that make it re-read what it follows — and nothing it does not
follow: a 2026-07-28 listen stream (every network transport and front end, and
memory) and a legacy session's ``resources/subscribe`` (its list changes too).
"""

from __future__ import annotations

import pytest
import trio

from mcp_actors import ClientHandlers
from mcp_actors.runtime.bus import CHANGES_MISSED, Change

from conftest import connect
from servers.scale_out import server

SERVER = "servers.scale_out:server"
UPDATED = "notifications/resources/updated"


@pytest.mark.parametrize("transport", ["memory", "http", "http-hypercorn", "ws"])
async def test_a_listen_stream_hears_missed_changes_as_what_it_follows(transport: str) -> None:
    async with (
        connect(transport, SERVER, era="modern") as client,
        client.listen(
            tools_list_changed=True, resource_subscriptions=["note://a", "note://b"]
        ) as events,
    ):
        await events.wait_acknowledged()
        server.bus.publish(Change(CHANGES_MISSED))
        heard = set()
        with trio.fail_after(10):
            async for event in events:
                heard.add((event.method, event.uri))
                if len(heard) == 3:
                    break
    assert heard == {
        ("notifications/tools/list_changed", None),
        (UPDATED, "note://a"),
        (UPDATED, "note://b"),
    }  # not prompts or resources list changes: the stream did not ask for them


@pytest.mark.parametrize("transport", ["memory", "http", "sse"])
async def test_a_legacy_subscription_hears_missed_changes_as_an_update(transport: str) -> None:
    changed = trio.Event()

    def on_list_changed(method: str) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    handlers = ClientHandlers(on_list_changed=on_list_changed)
    async with (
        connect(transport, SERVER, handlers=handlers) as client,
        client.subscribe("note://a") as updates,
    ):
        server.bus.publish(Change(CHANGES_MISSED))
        with trio.fail_after(10):
            update = await updates.receive()
            await changed.wait()
    assert update.uri == "note://a"
