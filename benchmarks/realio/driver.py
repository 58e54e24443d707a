"""The load generator: the public benchmark's k6 session loop, from one cheap process.

Each of ``vus`` virtual users (50) runs upstream's k6 iteration in a closed loop, on
its own keep-alive connection:

1. for each tool (``search_products``, ``get_user_cart``, ``checkout``), one whole
   session: ``initialize``; ``notifications/initialized``; the ``tools/call``;
   ``DELETE`` (only when the server gave a session id: the reference servers are
   stateless and give none);
2. one more session whose request is ``tools/list``;
3. a pause of ``think`` seconds (50 ms).

Counted as k6 counts them: **req/s** is ``initialize`` + ``tools/call`` + ``tools/list``
per second (k6's ``mcp_requests``; notifications and ``DELETE`` are "protocol
overhead"), latency is the ``tools/call``'s (p50/p99 over every call), and an
**error** is a transport error, a status other than 2xx, a JSON-RPC error, an
``isError`` result, or a result that fails k6's checks (e.g. ``search_products``
finds 2,251 products and returns 10). Users run ``warmup`` seconds unmeasured, then
until ``sessions`` sessions were measured; the users' own numbers (``user-000NN``)
are k6's. Then no request is sent any more, and the run waits for the answers still
due, so that the server is idle when it returns.

Why it is not the bottleneck: requests are pre-built bytes, responses are parsed by
httptools (llhttp), and one ``epoll`` loop serves every user — no task, no thread,
no request object per request. :func:`run` also reports the generator's own CPU
time; the harness checks it against a fixed-reply server (``--check-driver``).
Bounded: ``sessions`` and ``timeout`` (no reply for that long fails the run).
"""

from __future__ import annotations

import heapq
import os
import select
import socket
import time
from collections.abc import Callable
from typing import Any, Final

import attrs
import msgspec
from httptools import HttpResponseParser

ACCEPT: Final = b"application/json, text/event-stream"
PROTOCOL_VERSION: Final = "2024-11-05"
_decode = msgspec.json.Decoder().decode


def _body(payload: dict[str, Any]) -> bytes:
    return msgspec.json.encode(payload)


INITIALIZE: Final = _body(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "k6-bench", "version": "1.0"},
        },
    }
)
INITIALIZED: Final = _body({"jsonrpc": "2.0", "method": "notifications/initialized"})
TOOLS_LIST: Final = _body({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})


def tool_call(name: str, arguments: dict[str, Any]) -> bytes:
    """A ``tools/call`` request's body."""
    return _body(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )


def _text_of(result: Any) -> Any:
    return _decode(result["content"][0]["text"])


def _search_ok(result: Any) -> bool:
    found = _text_of(result)
    return bool(
        found["total_found"] == 2251
        and len(found["products"]) == 10
        and len(found["top10_popular_ids"]) == 10
    )


def _cart_ok(result: Any) -> bool:
    cart = _text_of(result)
    return bool(cart["user_id"] and cart["cart"]["items"] and len(cart["recent_history"]) == 5)


def _checkout_ok(result: Any) -> bool:
    order = _text_of(result)
    return bool(order["status"] == "confirmed" and order["total"] > 0 and order["items_count"] == 2)


def _list_ok(result: Any) -> bool:
    return bool(result["tools"])


@attrs.frozen
class Step:
    """One session of the iteration: its request, and k6's check of the result."""

    name: str
    request: bytes
    check: Callable[[Any], bool]


def iteration(user: int) -> tuple[Step, ...]:
    """Virtual user ``user``'s (1-based) iteration, as upstream's k6 script builds it."""
    user_id = f"user-{user % 1000:05d}"
    items = [{"product_id": 42, "quantity": 2}, {"product_id": 1337, "quantity": 1}]
    search = {"category": "Electronics", "min_price": 50.0, "max_price": 500.0, "limit": 10}
    return (
        Step("search_products", tool_call("search_products", search), _search_ok),
        Step("get_user_cart", tool_call("get_user_cart", {"user_id": user_id}), _cart_ok),
        Step("checkout", tool_call("checkout", {"user_id": user_id, "items": items}), _checkout_ok),
        Step("tools/list", TOOLS_LIST, _list_ok),
    )


@attrs.define
class Tally:
    """What a run measured (from the end of the warm-up)."""

    sessions: int = 0
    #: k6's ``mcp_requests``: initialize + tools/call + tools/list.
    requests: int = 0
    http_requests: int = 0
    errors: int = 0
    #: The first few errors, as text.
    error_samples: list[str] = attrs.field(factory=list)
    #: Each ``tools/call``'s latency, nanoseconds.
    call_latencies: list[int] = attrs.field(factory=list)
    seconds: float = 0.0
    driver_cpu_seconds: float = 0.0

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what)

    def percentile_ms(self, fraction: float) -> float:
        ordered = sorted(self.call_latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] / 1e6

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


class _Response:
    """httptools' callbacks for one response."""

    __slots__ = ("body", "complete", "keep_alive", "parser", "session_id")

    def __init__(self) -> None:
        self.body = bytearray()
        self.complete = False
        self.keep_alive = False
        self.session_id: bytes | None = None
        self.parser: Any = None

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"mcp-session-id":
            self.session_id = value

    def on_body(self, data: bytes) -> None:
        self.body += data

    def on_message_complete(self) -> None:
        self.complete = True
        # Read now: llhttp forgets it once it has reset for the next message.
        self.keep_alive = self.parser.should_keep_alive()
        self.parser = None


def json_rpc_of(body: bytes | bytearray) -> Any:
    """The JSON-RPC message in a response body: JSON, or the first SSE ``data:`` line's."""
    text = bytes(body).strip()
    if text.startswith(b"{"):
        return _decode(text)
    for line in text.splitlines():
        if line.startswith(b"data:") and line[5:].strip().startswith(b"{"):
            return _decode(line[5:].strip())
    raise ValueError(f"no JSON-RPC message in {text[:100]!r}")


# The phases of a session.
_INIT, _NOTIFY, _CALL, _DELETE = range(4)


@attrs.define(eq=False)
class _User:
    number: int
    sock: socket.socket
    steps: tuple[Step, ...]
    step: int = 0
    phase: int = _INIT
    session_id: bytes | None = None
    sent_at: int = 0
    #: A request of its is waiting for its answer.
    waiting: bool = False
    response: _Response = attrs.field(factory=_Response)
    parser: Any = None

    def __attrs_post_init__(self) -> None:
        self.new_parser()

    def new_parser(self) -> None:
        """A fresh response and parser, for the next response."""
        self.response = _Response()
        self.parser = self.response.parser = HttpResponseParser(self.response)


@attrs.define(eq=False)
class Driver:
    """The loop of every virtual user against ``host:port`` ``path`` (see the module docstring)."""

    host: str
    port: int
    path: str = "/mcp"
    vus: int = 50
    think: float = 0.05
    timeout: float = 30.0
    tally: Tally = attrs.field(init=False, factory=Tally)
    _measuring: bool = attrs.field(init=False, default=False)
    #: Once the sessions are measured: no request is sent any more, and the run waits
    #: for the answers still due (a server still at work would race the next reseed).
    _draining: bool = attrs.field(init=False, default=False)
    _in_flight: int = attrs.field(init=False, default=0)
    _epoll: Any = attrs.field(init=False, default=None)
    #: Each user by its socket's fd, and by its number.
    _users: dict[int, _User] = attrs.field(init=False, factory=dict)
    _numbered: dict[int, _User] = attrs.field(init=False, factory=dict)

    def _request(self, user: _User, method: bytes, body: bytes | None) -> None:
        if self._draining:
            return
        head = [
            b"%s %s HTTP/1.1\r\nHost: %s:%d\r\n"
            % (method, self.path.encode(), self.host.encode(), self.port)
        ]
        if user.session_id is not None:
            head.append(b"Mcp-Session-Id: %s\r\n" % user.session_id)
        if body is not None:
            head.append(
                b"Content-Type: application/json\r\nAccept: %s\r\nContent-Length: %d\r\n"
                % (ACCEPT, len(body))
            )
        head.append(b"\r\n")
        data = b"".join(head) + (body or b"")
        user.sent_at = time.perf_counter_ns()
        user.sock.sendall(data)
        user.waiting = True
        self._in_flight += 1

    def _send_phase(self, user: _User) -> None:
        step = user.steps[user.step]
        if user.phase == _INIT:
            user.session_id = None
            self._request(user, b"POST", INITIALIZE)
        elif user.phase == _NOTIFY:
            self._request(user, b"POST", INITIALIZED)
        elif user.phase == _CALL:
            self._request(user, b"POST", step.request)
        else:
            self._request(user, b"DELETE", None)

    def _received(self, user: _User, status: int, response: _Response) -> bool:
        """Handle the response that came; True when the user's iteration is over."""
        if self._counting:
            self.tally.http_requests += 1
            self.tally.requests += user.phase in (_INIT, _CALL)
        step = user.steps[user.step]
        if user.phase == _INIT:
            user.session_id = response.session_id
            ok = self._checked(status, response.body, step.name + " initialize", None)
            user.phase = _NOTIFY if ok else _INIT
            return False if ok else self._next_step(user)
        if user.phase == _NOTIFY:
            if not 200 <= status < 300:
                self._fail(f"{step.name}: notifications/initialized answered {status}")
            user.phase = _CALL
            return False
        if user.phase == _CALL:
            if self._counting and step.name != "tools/list":
                self.tally.call_latencies.append(time.perf_counter_ns() - user.sent_at)
            self._checked(status, response.body, step.name, step.check)
            if self._counting:
                self.tally.sessions += 1
            if user.session_id is not None:
                user.phase = _DELETE
                return False
            return self._next_step(user)
        return self._next_step(user)  # DELETE's answer: its status is not checked (k6's)

    @property
    def _counting(self) -> bool:
        """Whether answers count now: measured, and not one drained after the end (errors
        count then too)."""
        return self._measuring and not self._draining

    def _next_step(self, user: _User) -> bool:
        user.phase = _INIT
        user.step = (user.step + 1) % len(user.steps)
        return user.step == 0

    def _fail(self, what: str) -> None:
        if self._measuring:
            self.tally.error(what)

    def _checked(
        self, status: int, body: bytearray, what: str, check: Callable[[Any], bool] | None
    ) -> bool:
        if not 200 <= status < 300:
            self._fail(f"{what}: HTTP {status}: {bytes(body[:200])!r}")
            return False
        try:
            message = json_rpc_of(body)
            if "error" in message:
                self._fail(f"{what}: JSON-RPC error {message['error']}")
                return False
            result = message["result"]
            if result.get("isError"):
                self._fail(f"{what}: isError {result.get('content')}")
                return False
            if check is not None and not check(result):
                self._fail(f"{what}: check failed: {bytes(body[:300])!r}")
                return False
        except (ValueError, KeyError, TypeError, IndexError) as error:
            self._fail(f"{what}: unreadable reply ({error}): {bytes(body[:200])!r}")
            return False
        return True

    def _connect(self, number: int) -> _User:
        sock = socket.create_connection((self.host, self.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        user = _User(number, sock, iteration(number))
        self._users[sock.fileno()] = user
        self._numbered[number] = user
        self._epoll.register(sock.fileno(), select.EPOLLIN)
        return user

    def _reconnect(self, user: _User, *, resume: bool) -> _User:
        """A new connection for ``user`` (the server closed its own), in the same place of
        its iteration; ``resume``: send its next request at once."""
        self._epoll.unregister(user.sock.fileno())
        del self._users[user.sock.fileno()]
        user.sock.close()
        fresh = self._connect(user.number)
        fresh.step, fresh.phase, fresh.session_id = user.step, user.phase, user.session_id
        if resume:
            self._send_phase(fresh)
        return fresh

    def run(
        self, *, warmup: float, sessions: int, at_edge: Callable[[], None] | None = None
    ) -> Tally:
        """Run the users ``warmup`` seconds unmeasured, then until ``sessions`` sessions
        were measured; the tally. ``at_edge()`` is called as the measured window opens
        and as it closes (to read what other processes used meanwhile, say)."""
        self._epoll = select.epoll()
        sleeping: list[tuple[float, int]] = []  # (wake-up time, user number)
        try:
            for number in range(1, self.vus + 1):
                self._send_phase(self._connect(number))
            started = time.monotonic()
            measure_from = started + warmup
            cpu_start = 0.0
            last_reply = started
            while not self._draining or self._in_flight:
                now = time.monotonic()
                if self._measuring and not self._draining and self.tally.sessions >= sessions:
                    self._draining = True
                    self.tally.seconds = now - started
                    self.tally.driver_cpu_seconds = _cpu() - cpu_start
                    if at_edge is not None:
                        at_edge()
                if not self._measuring and now >= measure_from:
                    self._measuring = True
                    if at_edge is not None:
                        at_edge()
                    started, cpu_start = now, _cpu()
                while sleeping and sleeping[0][0] <= now:
                    _, number = heapq.heappop(sleeping)
                    self._send_phase(self._numbered[number])
                wait = min(0.05, max(0.0, sleeping[0][0] - now)) if sleeping else 0.05
                events = self._epoll.poll(wait)
                if events:
                    last_reply = now
                elif now - last_reply > self.timeout:
                    raise TimeoutError(f"no reply for {self.timeout}s")
                for fd, _ in events:
                    user = self._users.get(fd)
                    if user is None:
                        continue
                    if self._on_readable(user):
                        heapq.heappush(sleeping, (now + self.think, user.number))
            return self.tally
        finally:
            for user in self._users.values():
                user.sock.close()
            self._epoll.close()

    def _answered(self, user: _User) -> None:
        if user.waiting:
            user.waiting = False
            self._in_flight -= 1

    def _on_readable(self, user: _User) -> bool:
        """Read what came for ``user``; True when it finished an iteration and sleeps."""
        try:
            data = user.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as error:
            data, reason = b"", str(error)
        else:
            reason = "the server closed the connection"
        if not data:
            self._answered(user)
            self._fail(f"{user.steps[user.step].name}: {reason}")
            user.phase = _INIT
            self._reconnect(user, resume=True)
            return False
        user.parser.feed_data(data)
        if not user.response.complete:
            return False
        self._answered(user)
        status = user.parser.get_status_code()
        response = user.response
        keep_alive = response.keep_alive
        user.new_parser()
        sleeps = self._received(user, status, response) and self.think > 0
        if not keep_alive:
            self._reconnect(user, resume=not sleeps)
        elif not sleeps:
            self._send_phase(user)
        return sleeps


def _cpu() -> float:
    times = os.times()
    return times.user + times.system
