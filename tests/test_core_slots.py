"""Model processes on one machine take turns for its cores (runtime/core_slots.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

HOLD = """
import sys, time
from factscore_local.runtime.core_slots import hold_cores
waited = hold_cores({threads}, "holder {name}")
print(f"held {{waited:.1f}}", flush=True)
time.sleep({seconds})
"""


def start(tmp_path, name: str, threads: int | None, seconds: float) -> subprocess.Popen:
    env = {**os.environ, "FSCORE_MODEL_LOCK": "1", "FSCORE_LOCK_DIR": str(tmp_path)}
    code = HOLD.format(threads=threads, name=name, seconds=seconds)
    return subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def wait_held(proc: subprocess.Popen) -> float:
    line = proc.stdout.readline()
    assert line.startswith("held"), proc.stderr.read()
    return float(line.split()[1])


def test_a_second_process_waits_and_says_for_whom(tmp_path):
    first = start(tmp_path, "first", None, 4)
    wait_held(first)
    second = start(tmp_path, "second", None, 0)
    waited = wait_held(second)
    first.wait()
    _, err = second.communicate()
    assert waited >= 1.0
    assert "cores are taken by another model process" in err
    assert "holder first" in err and "FSCORE_MODEL_LOCK=0" in err


def test_a_killed_holder_frees_its_cores(tmp_path):
    first = start(tmp_path, "first", None, 60)
    wait_held(first)
    first.send_signal(signal.SIGKILL)
    first.wait()
    second = start(tmp_path, "second", None, 0)
    assert wait_held(second) < 1.0
    second.communicate()


def test_processes_that_fit_the_cores_run_together(tmp_path):
    cores = os.cpu_count() or 1
    procs = [start(tmp_path, f"w{i}", 1, 2) for i in range(cores)]
    start_time = time.monotonic()
    assert all(wait_held(p) < 1.0 for p in procs)  # one core each: no one waits
    assert time.monotonic() - start_time < 30
    for p in procs:
        p.communicate()


def test_turned_off_nobody_waits(tmp_path):
    first = start(tmp_path, "first", None, 3)
    wait_held(first)
    env = {**os.environ, "FSCORE_MODEL_LOCK": "0", "FSCORE_LOCK_DIR": str(tmp_path)}
    code = HOLD.format(threads=None, name="free", seconds=0)
    out = subprocess.run([sys.executable, "-c", code], env=env, text=True, capture_output=True)
    assert out.stdout.startswith("held 0.0") and not out.stderr
    first.communicate()
