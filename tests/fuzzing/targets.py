"""A server under fuzz, run as a child process, and the raw wire to one of its sessions.

A :class:`Target` starts ``mcp-actors run SERVER`` (over stdio a process per
session; over ``http`` (the lean front end), ``http-hypercorn`` or ``ws`` one
process on 127.0.0.1, a free port, serving every session) and watches its stderr.
:meth:`Target.session` opens a :class:`Connection`: :meth:`Connection.send` writes
one case's bytes exactly as given (a stdio line, a POST body with the case's
headers, a WebSocket frame) and
:attr:`Connection.events` yields what came back:

- :class:`Received`: one message the server wrote (a stdout line, an SSE
  ``data``, a JSON body, a text frame), with the case it answers when the
  transport tells (a POST's own response);
- :class:`Broken`: the session or the process is gone (a :data:`.checks.FAILURES`
  kind), or the server closed a WebSocket with the code the frame deserved
  (kind ``"closed-properly"``: a binary frame gets 1003, an oversized one 1009).

Nothing here decodes JSON-RPC: judging replies is :mod:`.checks`' job.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zlib
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx
import trio
import trio_websocket

from mcp_actors.transports.http.sse import SSEDecoder
from mcp_actors.transports.websocket import open_websocket

from .cases import Case

TRANSPORTS: Final = ("stdio", "http", "http-hypercorn", "ws")
#: How long the fuzzer listens to a ``subscriptions/listen`` stream over HTTP (it stays
#: open until the client closes it), and how many it holds open at once.
_LISTEN_SECONDS: Final = 0.5
_LISTENS: Final = 4
_MAX_LINE: Final = 64 * 1024 * 1024
#: The last line of a traceback (plain, or inside an exception group's ``|`` frame).
_EXCEPTION_LINE: Final = re.compile(
    rb"^[ |+]*([A-Za-z_][\w.]*(?:Error|Exception|Group|Interrupt|Exit))\b"
)


@dataclass(frozen=True)
class Received:
    raw: bytes
    case: Case | None = None


@dataclass(frozen=True)
class Broken:
    kind: str
    detail: str
    case: Case | None = None


Event = Received | Broken


@dataclass
class StderrWatch:
    """Counts the tracebacks a server writes to stderr (a log flood is a finding too)."""

    tracebacks: int = 0
    exceptions: Counter[str] = field(default_factory=Counter)
    tail: bytearray = field(default_factory=bytearray)
    url: str | None = None
    listening: trio.Event = field(default_factory=trio.Event)

    async def watch(self, stream: trio.abc.ReceiveStream) -> None:
        pending = b""
        async for chunk in stream:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self._line(line)
            pending = pending[-65536:]
        self.listening.set()

    def _line(self, line: bytes) -> None:
        self.tail += line + b"\n"
        del self.tail[:-8192]
        if b"Traceback (most recent call last)" in line:
            self.tracebacks += 1
        elif match := _EXCEPTION_LINE.match(line):
            self.exceptions[match.group(1).decode()] += 1
        elif b" at " in line and line.startswith(b"mcp-actors: serving"):
            self.url = line.rsplit(b" at ", 1)[1].decode().strip()
            self.listening.set()


class Connection(ABC):
    """The raw wire to one session."""

    def __init__(self) -> None:
        self._send_events, self.events = trio.open_memory_channel[Event](10_000)
        self.revision: str | None = None
        self._writing = trio.Lock()

    def emit(self, event: Event) -> None:
        # Nobody reads a session that far behind (or at all): it is being torn down.
        with suppress(trio.WouldBlock, trio.ClosedResourceError):
            self._send_events.send_nowait(event)

    async def send(self, case: Case) -> None:
        """Write one case's bytes (one writer at a time: answers to the server's
        requests are written by the task that reads)."""
        async with self._writing:
            await self.write(case)

    @abstractmethod
    async def write(self, case: Case) -> None:
        """Write one case's bytes (called by :meth:`send`, one at a time)."""

    async def settle(self, timeout: float = 1.0) -> None:  # noqa: B027 (optional hook)
        """Wait (at most ``timeout``) until what was sent has been answered, where the
        transport can tell (HTTP: the POSTs' responses)."""


class Target(ABC):
    """A server to fuzz, started as ``mcp-actors run SERVER`` in a child process."""

    transport: str
    #: Whether a connection is a session before ``initialize`` (so a ping is answered).
    #: Not over Streamable HTTP: without a session id, a POST is refused (400).
    session_before_initialize = True

    def __init__(self, server: str, cwd: Path | None = None) -> None:
        self.server = server
        self.cwd = cwd
        self.stderr = StderrWatch()
        #: How many times the server process ended on its own (network targets),
        #: and how each time (exit code, the end of its stderr).
        self.crashes_seen = 0
        self.crash_reports: list[str] = []

    def command(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "mcp_actors.cli", "run", self.server, *extra]

    @abstractmethod
    def alive(self) -> bool:
        """Whether the server process is running."""

    @abstractmethod
    def session(self) -> AbstractAsyncContextManager[Connection]:
        """A new session's :class:`Connection`."""

    async def ready(self) -> None:  # noqa: B027 (optional hook)
        """Wait (bounded) until the server accepts sessions (after a restart)."""

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep the server running until cancelled (stdio: each session starts its own)."""
        task_status.started()
        await trio.sleep_forever()

    async def crashed_since(self, crashes_seen: int) -> bool:
        """Whether the server process died since :attr:`crashes_seen` was ``crashes_seen``."""
        return False


async def _spawn(
    command: Sequence[str], cwd: Path | None, env: dict[str, str] | None = None
) -> trio.Process:
    return await trio.lowlevel.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(cwd) if cwd else None,
        env={**os.environ, **env} if env else None,
    )


async def _stop(process: trio.Process, grace: float = 1.0) -> None:
    with trio.CancelScope(shield=True):
        if process.stdin is not None:
            await process.stdin.aclose()
        with trio.move_on_after(grace):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


# ---------------------------------------------------------------------------- stdio


class _StdioConnection(Connection):
    def __init__(self, process: trio.Process) -> None:
        super().__init__()
        self.process = process
        self.closing = False

    async def write(self, case: Case) -> None:
        assert self.process.stdin is not None
        try:
            await self.process.stdin.send_all(case.payload + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            self.emit(Broken("crashes", f"stdin broken: {error!r}", case))

    async def read(self) -> None:
        assert self.process.stdout is not None
        buffer = bytearray()
        async for chunk in self.process.stdout:
            buffer += chunk
            while (newline := buffer.find(b"\n")) >= 0:
                line = bytes(buffer[:newline]).rstrip(b"\r")
                del buffer[: newline + 1]
                if line:
                    self.emit(Received(line))
            if len(buffer) > _MAX_LINE:
                self.emit(Broken("non_jsonrpc", f"a stdout line over {_MAX_LINE} bytes"))
                buffer.clear()
        if not self.closing:
            with trio.move_on_after(2):
                await self.process.wait()
            self.emit(Broken("crashes", f"the server exited (code {self.process.returncode})"))


class StdioTarget(Target):
    """One ``mcp-actors run SERVER`` process per session, spoken to over its stdin/stdout."""

    transport = "stdio"

    def __init__(self, server: str, cwd: Path | None = None) -> None:
        super().__init__(server, cwd)
        self._current: trio.Process | None = None

    def alive(self) -> bool:
        return self._current is not None and self._current.returncode is None

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Connection]:
        process = await _spawn(self.command(), self.cwd)
        self._current = process
        connection = _StdioConnection(process)
        try:
            async with trio.open_nursery() as nursery:
                assert process.stderr is not None
                nursery.start_soon(self.stderr.watch, process.stderr)
                nursery.start_soon(connection.read)
                try:
                    yield connection
                finally:
                    connection.closing = True
                    await _stop(process)
                    nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                if process.returncode is None:
                    process.kill()
                    await process.wait()


# ---------------------------------------------------------------------------- network


class _NetworkTarget(Target):
    """One server process on 127.0.0.1 (a free port) for every session."""

    #: The ``--transport`` of ``mcp-actors run``, and the environment it runs in.
    run_transport = ""
    env: dict[str, str] | None = None

    def __init__(self, server: str, cwd: Path | None = None) -> None:
        super().__init__(server, cwd)
        self.process: trio.Process | None = None
        self.url = ""

    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def crashed_since(self, crashes_seen: int) -> bool:
        """Also True for a server that is running but no longer accepts connections:
        that process is killed (and restarted by :meth:`serve`), its stderr reported."""
        await trio.sleep(0.2)  # let the exit of a dying process be noticed
        if self.crashes_seen != crashes_seen or not self.alive():
            return True
        if await self._accepting():
            return False
        self.stderr.tail += b"\n[fuzz: the server stopped accepting connections; killed]\n"
        if self.process is not None:
            self.process.kill()
        return True

    async def _accepting(self) -> bool:
        host, port = self.url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
        with trio.move_on_after(5):
            try:
                stream = await trio.open_tcp_stream(host.strip("[]"), int(port))
            except OSError:
                return False
            await stream.aclose()
        return True

    async def ready(self) -> None:
        with trio.move_on_after(30):
            while not (self.alive() and self.stderr.listening.is_set() and self.stderr.url):
                await trio.sleep(0.05)
        self.url = self.stderr.url or self.url

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the server process (restarted by :meth:`restart` after a crash) until cancelled."""
        started = False
        while True:
            self.stderr.listening = trio.Event()
            self.stderr.url = None
            process = await _spawn(
                self.command("--transport", self.run_transport, "--port", "0"), self.cwd, self.env
            )
            self.process = process
            try:
                async with trio.open_nursery() as nursery:
                    assert process.stderr is not None
                    nursery.start_soon(self.stderr.watch, process.stderr)
                    with trio.fail_after(30):
                        await self.stderr.listening.wait()
                    if self.stderr.url is None or process.returncode is not None:
                        raise RuntimeError(
                            f"the server did not start:\n{self.stderr.tail.decode()}"
                        )
                    self.url = self.stderr.url
                    if not started:
                        started = True
                        task_status.started()
                    await process.wait()
                    nursery.cancel_scope.cancel()
            finally:
                await _stop(process)
            self.crashes_seen += 1
            tail = self.stderr.tail.decode(errors="replace")[-1500:]
            self.crash_reports.append(f"exit code {process.returncode}; stderr ends:\n{tail}")


class _HttpConnection(Connection):
    def __init__(self, url: str, nursery: trio.Nursery, post_timeout: float) -> None:
        super().__init__()
        self.url = url
        self.nursery = nursery
        self.post_timeout = post_timeout
        self.session_id: str | None = None
        self.deleted = False
        self.in_flight = trio.Semaphore(16)
        self.listens = trio.Semaphore(_LISTENS)
        self.pending = 0
        # Idle connections are dropped well before the server's keep-alive timeout (5 s):
        # one reused just as the server closes it is lost with its request, a race of
        # HTTP/1.1 itself, not a finding.
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=None), limits=httpx.Limits(keepalive_expiry=2.0)
        )

    async def write(self, case: Case) -> None:
        if case.category in ("ping", "discover"):
            self.nursery.start_soon(self._post, case)
            return
        if any(method == "subscriptions/listen" for _, method in case.requests):
            await self.listens.acquire()
            self.nursery.start_soon(self._listen, case)
            return
        await self.in_flight.acquire()
        self.pending += 1
        self.nursery.start_soon(self._post, case, True)

    async def settle(self, timeout: float = 1.0) -> None:
        with trio.move_on_after(timeout):
            while self.pending:
                await trio.sleep(0.005)

    def headers(self, case: Case | None = None) -> list[tuple[str, str | bytes]]:
        """A POST's headers: a modern case's own (routing headers, no session), else the
        legacy session's."""
        headers: list[tuple[str, str | bytes]] = [
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
        ]
        if case is not None and case.headers:
            return headers + list(case.headers)
        if self.session_id is not None:
            headers.append(("mcp-session-id", self.session_id))
        if self.revision is not None:
            headers.append(("mcp-protocol-version", self.revision))
        return headers

    async def _listen(self, case: Case) -> None:
        """A ``subscriptions/listen``: its stream read for a moment, then closed (which
        ends it: there is no other way over HTTP)."""
        try:
            with trio.move_on_after(_LISTEN_SECONDS):
                await self._post(case)
        finally:
            self.listens.release()

    async def _post(self, case: Case, limited: bool = False) -> None:
        # A ping's POST waits longer than the fuzzer waits for the ping's answer, so an
        # unanswered ping is reported as such, not as a POST cut short.
        timeout = self.post_timeout if limited else 10 * self.post_timeout
        try:
            with trio.move_on_after(timeout):
                request = self.client.build_request(
                    "POST", self.url, content=case.payload, headers=self.headers(case)
                )
                response = await self.client.send(request, stream=True)
                try:
                    await self._response(case, response)
                finally:
                    await response.aclose()
        except httpx.HTTPError as error:
            self.emit(Broken("sessions_lost", f"HTTP {error!r}", case))
        finally:
            if limited:
                self.pending -= 1
                self.in_flight.release()

    async def _response(self, case: Case, response: httpx.Response) -> None:
        status = response.status_code
        kind = response.headers.get("content-type", "").split(";")[0].strip()
        if self.session_id is None and (new_id := response.headers.get("mcp-session-id")):
            self.session_id = new_id
        if kind == "text/event-stream" and status == 200:
            decoder = SSEDecoder()
            async for chunk in response.aiter_raw():
                for event in decoder.feed(chunk):
                    if event.data:
                        self.emit(Received(event.data, case))
            return
        body = await response.aread()
        if status == 404 and self.session_id is not None and not self.deleted:
            self.emit(
                Broken("sessions_lost", f"404 for session {self.session_id}: {body[:200]!r}", case)
            )
        elif status >= 500:
            self.emit(Broken("http_5xx", f"HTTP {status}: {body[:300]!r}", case))
        if body and (kind == "application/json" or status >= 400):
            self.emit(Received(body, case))
        elif status == 202 and body:
            self.emit(Broken("non_jsonrpc", f"a body on 202: {body[:200]!r}", case))

    async def delete(self) -> None:
        if self.session_id is None:
            return
        self.deleted = True
        with trio.move_on_after(5):
            with suppress(httpx.HTTPError):
                await self.client.delete(self.url, headers=self.headers())


class HttpTarget(_NetworkTarget):
    """``mcp-actors run SERVER --transport http``: every session a set of raw POSTs, to
    the lean front end or (``front_end="hypercorn"``) hypercorn's."""

    run_transport = "http"
    session_before_initialize = False

    def __init__(
        self,
        server: str,
        cwd: Path | None = None,
        post_timeout: float = 3.0,
        front_end: str = "lean",
    ) -> None:
        super().__init__(server, cwd)
        self.post_timeout = post_timeout
        self.transport = "http" if front_end == "lean" else f"http-{front_end}"
        self.env = {"MCP_ACTORS_HTTP_FRONT_END": front_end}

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Connection]:
        async with trio.open_nursery() as nursery:
            connection = _HttpConnection(self.url, nursery, self.post_timeout)
            try:
                yield connection
            finally:
                with trio.CancelScope(shield=True):
                    await connection.delete()
                    nursery.cancel_scope.cancel()
                    await connection.client.aclose()


class _WebSocketConnection(Connection):
    #: Close codes a frame can deserve: unsupported data (a binary frame), invalid
    #: payload (bad UTF-8 in a text frame), too big.
    PROPER = frozenset({1003, 1007, 1009})

    def __init__(self, socket: trio_websocket.WebSocketConnection) -> None:
        super().__init__()
        self.socket = socket
        self.last: Case | None = None

    async def write(self, case: Case) -> None:
        self.last = case
        message: str | bytes
        try:
            message = case.payload.decode("utf-8")
        except UnicodeDecodeError:
            # Not text: WebSocket cannot carry it in a text frame. One in ten goes as a
            # binary frame (which the server must refuse with 1003, ending the session);
            # the rest as text with the bad bytes replaced, so sessions last.
            if zlib.crc32(case.payload) % 10 == 0:
                message = case.payload
            else:
                message = case.payload.decode("utf-8", "replace")
        with suppress(trio_websocket.ConnectionClosed):  # the reader reports why
            await self.socket.send_message(message)

    async def read(self) -> None:
        try:
            while True:
                message = await self.socket.get_message()
                if isinstance(message, bytes):
                    self.emit(Broken("non_jsonrpc", f"a binary frame: {message[:200]!r}"))
                else:
                    self.emit(Received(message.encode()))
        except trio_websocket.ConnectionClosed as closed:
            code = closed.reason.code if closed.reason is not None else None
            why = f"closed {code} {closed.reason.reason if closed.reason else ''}"
            proper = code in self.PROPER and self.last is not None
            self.emit(Broken("closed-properly" if proper else "sessions_lost", why, self.last))


class WebSocketTarget(_NetworkTarget):
    """``mcp-actors run SERVER --transport ws``: a connection per session."""

    transport = run_transport = "ws"

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Connection]:
        async with (
            open_websocket(self.url, subprotocols=["mcp"], max_message_size=_MAX_LINE) as socket,
            trio.open_nursery() as nursery,
        ):
            connection = _WebSocketConnection(socket)
            nursery.start_soon(connection.read)
            try:
                yield connection
            finally:
                nursery.cancel_scope.cancel()


def make_target(transport: str, server: str, cwd: Path | None = None) -> Target:
    """The target for ``transport`` (one of :data:`TRANSPORTS`) serving ``server``."""
    if transport == "stdio":
        return StdioTarget(server, cwd)
    if transport == "http":
        return HttpTarget(server, cwd)
    if transport == "http-hypercorn":
        return HttpTarget(server, cwd, front_end="hypercorn")
    if transport == "ws":
        return WebSocketTarget(server, cwd)
    raise ValueError(f"unknown transport {transport!r} (one of {', '.join(TRANSPORTS)})")
