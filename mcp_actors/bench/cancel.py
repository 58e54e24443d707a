"""The ``cancel`` workload: how long a ``notifications/cancelled`` takes to reach its handler.

Each round starts a call of the probe tool (see the cancellation contract in
:mod:`.runner`) with a progress token, waits up to 200 ms for the probe's progress
(the sign that the handler runs), writes the cancellation and notes the host's
monotonic clock, then polls the result tool (2 s at most) for the clock the probe
recorded when it was cancelled. The difference is one latency sample; a probe that
never reports is a failure of that round. Rounds run one at a time on the main
session, ``n`` of them at most, within the run's duration (1 s at least).
"""

from __future__ import annotations

import time
from typing import Any

import attrs
import trio

from ..protocol.jsonrpc import encode_cancellation
from .loops import Tally
from .measure import outcome
from .ticker import Ticker
from .wire import Peer, structured
from .workloads import BenchConfig, Workload

#: How long the probe has to report progress before its cancellation goes anyway.
_START_WAIT = 0.2
#: How long the result tool is polled for the probe's clock.
_OBSERVE_WAIT = 2.0


@attrs.define
class _Round:
    """One probe call on its way to being cancelled: what came back for it."""

    request_id: int
    progress_token: str
    started: trio.Event = attrs.field(factory=trio.Event)
    responses: list[Any] = attrs.field(factory=list)

    def on_progress(self, progress: Any) -> None:
        if progress.progress_token == self.progress_token:
            self.started.set()

    def on_response(self, message: Any, now: float) -> None:
        self.responses.append(message)

    def answered(self) -> int:
        """Answers to the cancelled call (a server should send none)."""
        return len([m for m in self.responses if m.id == self.request_id])


async def _start_probe(peer: Peer, config: BenchConfig, token: str) -> _Round:
    """Call the probe tool (it waits 30 s unless cancelled), watching for its progress."""
    peer.next_id += 1
    probe = _Round(peer.next_id, f"probe-{token}")
    peer.on_progress = probe.on_progress
    peer.on_response = probe.on_response
    prefix, suffix = peer.template(
        "tools/call",
        {
            "name": config.cancel_tool,
            "arguments": {"token": token, "seconds": 30},
            "_meta": {"progressToken": probe.progress_token},
        },
    )
    await peer.send(prefix + str(probe.request_id).encode() + suffix)
    return probe


async def _observed(peer: Peer, config: BenchConfig, token: str) -> Any:
    """The clock the probe recorded on cancellation (None if it has not within 2 s)."""
    with trio.move_on_after(_OBSERVE_WAIT):
        while True:
            value = structured(await peer.call_tool(config.cancel_result_tool, {"token": token}))
            if isinstance(value, dict) and value.get("observed") is not None:
                return value["observed"]
            await trio.sleep(0.005)
    return None


async def measure_cancellations(
    peer: Peer, config: BenchConfig, ticker: Ticker, workload: Workload
) -> dict[str, Any]:
    """Run the ``cancel`` workload on ``peer``; its figures (latency from the write of
    the cancellation to the handler seeing it, how many probes signalled their start,
    and answers that came for cancelled calls)."""
    tally = Tally()
    ticker.phase(workload.name, tally, config.duration)
    signals = {"progress": 0, "delay": 0}
    answered = 0
    deadline = trio.current_time() + max(config.duration, 1.0)
    run = f"{time.monotonic_ns():x}"
    while tally.done < workload.n and trio.current_time() < deadline:
        token = f"bench-{run}-{tally.done}"
        probe = await _start_probe(peer, config, token)
        with trio.move_on_after(_START_WAIT):
            await probe.started.wait()
        signals["progress" if probe.started.is_set() else "delay"] += 1
        cancellation = encode_cancellation(probe.request_id, "benchmark") + b"\n"
        sent = await peer.send_stamped(cancellation)
        observed = await _observed(peer, config, token)
        peer.on_progress = None
        answered += probe.answered()
        tally.done += 1
        if observed is None:
            tally.failed(f"{config.cancel_tool} never saw the cancellation (token {token})")
        else:
            tally.latencies.append(float(observed) - sent)
    result = outcome(tally, None)
    result["max_ms"] = round(max(tally.latencies) * 1000, 3) if tally.latencies else None
    return {**result, "started_signal": signals, "answered_after_cancel": answered}
