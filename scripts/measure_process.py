"""Run one command and measure it: wall time, peak memory of its whole process tree, and the
disk its output folder takes.

Memory is taken two ways: ``/usr/bin/time -v``'s maximum resident set size (the largest
single process of the tree: the builder, or Lucene's JVM) and the peak of the tree's summed
RSS, sampled with psutil every ``interval`` seconds. Disk is the folder's allocated bytes
(sampled, so a temporary file that lives a few seconds may be missed) and the file system's
used bytes (which also sees unlinked temporary files, but other users' writes too).

Example:
    >>> run = measure([sys.executable, "-c", "pass"], folder=Path("."))  # doctest: +SKIP
    >>> sorted(run)  # doctest: +SKIP
    ['disk_after_bytes', 'disk_peak_bytes', 'fs_used_peak_delta_bytes', 'max_rss_mb', ...]
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

TIME = Path("/usr/bin/time")


def folder_bytes(path: Path) -> int:
    """Bytes allocated on disk by the files under ``path`` (0 when it does not exist)."""
    if path.is_file():
        return path.stat().st_blocks * 512
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # a file removed while we walk
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def tree_rss(proc: psutil.Process) -> int:
    """Summed resident bytes of a process and all its descendants."""
    total = 0
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


class _Sampler(threading.Thread):
    def __init__(self, pid: int, folders: list[Path], interval: float, min_free: int) -> None:
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.folders, self.interval, self.min_free = folders, interval, min_free
        self.disk_full = False
        self.fs_root = folders[0] if folders[0].exists() else folders[0].parent
        self.fs_start = shutil.disk_usage(self.fs_root).used
        self.rss_peak = self.disk_peak = self.fs_peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.rss_peak = max(self.rss_peak, tree_rss(self.proc))
            self.disk_peak = max(self.disk_peak, sum(folder_bytes(f) for f in self.folders))
            usage = shutil.disk_usage(self.fs_root)
            self.fs_peak = max(self.fs_peak, usage.used - self.fs_start)
            if usage.free < self.min_free:  # stop before the disk fills up for everyone
                self.disk_full = True
                kill_tree(self.proc)
                return
            self.stop.wait(self.interval)


def kill_tree(proc: psutil.Process) -> None:
    """Terminates a process and its descendants (the children first)."""
    with contextlib.suppress(psutil.Error):
        for p in [*proc.children(recursive=True), proc]:
            with contextlib.suppress(psutil.Error):
                p.terminate()


def measure(
    cmd: list[str],
    folders: list[Path],
    interval: float = 1.0,
    env: dict | None = None,
    log: Path | None = None,
    min_free: int = 2 * 10**9,
) -> dict:
    """Runs ``cmd`` to its end (raising CalledProcessError on failure) and measures it.

    Args:
        cmd: the command (run through ``/usr/bin/time -v`` when that exists).
        folders: the paths whose disk use is sampled (the first one's file system is the
            one whose used bytes are followed).
        interval: seconds between samples.
        env: the command's environment (default: this process's).
        log: a file for the command's stdout and stderr (default: discarded).
        min_free: bytes the file system must keep free; below that the command is
            terminated and RuntimeError raised (a killed build resumes when run again).

    Returns:
        wall_s, max_rss_mb (largest process, from time -v; None without it),
        tree_rss_peak_mb (sampled sum), disk_peak_bytes and disk_after_bytes (the folders),
        fs_used_peak_delta_bytes (the file system, relative to the start).
    """
    timed = TIME.exists()
    full = [str(TIME), "-v", *cmd] if timed else cmd
    out = log.open("w") if log else subprocess.DEVNULL
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(full, stdout=out, stderr=subprocess.PIPE, text=True, env=env)
        sampler = _Sampler(proc.pid, folders, interval, min_free)
        sampler.start()
        _, stderr = proc.communicate()
        sampler.stop.set()
        sampler.join()
    finally:
        if log:
            out.close()
    wall = time.perf_counter() - t0
    if log:
        with log.open("a") as f:
            f.write(stderr)
    if sampler.disk_full:
        raise RuntimeError(f"stopped {cmd[:4]}: under {min_free / 1e9:.0f} GB of disk left")
    if proc.returncode:
        sys.stderr.write(stderr[-4000:])
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    return {
        "wall_s": round(wall, 1),
        "max_rss_mb": round(int(match.group(1)) / 1024, 1) if match else None,
        "tree_rss_peak_mb": round(sampler.rss_peak / 2**20, 1),
        "disk_peak_bytes": sampler.disk_peak,
        "disk_after_bytes": sum(folder_bytes(f) for f in folders),
        "fs_used_peak_delta_bytes": sampler.fs_peak,
    }
