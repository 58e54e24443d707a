"""What must hold of every reply a fuzzed server sends, and the tally of a run.

:meth:`ReplyChecker.check` judges one message the server wrote: it parses as
JSON, is a JSON-RPC message valid against the official schema of the revision
the session negotiated (:func:`wire.validate_message`; before ``initialize``,
against any revision the server speaks; in a session of the modern era, against
the 2026-07-28 schema and the tasks extension's), its result fits the method it
answers when we know which, the modern era's server sends no request (it asks
inside results), and no string in it looks like Python leaking out: a
``Traceback``, a ``File "...", line N`` frame, a ``path.py:N`` location, or the
name of a Python exception class (``UnicodeDecodeError``, ``RecursionError``...).

A :class:`Report` counts what a run sent and saw; every failure also becomes a
:class:`Finding` naming the culprit case (or the cases it may be) and a sample.
"""

from __future__ import annotations

import builtins
import json
import re
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_actors.testing.wire import validate_message

from .cases import Case
from .modern import MODERN

#: The revisions of the legacy era (a session opened by ``initialize``), newest first.
LEGACY_REVISIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED_REVISIONS: Final = (*LEGACY_REVISIONS, MODERN)

_EXCEPTION_NAMES: Final = sorted(
    {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and not issubclass(value, Warning)
    }
    | {"DecodeError", "ValidationError", "TrioInternalError", "McpError", "ProtocolViolation"}
)
PYTHON_LEAK: Final = re.compile(
    r"Traceback \(most recent call last\)"
    r'|File "[^"]*", line \d+'
    r"|\.py:\d+"
    r"|\b(?:" + "|".join(_EXCEPTION_NAMES) + r")\b"
)

#: The failure counters of a :class:`Report` (each must stay 0).
FAILURES: Final = (
    "crashes",
    "sessions_lost",
    "ping_timeouts",
    "schema_invalid",
    "non_jsonrpc",
    "tracebacks",
    "http_5xx",
)
_SAMPLES_PER_KIND: Final = 5
_SUSPECTS_SHOWN: Final = 25


@dataclass
class Finding:
    """One failure: what went wrong, which case(s) caused it, and what was seen."""

    kind: str
    culprit: str
    detail: str
    sample: str
    #: The suspect cases, each as :meth:`Case.describe` shows it (a window: all of them).
    cases: list[str] = field(default_factory=list)


@dataclass
class Report:
    """The tally of one fuzz run over one transport."""

    transport: str
    seed: int
    messages: int = 0
    pings: int = 0
    replies: int = 0
    sessions: int = 0
    #: Of :attr:`sessions`, those of the modern era (2026-07-28).
    modern_sessions: int = 0
    server_requests_answered: int = 0
    proper_closes: int = 0
    stderr_tracebacks: int = 0
    crashes: int = 0
    sessions_lost: int = 0
    ping_timeouts: int = 0
    schema_invalid: int = 0
    non_jsonrpc: int = 0
    tracebacks: int = 0
    http_5xx: int = 0
    triaged: int = 0
    started: float = field(default_factory=time.monotonic)
    wall: float = 0.0
    culprits: Counter[tuple[str, str]] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    stderr_exceptions: Counter[str] = field(default_factory=Counter)
    #: How the server process ended each time it died (network targets).
    crash_reports: list[str] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return sum(getattr(self, name) for name in FAILURES)

    @property
    def rate(self) -> float:
        return self.messages / self.wall if self.wall > 0 else 0.0

    def fail(self, kind: str, suspects: Sequence[Case], detail: str, *, count: bool = True) -> None:
        """Count one failure of ``kind`` (a :data:`FAILURES` name) caused by ``suspects``."""
        if count:
            setattr(self, kind, getattr(self, kind) + 1)
        culprit = culprit_of(suspects)
        self.culprits[(kind, culprit)] += 1
        if (
            sum(1 for f in self.findings if f.kind == kind and f.culprit == culprit)
            < _SAMPLES_PER_KIND
        ):
            sample = suspects[-1].describe() if len(suspects) == 1 else f"{len(suspects)} cases"
            cases = [case.describe(120) for case in suspects[:_SUSPECTS_SHOWN]]
            self.findings.append(Finding(kind, culprit, detail[:600], sample, cases))

    def finish(self) -> None:
        self.wall = time.monotonic() - self.started


def culprit_of(suspects: Sequence[Case]) -> str:
    """The category of the one case to blame, or ``window(a,b,...)`` when it is not known."""
    if len(suspects) == 1:
        return suspects[0].category
    categories = sorted({c.category for c in suspects} - {"valid-request", "valid-notification"})
    return f"window({','.join(categories) or 'valid'})"


def strings(value: Any) -> Iterator[str]:
    """Every string (keys too) inside a decoded JSON value."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def python_leak(text: str) -> str | None:
    """The first piece of ``text`` that looks like Python internals, if any."""
    match = PYTHON_LEAK.search(text)
    return match.group(0) if match else None


def _legacy_ping_answer(reply: Any, in_reply_to: Mapping[str, Any] | str | None) -> bool:
    """Whether ``reply`` is the legacy answer to a ``ping`` (one without a modern
    ``_meta``), which stdio and WebSocket rightly give before any ``initialize``: a
    modern session's connection is a legacy one not yet initialized, too."""
    method = in_reply_to.get("method") if isinstance(in_reply_to, Mapping) else in_reply_to
    return isinstance(reply, dict) and reply.get("result") == {} and method in ("ping", None)


class ReplyChecker:
    """Checks the messages of one session; failures go to ``report``."""

    def __init__(self, report: Report) -> None:
        self.report = report

    def check(
        self,
        raw: bytes,
        revision: str | None,
        suspects: Sequence[Case],
        in_reply_to: Mapping[str, Any] | str | None = None,
    ) -> Any:
        """Judge one message the server sent; returns it decoded (None if it is not JSON).
        ``in_reply_to``: the request it answers (or its method), when known."""
        report = self.report
        report.replies += 1
        try:
            decoded = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as error:
            leak = python_leak(raw.decode("utf-8", "replace"))
            if leak:
                report.fail("tracebacks", suspects, f"{leak!r} in {raw[:300]!r}")
            report.fail("non_jsonrpc", suspects, f"not JSON ({error}): {raw[:300]!r}")
            return None
        for text in strings(decoded):
            if leak := python_leak(text):
                report.fail("tracebacks", suspects, f"{leak!r} in {text[:400]!r}")
                break
        if revision == MODERN and isinstance(decoded, dict) and {"method", "id"} <= decoded.keys():
            report.fail("schema_invalid", suspects, f"a request in the modern era: {raw[:300]!r}")
            return decoded
        revisions = (revision,) if revision is not None else SUPPORTED_REVISIONS
        if revision == MODERN and _legacy_ping_answer(decoded, in_reply_to):
            revisions = LEGACY_REVISIONS
        problems = []
        for candidate in revisions:
            try:
                validate_message(candidate, decoded, in_reply_to=in_reply_to)
                break
            except AssertionError as error:
                problems.append(str(error))
        else:
            report.fail("schema_invalid", suspects, problems[0])
        return decoded
