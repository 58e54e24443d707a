"""The client's side of ``subscriptions/listen`` (2026-07-28): a stream of the server's changes.

``Client.listen(...)`` opens a listen stream and yields a :class:`Listener`, an
async iterator of :class:`ListenEvent` (``method``, ``params``)::

    async with client.listen(tools_list_changed=True, resource_subscriptions=[uri]) as changes:
        print(changes.acknowledged)        # what the server agreed to send
        async for event in changes:
            if event.method == "notifications/tools/list_changed":
                tools = await client.list_tools()

The block is entered once the server has acknowledged the stream. Notifications
tagged with this stream's subscription id go to this listener only (not to
``ClientHandlers.on_list_changed``, which hears the legacy era's untagged ones).

The listener's inbox is a bounded, coalescing :class:`~mcp_actors.runtime.bus.Mailbox`:
a list change still unread absorbs the next one, an update of a resource (a task's
new state) still unread absorbs the next update of it, and beyond ``inbox_size`` distinct pending
events one more is dropped (counted in :attr:`Listener.dropped`) — so a slow
reader never holds up the client's session.

A stream that drops (the connection breaks, the server restarts) is opened again:
up to ``max_relistens`` times in a row, after a backoff that doubles from
``RELISTEN_BACKOFF`` seconds (capped at ``MAX_RELISTEN_BACKOFF``); a stream that
acknowledges resets the count. Changes made while it was down are not replayed:
:attr:`Listener.relistens` says how many times that happened, so a careful reader
re-lists. A stream the server ends gracefully (its ``subscriptions/listen`` result)
ends the iteration; one that cannot be reopened raises the last error from it.
Leaving the block cancels the stream (``notifications/cancelled`` on stdio, the
response stream closed on HTTP).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

import attrs
import trio

from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.jsonrpc import RequestId
from ..runtime.bus import Change, Mailbox

log = logging.getLogger("mcp_actors.client.listen")

#: First wait before opening a dropped stream again (seconds); doubles per failure.
RELISTEN_BACKOFF: Final = 0.1
#: Longest wait between two attempts (seconds).
MAX_RELISTEN_BACKOFF: Final = 5.0
_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"

#: Sends the listen request: (params, on_id) -> the result, when the server ends it.
SendListen = Callable[[t.SubscriptionsListenParams, Callable[[RequestId], None]], Awaitable[Any]]


@attrs.frozen
class ListenEvent:
    """One notification of a listen stream: its method and decoded params."""

    method: str
    params: Any

    @property
    def uri(self) -> str | None:
        """The resource a ``notifications/resources/updated`` is about (else None)."""
        return getattr(self.params, "uri", None)


@attrs.define(eq=False)
class Listener:
    """One listen stream, kept open across drops (see the module docstring)."""

    filter: dict[str, Any]
    _send: SendListen
    _routes: dict[RequestId, Callable[[str, Any], None]]
    inbox_size: int = 64
    max_relistens: int = 5
    _mailbox: Mailbox = attrs.field(init=False)
    #: What the server agreed to send (the last acknowledgement's ``notifications``).
    acknowledged: dict[str, Any] | None = attrs.field(init=False, default=None)
    _acknowledged: trio.Event = attrs.field(init=False, factory=trio.Event)
    #: How many times the stream was opened again after dropping.
    relistens: int = attrs.field(init=False, default=0)
    _ids: list[RequestId] = attrs.field(init=False, factory=list)

    def __attrs_post_init__(self) -> None:
        self._mailbox = Mailbox(self.inbox_size)

    @property
    def dropped(self) -> int:
        """Events dropped because ``inbox_size`` distinct ones were already unread."""
        return self._mailbox.dropped

    @property
    def coalesced(self) -> int:
        """Events absorbed by an unread one of the same kind."""
        return self._mailbox.coalesced

    # -- the actor -------------------------------------------------------------------

    async def run(self) -> None:
        """Keep the stream open until the server ends it, or it cannot be reopened."""
        params = t.SubscriptionsListenParams(notifications=self.filter)
        failures = 0
        try:
            while True:
                try:
                    await self._send(params, self._route)
                    return  # the server ended the stream gracefully
                except McpError as error:
                    if self.acknowledged is None:
                        raise  # refused from the start: asking again would not help
                    failures = 0 if self._acknowledged.is_set() else failures + 1
                    if failures > self.max_relistens:
                        raise
                    log.info("listen stream dropped (%s); listening again", error)
                finally:
                    self._forget_ids()
                self._acknowledged = trio.Event()
                await trio.sleep(min(RELISTEN_BACKOFF * 2**failures, MAX_RELISTEN_BACKOFF))
                self.relistens += 1
        finally:
            self._mailbox.close()

    def _route(self, request_id: RequestId) -> None:
        self._ids.append(request_id)
        self._routes[request_id] = self._take

    def _forget_ids(self) -> None:
        for request_id in self._ids:
            self._routes.pop(request_id, None)
        self._ids.clear()

    def _take(self, method: str, params: Any) -> None:
        """A notification tagged with this stream's id (from the client's reader: never blocks)."""
        if method == _ACKNOWLEDGED:
            self.acknowledged = dict(params.notifications)
            self._acknowledged.set()
            return
        # what the event is about (a resource, a task): events about different ones never coalesce
        subject = getattr(params, "uri", None) or getattr(params, "task_id", None)
        self._mailbox.offer(Change(method, subject, params))

    async def wait_acknowledged(self) -> None:
        """Wait for the stream's (first) acknowledgement."""
        await self._acknowledged.wait()

    # -- reading ---------------------------------------------------------------------

    def __aiter__(self) -> Listener:
        return self

    async def __anext__(self) -> ListenEvent:
        """The next event (waiting for one); the iteration ends with the stream."""
        change = await self._mailbox.get()
        if change is None:
            raise StopAsyncIteration
        return ListenEvent(change.method, change.params)
