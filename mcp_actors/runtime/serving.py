"""Serving the requests a peer sends: each in an actor of its own, answered once.

The session's reader turns each request the engine accepts into an
:class:`~.request.InboundRequest` and hands it here, without waiting:

- :meth:`Serving.serve` runs it as an *actor*: a task of its own, in a cancel scope
  of its own (the request's ``scope``), so that ``notifications/cancelled`` stops
  exactly that handler — a cancelled request gets no answer;
- :meth:`Serving.serve_inline` runs a request whose handler is declared never to
  wait right in the reader (see :mod:`.inline`): no task, no scope;
- :meth:`Serving.serve_batch` serves a JSON-RPC batch's requests concurrently and
  answers with one array.

:meth:`Serving._handle` is the one place where a handler's outcome becomes an
answer: its result, the :class:`~mcp_actors.protocol.errors.McpError` it raised, or —
for any other exception, a bug — a bare "Internal error" for the peer and a
rate-limited traceback for the log (:mod:`.internal_errors`). A request that asked
for progress gets its :class:`~.progress.ProgressStream` here, closed once the answer
is on its way. Every answer goes to the session's writer as the actor's last act;
then the request is :meth:`~mcp_actors.protocol.engine.Engine.finished` and counts
towards the end of the grace of :mod:`.eof`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs
import msgspec
import trio

from ..protocol.engine import Engine
from ..protocol.errors import McpError
from ..protocol.events import BatchReceived, Event, Reply, RequestReceived
from ..protocol.jsonrpc import RequestId
from ..protocol.received import progress_token
from ..transports.abc import Outgoing
from .dispatch import Dispatcher
from .eof import EofGrace
from .inline import Waiting, start_inline
from .internal_errors import INTERNAL_ERROR, internal_errors
from .outbound import OutboundCall
from .progress import ProgressStream
from .request import InboundRequest
from .writer import Writer

log = logging.getLogger("mcp_actors.session")


class InlineStarted(msgspec.Struct, frozen=True):
    """A request served inline after its first step: its answer (:class:`Outgoing`), or
    the handler still :class:`~.inline.Waiting` (it waited, although declared inline)."""

    request: InboundRequest
    step: Outgoing | Waiting[Outgoing]


@attrs.define(eq=False)
class Serving:
    """How one session serves its peer's requests (see the module docstring)."""

    engine: Engine[InboundRequest, OutboundCall]
    writer: Writer
    dispatcher: Dispatcher
    eof: EofGrace

    async def serve_batch(
        self,
        batch: BatchReceived[InboundRequest, OutboundCall],
        deliver: Callable[[Event[InboundRequest, OutboundCall]], None],
    ) -> None:
        """Serve a batch's requests concurrently; answer with one array of their responses.

        Every answer goes in that array: the engine's replies (an invalid element, a
        request that may not run) and each request's response.
        """
        answers: list[bytes] = []
        answered: list[RequestId] = []

        async def serve_one(request: InboundRequest) -> None:
            answer = await self._run(request)
            if answer is not None:
                answers.append(answer.payload)
                answered.append(request.id)

        async with trio.open_nursery() as nursery:
            for event in batch.events:
                if type(event) is Reply:
                    answers.append(event.payload)
                    if event.request_id is not None:
                        answered.append(event.request_id)
                elif type(event) is RequestReceived:
                    event.request.scope = trio.CancelScope()
                    nursery.start_soon(serve_one, event.request)
                else:
                    deliver(event)
        if answers:
            batch_answer = self.engine.encode_batch(answers)
            await self.writer.send(Outgoing(batch_answer, answers=tuple(answered)))
        self.eof.answered()

    async def serve(self, request: InboundRequest) -> None:
        """Serve ``request`` as an actor (the body of its task; its ``scope`` is set)."""
        answer = await self._run(request)
        if answer is not None:
            await self.writer.send_from_reader(answer)
        self.eof.answered()

    async def serve_inline(self, request: InboundRequest) -> None:
        """Serve a request declared never to wait, in the reader (see :mod:`.inline`)."""
        step = self._first_step(request)
        answer = step if isinstance(step, Outgoing) else await self._finish(request, step)
        await self.writer.send_from_reader(answer)

    def start_inline(self, request: InboundRequest) -> InlineStarted:
        """The first, synchronous step of :meth:`serve_inline`: usually the whole handler.
        Its answer is not sent yet: :meth:`finish_inline` does that (and drives a handler
        that waited to its end)."""
        return InlineStarted(request, self._first_step(request))

    async def finish_inline(self, started: InlineStarted) -> None:
        """Send the answer of a request :meth:`start_inline` started, once it has one."""
        step = started.step
        answer = step if isinstance(step, Outgoing) else await self._finish(started.request, step)
        await self.writer.send_from_reader(answer)

    def _first_step(self, request: InboundRequest) -> Outgoing | Waiting[Outgoing]:
        """Step the handler once: its answer (the request is then finished), or the
        handler :class:`~.inline.Waiting`."""
        try:
            step = start_inline(self._handle(request))
        except BaseException:
            self._finished(request)
            raise
        if type(step) is Outgoing:
            self._finished(request)
        return step

    async def _finish(self, request: InboundRequest, waiting: Waiting[Outgoing]) -> Outgoing:
        """Drive a handler declared inline that waited after all to its answer."""
        log.warning(
            "handler for %s (id %r) waited although it was declared inline; the reader finishes it",
            request.method,
            request.id,
        )
        try:
            return await waiting.finish()
        finally:
            self._finished(request)

    def _finished(self, request: InboundRequest) -> None:
        if request.progress is not None:  # close_progress(), inlined: the hot path
            request.progress.closed = True
        self.engine.finished(request.id)

    async def _run(self, request: InboundRequest) -> Outgoing | None:
        """Run a request's handler in its cancel scope: its answer, None if cancelled."""
        answer: Outgoing | None = None
        assert request.scope is not None
        try:
            with request.scope:
                answer = await self._handle(request)
        finally:
            request.close_progress()
            self.engine.finished(request.id)
        return answer

    async def _handle(self, request: InboundRequest) -> Outgoing:
        """Serve one request: the one place where an exception becomes a JSON-RPC error.

        The answer goes out with the facts a transport routes on (the request it
        closes, an error's code), so that none decodes it again."""
        try:
            params = request.decode_params()
        except McpError as invalid:
            return self._error(request, invalid)
        if getattr(params, "meta", None):  # most requests carry no _meta: no call
            token = progress_token(params)
            if token is not None:
                request.progress = ProgressStream(token, request.id, self.writer)
        try:
            result = await self.dispatcher.handle_request(request, params)
            return Outgoing(self.engine.respond(request.id, result), request.id, True)
        except McpError as error:
            return self._error(request, error)
        except Exception:
            internal_errors.report(log, "handler for %s (id %r) failed", request.method, request.id)
            return self._error(request, INTERNAL_ERROR)

    def _error(self, request: InboundRequest, error: McpError) -> Outgoing:
        payload = self.engine.respond_error(request.id, error)
        return Outgoing(payload, request.id, True, error_code=error.code)
