"""A session's writer: the one task that sends, so that messages never interleave.

Everything a :class:`~.session.Session` sends goes through its :class:`Writer`:
encoded messages wait in a bounded queue (when it is full, whoever sends waits —
a peer that does not read slows us down instead of growing our memory), and the
writer task hands the transport everything queued at once, so that many small
messages cost one write. Progress is not queued: a :class:`~.progress.ProgressStream`
only marks itself pending (:meth:`Writer.schedule_progress`), and the writer sends
the newest report of each stream before anything else it writes — so a slow peer
sees fewer, fresher updates, and never progress after the response.

One shortcut saves a task switch per request/response exchange: when the writer is
idle (waiting, nothing queued, no progress pending), the transport's writes do not
normally wait and no further input is at hand, the session's reader (or a request
actor, with its answer) writes the message itself (:meth:`Writer.send_from_reader`).
Only one writes at a time. Another saves a schedule point per outgoing request:
:meth:`Writer.send_then_wait` queues without one, since its caller waits at once.

The task and its queue are made on demand: a session whose answers all go out
directly (the session of one stateless HTTP request, say) never starts them. The
session lends its nursery (:meth:`Writer.attach`) while it is awake; the first
message that has to wait starts the task there. While its session sleeps (see
:mod:`.rest`) a writer has no task and no queue: :meth:`Writer.rest` lets the
queue go.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs
import trio

from ..protocol import types as t
from ..transports.abc import MessageStream, Outgoing, TransportClosed
from .companions import StartTask
from .progress import ProgressStream

log = logging.getLogger("mcp_actors.session")

_TICK = Outgoing(b"")  # wakes the writer to flush pending progress; never written
#: The queue of every resting writer: closed, so that a message sent to one is dropped
#: (its session wakes it before sending anything).
_RESTING = trio.open_memory_channel[Outgoing](0)
_RESTING[0].close()
_RESTING[1].close()
#: Answers the reader queues in a row before it lets the writer run (see send_from_reader).
_YIELD_EVERY = 32


@attrs.define(eq=False)
class Writer:
    """The sending side of one session (see the module docstring).

    ``encode_progress`` encodes a progress notification; ``on_closed`` is called when
    the transport fails under a write (the session then ends).
    """

    transport: MessageStream
    encode_progress: Callable[[t.ProgressParams], bytes]
    on_closed: Callable[[], None]
    queue_size: int
    #: Messages handed to the transport so far.
    sent: int = attrs.field(init=False, default=0)
    _send_channel: trio.MemorySendChannel[Outgoing] = attrs.field(init=False, default=_RESTING[0])
    _receive_channel: trio.MemoryReceiveChannel[Outgoing] = attrs.field(
        init=False, default=_RESTING[1]
    )
    _overflow: trio.Nursery | None = attrs.field(init=False, default=None)
    _dirty_progress: dict[ProgressStream, None] = attrs.field(init=False, factory=dict)
    _tick_queued: bool = attrs.field(init=False, default=False)
    _direct_writes: bool = attrs.field(init=False)
    _direct_writing: bool = attrs.field(init=False, default=False)
    _direct_done: trio.Event | None = attrs.field(init=False, default=None)
    _queued_by_reader: int = attrs.field(init=False, default=0)
    #: Whether the write loop has begun: before, nothing can have been handed to it.
    _looping: bool = attrs.field(init=False, default=False)
    #: Where the task starts (the session's nursery while it is awake), and whether it has.
    _start_task: StartTask | None = attrs.field(init=False, default=None)
    _task_started: bool = attrs.field(init=False, default=False)
    _closed: bool = attrs.field(init=False, default=False)

    def __attrs_post_init__(self) -> None:
        self._direct_writes = self.transport.direct_writes

    @property
    def queued(self) -> int:
        """Messages waiting for the writer."""
        if self._receive_channel is _RESTING[1]:  # no queue was ever made
            return 0
        return self._receive_channel.statistics().current_buffer_used

    @property
    def tasks(self) -> int:
        """The tasks of its own in the session's nursery: 1 once started (in this
        stretch awake), else 0."""
        return 1 if self._task_started else 0

    @property
    def idle(self) -> bool:
        """Nothing to write, nothing being written: the task (if any) waits on an empty queue."""
        if self._receive_channel is _RESTING[1]:  # no queue was ever made: nothing queued
            return not self._dirty_progress and not self._direct_writing
        queue = self._receive_channel.statistics()
        overflow = self._overflow
        return (
            queue.current_buffer_used == 0
            and (queue.tasks_waiting_receive == 1 or not self._task_started)
            and not self._dirty_progress
            and not self._direct_writing
            and (overflow is None or not overflow.child_tasks)
        )

    @property
    def unqueued(self) -> bool:
        """No queue was ever needed and no progress is pending: an answer from the reader
        goes straight to the transport, needing no task of the writer's."""
        return (
            self._direct_writes
            and self._receive_channel is _RESTING[1]
            and not self._dirty_progress
            and not self._direct_writing
        )

    def attach(self, start_task: StartTask) -> None:
        """The session is awake: the task may start with ``start_task`` (at once, if
        messages wait already)."""
        self._start_task = start_task
        if self.queued:
            self._start()

    def detach(self) -> None:
        """The session's nursery is gone: no task can start until the next :meth:`attach`."""
        self._start_task = None
        self._task_started = False

    def rest(self) -> None:
        """The session goes to sleep (its writer :attr:`idle`): let the queue go."""
        self._send_channel, self._receive_channel = _RESTING
        self._overflow = None
        self._looping = False

    def _queue(self) -> trio.MemorySendChannel[Outgoing]:
        """The queue, made on first use, with the task to empty it (once it can start)."""
        if self._send_channel is _RESTING[0] and not self._closed:
            self._send_channel, self._receive_channel = trio.open_memory_channel[Outgoing](
                self.queue_size
            )
        if not self._task_started and not self._closed:
            self._start()
        return self._send_channel

    def _start(self) -> None:
        if self._start_task is not None and not self._task_started:
            self._task_started = True
            self._start_task(self.run)

    async def run(self) -> None:
        """Write until :meth:`close` (what is queued is still written) or the transport fails."""
        async with trio.open_nursery() as overflow:
            self._overflow = overflow
            await self._write_loop()

    def close(self) -> None:
        """No more messages: the writer writes what is queued, then ends."""
        self._closed = True
        self._send_channel.close()

    def session_ended(self) -> None:
        """The session has ended: the callback into it goes (no reference cycle
        outlives the session); a failure of the transport now concerns nobody."""
        self.on_closed = _nothing

    # -- sending -------------------------------------------------------------------------

    async def send(self, message: Outgoing) -> None:
        """Queue ``message``, waiting while the queue is full (dropped once closed)."""
        try:
            await self._queue().send(message)
        except trio.ClosedResourceError:
            log.debug("session closed: dropped an outgoing message")

    async def send_then_wait(self, message: Outgoing) -> None:
        """Queue ``message`` for a caller that waits right after (for the response to
        it): without a schedule point of its own when there is room — the caller's wait
        is its checkpoint. Waits while the queue is full, like :meth:`send`."""
        try:
            self._queue().send_nowait(message)
        except trio.WouldBlock:
            await self.send(message)
        except trio.ClosedResourceError:
            log.debug("session closed: dropped an outgoing message")

    def send_soon(self, message: Outgoing) -> None:
        """Queue ``message`` without waiting: now, or by a task of its own if the queue is full."""
        try:
            self._queue().send_nowait(message)
        except trio.WouldBlock:
            if self._overflow is not None:
                self._overflow.start_soon(self.send, message)
        except trio.ClosedResourceError:
            pass

    async def send_from_reader(self, message: Outgoing) -> None:
        """Send an answer from the session's reader (or from a request actor, as its last
        act), as cheaply as the writer's state allows.

        If the writer is idle, nobody else is writing and nothing else waits to be read,
        the caller writes the message itself: nothing can be overtaken, and a
        request/response exchange costs one pass of the scheduler instead of two.
        Otherwise the message is queued without a schedule point when there is room, so
        that the writer takes a whole burst of answers at once when the reader next
        waits for input.
        """
        if (
            self._direct_writes
            and not self._direct_writing
            and not self._dirty_progress
            and not self.transport.input_ready()
        ):
            receive = self._receive_channel
            if receive is _RESTING[1]:
                # No queue was ever needed (a request/response session's usual state):
                # nothing can be queued, no statistics to read.
                await self._write_direct(message)
                return
            statistics = receive.statistics()
            # Nothing queued, and the writer is not holding a message: waiting for one, or
            # its task has not run yet (a session's first answer can go before it does).
            if statistics.current_buffer_used == 0 and (
                statistics.tasks_waiting_receive or not self._looping
            ):
                await self._write_direct(message)
                return
        try:
            self._queue().send_nowait(message)
        except trio.WouldBlock:
            await self.send(message)
        except trio.ClosedResourceError:
            log.debug("session closed: dropped an outgoing message")
        else:
            self._queued_by_reader += 1
            if self._queued_by_reader >= _YIELD_EVERY:
                # A long burst of input: let the writer send what is ready, so that the
                # peer works on those answers while we read on.
                self._queued_by_reader = 0
                await trio.lowlevel.cancel_shielded_checkpoint()

    def schedule_progress(self, stream: ProgressStream) -> None:
        """``stream`` has a report to send: the writer sends it before anything else."""
        self._dirty_progress[stream] = None
        if not self._tick_queued:
            try:
                self._queue().send_nowait(_TICK)
                self._tick_queued = True
            except (trio.WouldBlock, trio.ClosedResourceError):
                pass  # the writer is busy; it flushes progress before its next write

    # -- writing -------------------------------------------------------------------------

    async def _write_direct(self, message: Outgoing) -> None:
        self._direct_writing = True
        try:
            await self.transport.send_all((message,))
            self.sent += 1
        except TransportClosed:
            log.debug("transport closed under the reader")
            self.on_closed()
        finally:
            self._direct_writing = False
            if self._direct_done is not None:
                self._direct_done.set()
                self._direct_done = None

    async def _write_loop(self) -> None:
        receive = self._receive_channel
        send_all = self.transport.send_all
        self._looping = True
        try:
            async for first in receive:
                batch = [first] if first is not _TICK else []
                while True:
                    try:
                        item = receive.receive_nowait()
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                    if item is not _TICK:
                        batch.append(item)
                if self._dirty_progress:
                    batch[:0] = self._take_progress()
                self._tick_queued = False
                if batch:
                    while self._direct_writing:  # the reader's own write waited: let it end
                        if self._direct_done is None:
                            self._direct_done = trio.Event()
                        await self._direct_done.wait()
                    await send_all(batch)
                    self.sent += len(batch)
        except TransportClosed:
            log.debug("transport closed under the writer")
            self.on_closed()

    def _take_progress(self) -> list[Outgoing]:
        messages = []
        for stream in self._dirty_progress:
            progress = stream.take()
            if progress is not None:
                messages.append(Outgoing(self.encode_progress(progress), stream.request_id))
        self._dirty_progress.clear()
        return messages


def _nothing() -> None:
    """Told of a failed transport once the session has ended: nothing to do."""
