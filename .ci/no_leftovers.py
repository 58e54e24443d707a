"""Run a command, then fail if any process it started is still running.

Usage: ``python .ci/no_leftovers.py COMMAND [ARG ...]``

The wrapper makes itself a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): a process
that the command started and then orphaned (a server a test spawned and forgot, a daemon
that double-forked, a gateway's upstream child) is re-parented to this wrapper instead of
to init. So when the command has exited, every descendant still alive is one of its own
leftovers, whatever session or process group it moved to, and nothing else running on
the machine is mistaken for one.

After the command exits, leftovers get a short grace to exit on their own; those still
alive are listed (pid and command line), killed, and the exit status is 1 even if the
command succeeded. Otherwise the command's own exit status is returned.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE_SECONDS = 5.0


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def children_of(parent: int) -> list[int]:
    """The live processes whose parent is ``parent`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        state, ppid = fields[0], int(fields[1])
        if ppid == parent and state != b"Z":
            found.append(int(entry))
    return found


def reap() -> None:
    """Collect exited children, so that zombies are not counted as leftovers."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    become_subreaper()
    status = subprocess.call(argv)
    me = os.getpid()
    deadline = time.monotonic() + GRACE_SECONDS
    while True:
        reap()
        leftovers = children_of(me)
        if not leftovers or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if not leftovers:
        return status
    print(f"\n{len(leftovers)} process(es) left running by `{' '.join(argv)}`:", file=sys.stderr)
    for pid in leftovers:
        print(f"  {pid}: {command_line(pid)}", file=sys.stderr)
    kill_all_descendants(me)
    return 1


def kill_all_descendants(me: int) -> None:
    """SIGKILL the leftovers; their own children are re-parented to us, so repeat."""
    for _ in range(50):
        reap()
        leftovers = children_of(me)
        if not leftovers:
            return
        for pid in leftovers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
