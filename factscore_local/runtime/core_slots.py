"""Model processes on one machine take turns for its cores.

An LM on the CPU runs one thread per core it is given (all of them by default). Two such
processes at once do not share the cores gracefully: each thread waits on the other
process's, and on 2 cores two evals ran about 12 times slower than one after the other
(issue 49). So a process that loads an LM on the CPU first takes one *core slot* per
thread, as a file lock in a folder shared by the machine's processes; a process that finds
too few free waits, and says whom it waits for. Locks are ``flock`` locks, so a killed
process frees its slots with its last file descriptor; they are held until the process
exits (its LM stays loaded). Ray workers of one node take their ``--threads-per-worker``
slots each, so as many run at once as the cores allow.

``FSCORE_MODEL_LOCK=0`` turns the turn-taking off (the test suite does, for the processes
it starts while it holds a model itself); ``FSCORE_LOCK_DIR`` names the folder (default:
the system's temporary folder).
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import time
from pathlib import Path

LOCK_ENV = "FSCORE_MODEL_LOCK"
DIR_ENV = "FSCORE_LOCK_DIR"
POLL_SECONDS = 2.0

_held: list[int] = []  # this process's slot file descriptors, kept open until it exits


def lock_dir() -> Path:
    folder = Path(os.environ.get(DIR_ENV) or Path(tempfile.gettempdir()) / "factscore-local-cores")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def enabled() -> bool:
    return os.environ.get(LOCK_ENV, "1") != "0"


def _try_slot(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _holders(folder: Path) -> str:
    """Who holds the machine's slots, as their slot files say."""
    names = set()
    for path in sorted(folder.glob("core-*.lock")):
        fd = _try_slot(path)
        if fd is not None:  # free: its text is a past holder's
            os.close(fd)
            continue
        text = path.read_text("utf-8", "ignore").strip()
        if text:
            names.add(text)
    return "; ".join(sorted(names)) or "another process"


def hold_cores(threads: int | None, what: str = "") -> float:
    """Blocks until this process holds a core slot per thread (all cores when ``threads`` is
    None); returns the seconds it waited. A process holds its slots once, until it exits."""
    if _held or not enabled():
        return 0.0
    cores = os.cpu_count() or 1
    wanted = min(cores, max(1, threads or cores))
    folder = lock_dir()
    label = f"pid {os.getpid()}: {what or ' '.join(sys.argv[:3])}"
    start = time.monotonic()
    said = False
    while True:
        fds: list[int] = []
        for i in range(cores):
            fd = _try_slot(folder / f"core-{i}.lock")
            if fd is not None:
                fds.append(fd)
                if len(fds) == wanted:
                    break
        if len(fds) == wanted:
            for fd in fds:
                os.ftruncate(fd, 0)
                os.pwrite(fd, label.encode("utf-8"), 0)
            _held.extend(fds)
            waited = time.monotonic() - start
            if said:
                print(f"factscore-local: got the cores after {waited:.0f} s", file=sys.stderr)
            return waited
        for fd in fds:  # all or none: a partial hold could lock two waiters out
            os.close(fd)
        if not said:
            print(
                f"factscore-local: this machine's cores are taken by another model process "
                f"({_holders(folder)}); waiting for {wanted} of {cores} to be free, so that "
                f"the two do not slow each other down (set {LOCK_ENV}=0 to run at once)",
                file=sys.stderr,
                flush=True,
            )
            said = True
        time.sleep(POLL_SECONDS)


def release() -> None:
    """Frees this process's slots (tests; a process's exit frees them too)."""
    while _held:
        os.close(_held.pop())
