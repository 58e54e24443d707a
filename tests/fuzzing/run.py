"""The fuzz loop: sessions of windows of cases, each window proved harmless by a ``ping``.

:func:`fuzz` starts the target, learns what the server offers (one clean
session listing its tools, prompts, resources and templates), then until
``messages`` cases are sent (or ``time_limit`` passes) opens sessions, each at
a revision drawn from the seed. A legacy session: sometimes a few cases before
``initialize``, then the handshake, then windows of ``ping_every`` cases, each
followed by a ``ping`` that must be answered within ``ping_timeout``; requests
the server sends us (sampling, elicitation, roots, ping) are answered, sometimes
badly. A session of the modern era (2026-07-28, :data:`MODERN_SHARE` of them) has
no handshake and no ``ping``: a proper ``server/discover`` proves it alive, and
what the server answers (``input_required`` results, task ids) is followed up.

When a window ends the session (the process died, the session or connection was
dropped, the ping went unanswered), :func:`triage` replays its cases one by one
on a fresh session, each followed by a ping, to name the culprit; past
``max_triage`` replays, the window's categories are reported instead. A run
ends with one more clean session and ping.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

import trio

from mcp_actors.transports.abc import TransportClosed

from .cases import WEIGHTS, Case, CaseGenerator, Catalog
from .checks import LEGACY_REVISIONS, ReplyChecker, Report
from .modern import MODERN, readable, routed_revision
from .targets import Broken, Connection, Received, Target

_NO_REVISION = None
#: The share of sessions of the modern era (the rest: a legacy revision each).
MODERN_SHARE = 0.4


class SessionDown(Exception):
    """The session ended under us: ``kind`` (a failure counter, or "closed-properly")."""

    def __init__(self, kind: str, detail: str, case: Case | None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.case = case


class FuzzSession:
    """One session's bookkeeping: which request ids mean which method, replies checked."""

    def __init__(
        self,
        connection: Connection,
        checker: ReplyChecker,
        generator: CaseGenerator,
        answers: CaseGenerator,
    ) -> None:
        self.connection = connection
        self.checker = checker
        self.generator = generator
        self.answers = answers
        self.revision: str | None = _NO_REVISION
        self.window: list[Case] = []
        self.by_id: dict[str, tuple[Case, str]] = {}
        self.waiting: dict[str, trio.Event] = {}
        self.replies: dict[str, Any] = {}
        self.down: SessionDown | None = None
        self.down_event = trio.Event()

    async def send(self, case: Case) -> None:
        if self.down is not None:
            raise self.down
        self.window.append(case)
        for request_id, method in case.requests:
            self.by_id[_key(request_id)] = (case, method)
        await self.connection.send(case)

    async def request(self, case: Case, timeout: float) -> Any:
        """Send a request case and wait for its reply (None: no reply in time)."""
        ((request_id, _),) = case.requests
        key = _key(request_id)
        self.waiting[key] = done = trio.Event()
        await self.send(case)
        with trio.move_on_after(timeout):
            async with trio.open_nursery() as nursery:

                async def until_down() -> None:
                    await self.down_event.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(until_down)
                await done.wait()
                nursery.cancel_scope.cancel()
        self.waiting.pop(key, None)
        if self.down is not None:
            raise self.down
        return self.replies.pop(key, None)

    async def consume(self) -> None:
        """Check everything the server sends; answer its requests; note pings answered."""
        async for event in self.connection.events:
            if isinstance(event, Broken):
                self._went_down(event)
                continue
            await self._received(event)

    def _went_down(self, event: Broken) -> None:
        if event.kind not in ("sessions_lost", "crashes", "closed-properly"):
            suspects = [event.case] if event.case is not None else list(self.window)
            self.checker.report.fail(event.kind, suspects, event.detail)
            return
        if self.down is None:  # the process or the session is gone
            self.down = SessionDown(event.kind, event.detail, event.case)
            self.down_event.set()

    async def _received(self, event: Received) -> None:
        raw = event.raw
        in_reply_to: dict[str, Any] | str | None = None
        suspects: list[Case] = [event.case] if event.case is not None else list(self.window)
        peeked = _peek(raw)
        if isinstance(peeked, dict) and "method" not in peeked and "id" in peeked:
            known = self.by_id.get(_key(peeked["id"]))
            if known is not None:
                request = readable(known[0].payload)
                in_reply_to = request if isinstance(request, dict) else known[1]
                suspects = [known[0]] if event.case is None else suspects
                self.generator.observe(request, peeked)
        revision = self.revision
        if event.case is not None and event.case.headers:  # (HTTP: as its headers route it)
            revision = routed_revision(event.case.headers, LEGACY_REVISIONS)
        message = self.checker.check(raw, revision, suspects, in_reply_to)
        if not isinstance(message, dict):
            return
        if "method" in message and "id" in message:  # a request from the server
            if self.revision == MODERN:
                return  # (none in this era: the checker failed it)
            answer = self.answers.answer(message)
            if answer is not None:
                self.checker.report.server_requests_answered += 1
                await self.connection.send(answer)
            return
        if "method" not in message and "id" in message:
            key = _key(message["id"])
            if key in self.waiting:
                self.replies[key] = message
                self.waiting.pop(key).set()


def _key(request_id: Any) -> str:
    return json.dumps(request_id, sort_keys=True)


def _peek(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None


async def _session(
    target: Target,
    report: Report,
    generator: CaseGenerator,
    answers: CaseGenerator,
    revision: str,
    body: Any,
) -> Any:
    """Run ``body(session)`` on a new session of ``target``; returns what it returns.

    Raises the :data:`SESSION_FAILURES` that ended the session unwrapped from the
    exception groups of the nurseries it went through.
    """
    try:
        async with target.session() as connection, trio.open_nursery() as nursery:
            session = FuzzSession(connection, ReplyChecker(report), generator, answers)
            nursery.start_soon(session.consume)
            try:
                return await body(session, revision)
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        failure = _first_failure(group)
        if failure is None:
            raise
        raise failure from None


#: What ends a session without being a bug of the fuzzer (a refused WebSocket handshake
#: is a TransportClosed).
SESSION_FAILURES = (
    SessionDown,
    OSError,
    TransportClosed,
    trio.TooSlowError,
    trio.BrokenResourceError,
)


def _first_failure(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    for leaf in group.exceptions:
        if isinstance(leaf, BaseExceptionGroup):
            if (found := _first_failure(leaf)) is not None:
                return found
        elif isinstance(leaf, SESSION_FAILURES):
            return leaf
    return None


async def handshake(session: FuzzSession, revision: str, timeout: float) -> None:
    """``initialize`` at ``revision`` and ``notifications/initialized``; raises SessionDown.
    The modern era has no handshake: the session is only set to draw from it."""
    session.generator.start_session(revision)
    session.answers.start_session(revision)
    if revision == MODERN:
        session.revision = session.connection.revision = revision
        return
    init = session.generator.initialize()
    reply = await session.request(init, timeout)
    result = reply.get("result") if isinstance(reply, dict) else None
    if not isinstance(result, dict) or result.get("protocolVersion") != revision:
        raise SessionDown("ping_timeouts", f"initialize at {revision} answered {reply!r}", init)
    session.revision = revision
    session.connection.revision = revision
    await session.send(session.generator.initialized())


async def prove_alive(session: FuzzSession, timeout: float) -> None:
    """A ping must come back, exactly as the spec says (the modern era: a
    ``server/discover`` naming the version); raises SessionDown otherwise."""
    await session.connection.settle()
    if session.revision == MODERN:
        discover_id, discover = session.generator.discover()
        reply = await session.request(discover, timeout)
        result = reply.get("result") if isinstance(reply, dict) else None
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        if not isinstance(versions, list) or MODERN not in versions:
            raise SessionDown("ping_timeouts", f"discover {discover_id} answered {reply!r}", None)
        return
    ping_id, ping = session.generator.ping()
    reply = await session.request(ping, timeout)
    if reply != {"jsonrpc": "2.0", "id": ping_id, "result": {}}:
        raise SessionDown("ping_timeouts", f"ping {ping_id} answered {reply!r}", None)


async def discover(target: Target, timeout: float) -> Catalog:
    """What the server offers: tools (with input schemas), prompts, resources, templates."""
    catalog = Catalog()
    report = Report(target.transport, 0)
    rng = random.Random(0)
    generator, answers = CaseGenerator(rng, catalog), CaseGenerator(rng, catalog)

    async def listing(session: FuzzSession, revision: str) -> None:
        await handshake(session, revision, timeout)
        for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
            case = generator.request(method, {}, "discover")
            reply = await session.request(case, timeout)
            result = reply.get("result", {}) if isinstance(reply, dict) else {}
            for tool in result.get("tools", []):
                catalog.tools[tool["name"]] = tool.get("inputSchema", {})
            for prompt in result.get("prompts", []):
                catalog.prompts[prompt["name"]] = [a["name"] for a in prompt.get("arguments", [])]
            catalog.resources.extend(r["uri"] for r in result.get("resources", []))
            catalog.templates.extend(t["uriTemplate"] for t in result.get("resourceTemplates", []))

    await _session(target, report, generator, answers, LEGACY_REVISIONS[0], listing)
    if report.failures or not catalog.tools:
        raise RuntimeError(f"could not list what the server offers: {report.findings}")
    return catalog


async def triage(
    target: Target, window: Sequence[Case], revision: str, seed: int, timeout: float
) -> tuple[Case, SessionDown] | None:
    """Replay ``window`` case by case (a ping after each) on fresh sessions: the first
    case after which the session is down or the ping unanswered, and how. A case the
    server rightly answers by closing the connection (a WebSocket binary frame) is
    stepped over: the replay goes on in a new session."""
    scratch = Report(target.transport, seed)
    rng = random.Random(seed)
    generator = CaseGenerator(rng, Catalog(), first_id=10**12)
    answers = CaseGenerator(rng, Catalog())
    remaining = list(window)

    async def replay(session: FuzzSession, revision: str) -> None:
        await handshake(session, revision, timeout)
        while remaining:
            await session.send(remaining[0])
            await prove_alive(session, timeout)
            remaining.pop(0)

    while remaining:
        await target.ready()
        try:
            await _session(target, scratch, generator, answers, revision, replay)
        except SESSION_FAILURES as error:
            if not remaining:
                return None
            case = remaining.pop(0)
            if not isinstance(error, SessionDown):
                return case, SessionDown("sessions_lost", repr(error), case)
            if error.kind != "closed-properly":
                return case, error
    return None


async def fuzz(
    target: Target,
    *,
    messages: int,
    seed: int,
    ping_every: int = 20,
    session_messages: int = 2000,
    ping_timeout: float = 10.0,
    time_limit: float = 3600.0,
    max_triage: int = 30,
    oversized_bytes: int = 4 * 1024 * 1024 + 1024,
    weights: Mapping[str, float] = WEIGHTS,
) -> Report:
    """Fuzz ``target`` with ``messages`` cases drawn from ``seed``; returns the tally.

    ``weights`` is the mix of case categories (default :data:`.cases.WEIGHTS`).
    """
    report = Report(target.transport, seed)
    async with trio.open_nursery() as nursery:
        await nursery.start(target.serve)
        catalog = await discover(target, ping_timeout)
        rng = random.Random(seed)
        generator = CaseGenerator(rng, catalog, oversized_bytes=oversized_bytes, weights=weights)
        answers = CaseGenerator(random.Random(seed + 1), catalog)
        with trio.move_on_after(time_limit):
            while report.messages < messages:
                modern = rng.random() < MODERN_SHARE
                revision = MODERN if modern else rng.choice(LEGACY_REVISIONS)
                budget = min(session_messages, messages - report.messages)
                await _one_session(
                    target,
                    report,
                    generator,
                    answers,
                    revision,
                    budget,
                    ping_every,
                    ping_timeout,
                    max_triage,
                )

        async def final(session: FuzzSession, revision: str) -> None:
            await handshake(session, revision, ping_timeout)
            await prove_alive(session, ping_timeout)

        await target.ready()
        try:
            await _session(target, report, generator, answers, LEGACY_REVISIONS[0], final)
        except SESSION_FAILURES as down:
            report.fail("ping_timeouts", [Case("final-ping", b"")], f"final ping: {down!r}")
        report.stderr_tracebacks = target.stderr.tracebacks
        report.crash_reports = target.crash_reports
        report.stderr_exceptions = target.stderr.exceptions
        nursery.cancel_scope.cancel()
    report.finish()
    return report


async def _one_session(
    target: Target,
    report: Report,
    generator: CaseGenerator,
    answers: CaseGenerator,
    revision: str,
    budget: int,
    ping_every: int,
    ping_timeout: float,
    max_triage: int,
) -> None:
    rng = generator.rng
    # Before initialize: anything but an initialize (which would open the session itself).
    early_count = rng.randint(1, 3) if rng.random() < 0.15 and revision != MODERN else 0
    early = [generator.next_case(exclude=("initialize-again",)) for _ in range(early_count)]
    window: list[Case] = []
    crashes_before = target.crashes_seen

    async def body(session: FuzzSession, revision: str) -> None:
        nonlocal window
        report.sessions += 1
        report.modern_sessions += revision == MODERN
        for case in early:  # before initialize: judged against any revision
            await session.send(case)
            report.messages += 1
        if early and target.session_before_initialize:
            await prove_alive(session, ping_timeout)
        await handshake(session, revision, ping_timeout)
        sent = 0
        while sent < budget:
            session.window = []
            window = [generator.next_case() for _ in range(min(ping_every, budget - sent))]
            with trio.fail_after(ping_timeout):  # a server that stops reading
                for case in window:
                    await session.send(case)
                    report.messages += 1
            sent += len(window)
            await prove_alive(session, ping_timeout)
            report.pings += 1

    await target.ready()
    try:
        await _session(target, report, generator, answers, revision, body)
    except SESSION_FAILURES as error:
        if isinstance(error, SessionDown):
            down = error
        else:
            kind = "ping_timeouts" if isinstance(error, trio.TooSlowError) else "sessions_lost"
            down = SessionDown(kind, repr(error), None)
        suspects = window or early
        if down.kind == "closed-properly":
            report.proper_closes += 1
            return
        kind = "crashes" if await target.crashed_since(crashes_before) else down.kind
        culprit: Sequence[Case] = suspects
        if len(culprit) > 1 and report.triaged < max_triage:
            report.triaged += 1
            found = await triage(target, culprit, revision, report.seed, ping_timeout)
            if found is not None:
                culprit = [found[0]]
        report.fail(kind, culprit, f"{down.detail}")
