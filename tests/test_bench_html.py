"""``--html FILE`` and ``bench compare``: self-contained pages whose plots a browser renders.

The pages are opened in headless Chromium (Debian's ``chromium``, which ``.ci/run``
installs): the plots must be in the DOM it renders, each with its series drawn, and
the file must reference nothing outside itself.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import trio
from test_bench_defaults import REFERENCE, ROOT, bench

BENCH = (sys.executable, "-m", "mcp_actors.cli", "bench")
#: What would make a page fetch something: a URL, a source, a link, a CSS import.
EXTERNAL = re.compile(r"https?:|//[a-z]|\bsrc=|\bhref=|@import|url\(", re.IGNORECASE)


async def rendered(page: Path) -> str:
    """The DOM headless Chromium builds from ``page`` (a hang guard: 120 s)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium is not None, "Debian's chromium is needed: apt-get install -y chromium"
    with trio.fail_after(120):
        result = await trio.run_process(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    return result.stdout.decode()


async def compare(*args: object) -> subprocess.CompletedProcess[bytes]:
    """``mcp-actors bench compare ARGS``, its output captured."""
    with trio.fail_after(60):
        return await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "bench", "compare", *map(str, args)],
            cwd=str(ROOT),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )


def plots(dom: str) -> dict[str, int]:
    """Each plot of the DOM and how many series it draws."""
    found = {}
    for match in re.finditer(r'<svg data-plot="([^"]+)"(.*?)</svg>', dom, re.DOTALL):
        found[match.group(1)] = match.group(2).count("<polyline")
    return found


async def test_the_html_report_and_comparison_render_their_plots_with_nothing_external(
    tmp_path: Path,
) -> None:
    target = f"stdio:{sys.executable} {REFERENCE}"
    page = tmp_path / "open.html"
    code, report, stderr = await bench(
        target, "--rate", "100:200:100", "-d", "1", "--html", str(page)
    )
    assert code == 0, stderr
    (tmp_path / "a.json").write_text(json.dumps(report))
    code, closed, stderr = await bench(target, "-w", "sequential,pipelined:4", "-d", "0.3")
    assert code == 0, stderr
    (tmp_path / "b.json").write_text(json.dumps(closed))

    text = page.read_text()
    assert EXTERNAL.search(text) is None, EXTERNAL.search(text)
    drawn = plots(await rendered(page))
    # p50 and p99 of each step; calls of each step; each step's percentiles
    assert drawn == {"latency-over-time": 4, "throughput-over-time": 2, "percentiles": 2}

    both = tmp_path / "compare.html"
    result = await compare(tmp_path / "a.json", tmp_path / "a.json", "--html", both)
    assert result.returncode == 0, result.stderr
    assert "rate:100" in result.stdout.decode() and "(+0.0 %)" in result.stdout.decode()
    assert EXTERNAL.search(both.read_text()) is None
    assert plots(await rendered(both)) == {"percentiles": 4}

    closed_page = tmp_path / "closed.html"
    result = await compare(tmp_path / "b.json", tmp_path / "b.json", "--html", closed_page)
    assert result.returncode == 0, result.stderr
    assert plots(await rendered(closed_page)) == {"calls-per-second": 2}


async def test_compare_refuses_what_is_not_a_report(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("[]")
    result = await compare(tmp_path / "x.json")
    assert result.returncode == 2
    assert b"compare takes two --json reports" in result.stderr
    result = await compare(tmp_path / "x.json", tmp_path / "x.json")
    assert result.returncode == 2
    assert b"not a bench report (no workloads list)" in result.stderr


async def test_the_live_view_shows_rate_latency_errors_and_the_server_each_second() -> None:
    with trio.fail_after(120):
        result = await trio.run_process(
            [
                sys.executable,
                "-m",
                "mcp_actors.cli",
                "bench",
                f"stdio:{sys.executable} {REFERENCE}",
                "--rate",
                "200",
                "-d",
                "2.5",
            ],
            cwd=str(ROOT),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.decode().splitlines() if "rate:200" in line]
    assert len(lines) >= 2  # one a second (stderr is not a terminal: a line each)
    assert all("/s 0 errors" in line for line in lines)
    assert any(re.search(r"p50 [0-9.]+ p99 [0-9.]+ ms", line) for line in lines), lines
    if Path("/proc/self/stat").exists():
        assert any(re.search(r"srv CPU +[0-9]+% RSS [0-9,]+ MB", line) for line in lines), lines
