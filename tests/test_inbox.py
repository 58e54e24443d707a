"""The bounded inbox of an HTTP session: order, the bound, ending and closing."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from mcp_actors.transports.http.inbox import Inbox, InboxClosed


async def test_items_come_out_in_order_and_a_full_inbox_makes_the_writer_wait() -> None:
    inbox: Inbox[int] = Inbox(2)
    await inbox.put(1)
    await inbox.put(2)
    with pytest.raises(trio.WouldBlock):
        inbox.put_nowait(3)
    done: list[int] = []

    async def third() -> None:
        await inbox.put(3)
        done.append(3)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(third)
        await trio.testing.wait_all_tasks_blocked()
        assert done == []  # waiting for room
        assert [await inbox.get(), await inbox.get()] == [1, 2]
    assert done == [3]
    assert await inbox.get() == 3


async def test_a_reader_waits_for_the_next_item() -> None:
    inbox: Inbox[str] = Inbox(4)
    got: list[str] = []

    async def reader() -> None:
        got.append(await inbox.get())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.testing.wait_all_tasks_blocked()
        inbox.put_nowait("body")
    assert got == ["body"]


async def test_end_lets_the_reader_drain_close_drops_everything() -> None:
    inbox: Inbox[int] = Inbox(4)
    await inbox.put(1)
    inbox.end()
    with pytest.raises(InboxClosed):
        await inbox.put(2)
    assert await inbox.get() == 1
    with pytest.raises(InboxClosed):
        await inbox.get()

    closed: Inbox[int] = Inbox(4)
    await closed.put(1)
    closed.close()
    assert len(closed) == 0
    with pytest.raises(InboxClosed):
        await closed.get()


async def test_ending_wakes_a_waiting_reader_and_writer() -> None:
    inbox: Inbox[int] = Inbox(1)
    outcomes: list[str] = []

    async def reader() -> None:
        with pytest.raises(InboxClosed):
            await inbox.get()
        outcomes.append("reader")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.testing.wait_all_tasks_blocked()
        inbox.close()
    assert outcomes == ["reader"]
    with pytest.raises(ValueError, match="capacity"):
        Inbox[int](0)
