"""A session's companions (``runtime/companions.py``) are held as a nursery holds its children.

The session of one exchange serves its request with no nursery of its own; what needs a
task meanwhile runs in the host and is joined before the session ends. These tests hold
the nursery-like contract on its own; ``tests/test_exchange_reader.py`` holds it through
real HTTP exchanges (a slow request's reader is a companion).
"""

from __future__ import annotations

import pytest
import trio

from mcp_actors.runtime.companions import Companions


class Boom(Exception):
    pass


async def test_join_waits_for_every_companion() -> None:
    finished: list[str] = []
    async with trio.open_nursery() as host:
        companions = Companions(host.start_soon, trio.CancelScope())

        async def companion(name: str, delay: float) -> None:
            await trio.sleep(delay)
            finished.append(name)

        companions.start(lambda: companion("slow", 0.05))
        companions.start(lambda: companion("quick", 0))
        with trio.fail_after(5):  # a hang guard only
            await companions.join()
        assert finished == ["quick", "slow"]
        assert not host.child_tasks


async def test_a_companion_that_fails_cancels_the_body_and_the_others_and_is_raised() -> None:
    others_cancelled = trio.Event()
    body = trio.CancelScope()
    async with trio.open_nursery() as host:
        companions = Companions(host.start_soon, body)

        async def waits() -> None:
            try:
                await trio.sleep_forever()
            finally:
                others_cancelled.set()

        async def fails() -> None:
            await trio.sleep(0.01)
            raise Boom("the writer broke")

        companions.start(waits)
        companions.start(fails)
        with trio.fail_after(5), body:  # (fail_after: a hang guard only)
            await trio.sleep_forever()  # the request being served: cancelled by the failure
        assert body.cancelled_caught
        with pytest.raises(Boom, match="the writer broke"):
            await companions.join()
        assert others_cancelled.is_set() and not host.child_tasks
    # The host (the supervisor) saw no failure: the session gets it, where it joins.


async def test_a_session_leaving_by_an_exception_cancels_its_companions_and_waits() -> None:
    begun, ended = trio.Event(), trio.Event()
    async with trio.open_nursery() as host:
        companions = Companions(host.start_soon, trio.CancelScope())

        async def companion() -> None:
            begun.set()
            try:
                await trio.sleep_forever()
            finally:
                with trio.CancelScope(shield=True):
                    await trio.sleep(0.01)  # some last work, which the session waits for
                ended.set()

        companions.start(companion)
        await begun.wait()
        with trio.fail_after(5), trio.CancelScope() as session:  # (fail_after: a hang guard)
            session.cancel()  # the session's own task is cancelled...
            try:
                await trio.sleep_forever()
            except trio.Cancelled:
                await companions.cancel_and_join()  # ...and still waits for its companions
                raise
        assert ended.is_set() and not host.child_tasks


async def test_a_companion_started_after_cancel_is_cancelled_at_once() -> None:
    ran_to_the_end = False
    async with trio.open_nursery() as host:
        companions = Companions(host.start_soon, trio.CancelScope())
        companions.cancel()

        async def companion() -> None:
            nonlocal ran_to_the_end
            await trio.sleep(30)
            ran_to_the_end = True

        companions.start(companion)
        with trio.fail_after(5):  # a hang guard only
            await companions.join()
    assert not ran_to_the_end


async def test_a_failure_while_the_session_leaves_by_an_exception_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The session's own exception goes on; a companion's failure meanwhile is not lost."""
    begun = trio.Event()
    async with trio.open_nursery() as host:
        companions = Companions(host.start_soon, trio.CancelScope())

        async def companion() -> None:
            begun.set()
            try:
                await trio.sleep_forever()
            except trio.Cancelled:
                raise Boom("failed while cancelled") from None

        companions.start(companion)
        await begun.wait()
        with trio.fail_after(5), trio.CancelScope() as session:  # (fail_after: a hang guard)
            session.cancel()
            try:
                await trio.sleep_forever()
            except trio.Cancelled:
                await companions.cancel_and_join()
                raise
    failures = [r for r in caplog.records if r.exc_info and r.exc_info[0] is Boom]
    assert len(failures) == 1 and "failed while cancelled" in str(failures[0].exc_info[1])
