"""The end of a peer's input, and the grace its last requests get.

A peer that closes its end (stdin at EOF, a dropped connection) is normally gone:
nobody waits for the answers of its requests any more, so the session cancels them
at once rather than let them run on, writes what is already queued, and ends.

Unless the peer can still read
(:attr:`~mcp_actors.transports.abc.MessageStream.answers_after_input_ends`): over
stdio a client may write all its requests, close its end and then read the
answers (``mcp-server < requests.jsonl``). There the requests in flight get
``SessionConfig.eof_grace`` seconds to finish and be answered before the rest are
cancelled (:class:`EofGrace`). No new request is read meanwhile, and none of ours
can be sent: the peer sends no answers. The grace ends early, the moment the last
request in flight has handed its answer over (:meth:`EofGrace.answered`).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import trio


@attrs.define(eq=False)
class EofGrace:
    """How long a session whose peer stopped sending waits for its requests in flight.

    ``in_flight`` counts the session's requests not yet answered."""

    #: The grace in seconds (``SessionConfig.eof_grace``); 0: none.
    seconds: float
    _in_flight: Callable[[], int]
    _all_answered: trio.Event | None = attrs.field(init=False, default=None)

    async def wait(self) -> None:
        """Wait until :meth:`answered` finds none in flight, at most :attr:`seconds`
        (none if none is in flight now)."""
        if self.seconds > 0 and self._in_flight():
            self._all_answered = trio.Event()
            with trio.move_on_after(self.seconds):
                await self._all_answered.wait()

    def answered(self) -> None:
        """A request has handed its answer over: the last one ends the grace."""
        if self._all_answered is not None and not self._in_flight():
            self._all_answered.set()
