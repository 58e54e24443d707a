"""A short fixed-seed fuzz run per transport: nothing a peer sends may hurt the server.

The same fuzzer as ``benchmarks/fuzz.py`` (the long run), a few hundred cases per
transport against the ``everything`` plugin: the process lives, every session
answers a ping after each window of cases, stdout carries only JSON-RPC, every
reply is valid against the negotiated revision's schema, and no Python traceback
text reaches the wire. A failure lists each finding with its culprit case.
"""

from __future__ import annotations

import pytest

from conftest import TESTS
from fuzzing.checks import FAILURES
from fuzzing.run import fuzz
from fuzzing.targets import TRANSPORTS, make_target

MESSAGES = 300
SEED = 20251125


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_fuzzed_server_survives_and_answers_only_valid_json_rpc(transport: str) -> None:
    target = make_target(transport, "everything", cwd=TESTS)
    report = await fuzz(
        target,
        messages=MESSAGES,
        seed=SEED,
        ping_every=20,
        time_limit=120,
        max_triage=5,
        oversized_bytes=64 * 1024,
    )
    counts = {name: getattr(report, name) for name in FAILURES}
    findings = "\n".join(
        f"{f.kind} [{f.culprit}] {f.sample}\n    {f.detail[:300]!r}" for f in report.findings
    )
    assert report.messages >= MESSAGES, f"only {report.messages} cases sent"
    assert report.failures == 0, f"{transport}: {counts}\n{findings}"
