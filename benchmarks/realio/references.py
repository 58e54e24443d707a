"""The reference servers: upstream's FastMCP and Node servers, run unchanged, installed here.

Their source is upstream's (``http4k/benchmark-mcp-servers-v2`` at :data:`COMMIT`), which
carries no licence: it is not copied into this repository. :func:`fetch` takes the two
files from a checkout of it (or its git directory) that you point to, and checks them
against :data:`FILES`' SHA-256 digests, so "unchanged" is verified, not assumed.
What is ours: the pinned dependency lists (``peers/python-requirements.txt``,
``peers/package.json``), and ``peers/loopback.mjs``, loaded before the Node server
(``node --import``) so that it listens on 127.0.0.1 at a port we choose instead of
every interface at the one it hard-codes.

Everything lands in ``benchmarks/realio/.peers/`` (ignored by git):

- ``python/``: a virtual environment with the FastMCP server's dependencies (FastMCP +
  uvicorn + uvloop, redis-py: kept out of our own environment), made from the
  interpreter that runs ``install-references``: both Python servers must run on the same
  CPython build (:func:`check_same_interpreter` refuses otherwise; ``install-references``
  from another interpreter makes the environment again);
- ``python-server/main.py``; ``node/`` with ``index.js``, the shim and ``node_modules``.

Started as upstream's compose file starts them: uvicorn ``--workers 4 --loop uvloop``;
Node with ``WEB_CONCURRENCY=4`` (a cluster of 4).

Usage: ``python -m benchmarks.realio install-references --upstream PATH`` (once).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

import attrs

HERE: Final = Path(__file__).resolve().parent
PINNED: Final = HERE / "peers"
CACHE: Final = HERE / ".peers"
REPOSITORY: Final = "http4k/benchmark-mcp-servers-v2"
COMMIT: Final = "64ddc2e20638c6595d4da1eb0b94400243c29626"
#: Upstream path -> (where it goes under CACHE, its SHA-256).
FILES: Final = {
    "python-server/main.py": (
        "python-server/main.py",
        "941f6dfdb386655f570e07caa9156361397068251b0a03b4edcebf0b45c1a003",
    ),
    "nodejs-server/index.js": (
        "node/index.js",
        "40be91e9be69cfb6e7deab1ae3fda9fb13e139c52931ad6a8df9737a6e72d5b3",
    ),
}


class ReferencesMissing(Exception):
    """The reference servers are not installed, or their source does not match."""


def _read_upstream(upstream: Path, path: str) -> bytes:
    """``path`` at :data:`COMMIT` from a checkout (its work tree) or a git directory."""
    if (upstream / path).is_file() and not (upstream / "HEAD").is_file():
        return (upstream / path).read_bytes()
    shown = subprocess.run(
        ["git", f"--git-dir={upstream}", "show", f"{COMMIT}:{path}"],
        capture_output=True,
        check=False,
    )
    if shown.returncode != 0:
        raise ReferencesMissing(
            f"{upstream} has no {path} at {COMMIT[:12]} ({shown.stderr.decode().strip()}):"
            f" point --upstream to a clone of {REPOSITORY}"
        )
    return shown.stdout


def fetch(upstream: Path) -> None:
    """Copy the reference servers' files from ``upstream`` into the cache, checked."""
    for path, (target, digest) in FILES.items():
        data = _read_upstream(upstream, path)
        actual = hashlib.sha256(data).hexdigest()
        if actual != digest:
            raise ReferencesMissing(
                f"{upstream}/{path} is not upstream's file at {COMMIT[:12]}"
                f" (sha256 {actual[:12]}, expected {digest[:12]})"
            )
        destination = CACHE / target
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)


def install(upstream: Path) -> None:
    """Fetch the sources, then install each server's pinned dependencies (PyPI, npm)."""
    fetch(upstream)
    python = CACHE / "python"
    if (python / "bin" / "python").exists() and _interpreter(python) != interpreter():
        shutil.rmtree(python)  # made from another interpreter: made again from this one
    if not (python / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(python)], check=True)
    pip = [str(python / "bin" / "python"), "-m", "pip", "install", "-q"]
    clean = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    subprocess.run([*pip, "-r", str(PINNED / "python-requirements.txt")], check=True, env=clean)
    node = CACHE / "node"
    for name in ("package.json", "loopback.mjs"):
        shutil.copyfile(PINNED / name, node / name)
    npm = ["npm", "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"]
    subprocess.run(npm, cwd=node, check=True)


def check_installed() -> None:
    """Raise :class:`ReferencesMissing` unless :func:`install` has run (with these sources)."""
    for _, (target, digest) in FILES.items():
        path = CACHE / target
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise ReferencesMissing(
                f"the reference servers are not installed ({path} missing or changed): run"
                " python -m benchmarks.realio install-references --upstream PATH"
            )
    for needed in (CACHE / "python" / "bin" / "uvicorn", CACHE / "node" / "node_modules"):
        if not needed.exists():
            raise ReferencesMissing(f"{needed} is missing: run install-references again")


def check_same_interpreter(environment: Path = CACHE / "python") -> None:
    """Raise :class:`ReferencesMissing` unless the virtual environment ``environment`` (the
    FastMCP server's) runs on this interpreter: two Python servers compared on two
    CPython builds would measure the builds too."""
    theirs = _interpreter(environment)
    if theirs != interpreter():
        raise ReferencesMissing(
            f"the FastMCP server's environment runs on {theirs}, ours on {interpreter()}:"
            " both Python servers must run on the same interpreter; run install-references"
            " again with this one"
        )


def interpreter() -> str:
    """The CPython that runs our server, the driver and the API (and, checked, FastMCP):
    its version and the installation it comes from."""
    return _described(sys.version, sys.base_prefix)


def _described(version: str, base_prefix: str) -> str:
    return f"Python {version.split()[0]} from {base_prefix}"


def _interpreter(environment: Path) -> str:
    """What :func:`interpreter` says in the virtual environment ``environment``."""
    said = subprocess.run(
        [
            str(environment / "bin" / "python"),
            "-c",
            "import sys; print(sys.version, sys.base_prefix, sep='\\n')",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if said.returncode != 0:
        return "an interpreter that does not start"
    version, base_prefix = said.stdout.splitlines()
    return _described(version, base_prefix)


@attrs.frozen
class Launch:
    """How to start a server process."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]


def _backend_env(redis_url: str, api_url: str, server_type: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    return {
        **env,
        "REDIS_URL": redis_url,
        "API_SERVICE_URL": api_url,
        "SERVER_TYPE": server_type,
    }


def fastmcp(port: int, redis_url: str, api_url: str, *, workers: int = 4) -> Launch:
    """The FastMCP server, as upstream's Dockerfile runs it (uvicorn, uvloop, 4 workers)."""
    uvicorn = str(CACHE / "python" / "bin" / "uvicorn")
    argv = [uvicorn, "main:app", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--workers", str(workers), "--loop", "uvloop", "--log-level", "warning"]
    return Launch(argv, CACHE / "python-server", _backend_env(redis_url, api_url, "python"))


def node(port: int, redis_url: str, api_url: str, *, workers: int = 4) -> Launch:
    """The Node server, as upstream's compose file runs it (a cluster of 4)."""
    env = _backend_env(redis_url, api_url, "nodejs")
    env.update(WEB_CONCURRENCY=str(workers), REALIO_PORT=str(port))
    argv = ["node", "--import", "./loopback.mjs", "index.js"]
    return Launch(argv, CACHE / "node", env)
