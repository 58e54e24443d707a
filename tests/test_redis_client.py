"""Redis from Trio natively: a command runs in the awaiting task, and cancelling it cancels it."""

from __future__ import annotations

import gc
import threading

import pytest
import trio
import trio.testing

from mcp_actors.shared.redis_client import RedisClient, open_redis

from deployment import redis_server


async def blocked_in(observer: RedisClient, command: str) -> int:
    """How many clients of the server are blocked in ``command`` now."""
    listing = await observer.client.client_list()
    return sum(1 for client in listing if client.get("cmd") == command)


async def wait_until_blocked_count(observer: RedisClient, command: str, wanted: int) -> None:
    for _ in range(500):  # a hang guard, not a timing: each round is one round trip
        if await blocked_in(observer, command) == wanted:
            return
        await trio.sleep(0.01)
    raise AssertionError(f"never {wanted} client(s) in {command}")


async def pop_forever(redis: RedisClient) -> None:
    await redis.client.blpop(["never-filled"], 60)


async def test_a_cancelled_command_is_cancelled_in_redis_and_no_thread_ran_it() -> None:
    async with redis_server() as url, open_redis(url) as redis, open_redis(url) as observer:
        assert await redis.ping()  # connected (resolving the host may start trio's thread)
        threads_before = threading.active_count()
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pop_forever, redis)
                await wait_until_blocked_count(observer, "blpop", 1)
                assert threading.active_count() == threads_before
                scope.cancel()
        assert scope.cancelled_caught
        # The blocked command went with its connection: Redis no longer runs it.
        await wait_until_blocked_count(observer, "blpop", 0)
        # And the client goes on serving commands.
        await redis.client.set("after", b"1")
        assert await redis.client.get("after") == b"1"


# coredis 6.9 leaves the memory streams of a connection attempt that failed for the
# garbage collector to close (a ResourceWarning each): its bug, not a leak of ours.
@pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning")
async def test_a_redis_that_does_not_answer_is_told_by_ping() -> None:
    async with redis_server() as url:
        pass  # stopped: nothing listens on its port any more
    async with open_redis(url, timeout=1.0) as redis:
        assert not await redis.ping()
    gc.collect()  # their warnings, here, under this test's filter


async def test_an_actor_cancelled_with_everything_still_writes_its_last_word() -> None:
    """The client outlives the actors of its block: one cancelled from outside, with
    the rest, writes its last word (shielded) before the connections go."""
    async with redis_server() as url:
        with trio.CancelScope() as outer:
            async with open_redis(url) as redis, trio.open_nursery() as nursery:

                async def actor() -> None:
                    try:
                        await trio.sleep_forever()
                    finally:
                        with trio.CancelScope(shield=True):
                            await redis.client.set("last-word", b"said")

                assert await redis.ping()
                nursery.start_soon(actor)
                await trio.testing.wait_all_tasks_blocked()
                outer.cancel()
        async with open_redis(url) as check:
            assert await check.client.get("last-word") == b"said"
