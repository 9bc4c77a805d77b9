"""The build's threads and workers default to the cores this process may use: its CPU
affinity, capped by a cgroup CPU quota (read from files laid out as the kernel writes them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from factscore_local.api import build_options
from factscore_local.runtime.cores import cgroup_quota, usable_cores


def _cgroup(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text + "\n")
    return root


def test_a_cgroup_quota_in_cores_v2_and_v1(tmp_path):
    assert cgroup_quota(_cgroup(tmp_path / "a", {"cpu.max": "300000 100000"})) == 3.0
    assert cgroup_quota(_cgroup(tmp_path / "b", {"cpu.max": "max 100000"})) is None
    v1 = {"cpu/cpu.cfs_quota_us": "150000", "cpu/cpu.cfs_period_us": "100000"}
    assert cgroup_quota(_cgroup(tmp_path / "c", v1)) == 1.5
    unset = {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}
    assert cgroup_quota(_cgroup(tmp_path / "d", unset)) is None
    assert cgroup_quota(tmp_path / "none") is None


def test_usable_cores_is_the_affinity_capped_by_the_quota(tmp_path):
    affinity = len(os.sched_getaffinity(0))
    assert usable_cores(tmp_path / "none") == affinity
    one = _cgroup(tmp_path / "one", {"cpu.max": "50000 100000"})  # half a core: 1
    assert usable_cores(one) == 1
    many = _cgroup(tmp_path / "many", {"cpu.max": f"{(affinity + 8) * 100000} 100000"})
    assert usable_cores(many) == affinity  # a quota above the affinity changes nothing


def test_the_build_defaults_to_the_usable_cores(tmp_path):
    options = build_options(tmp_path / "pages.jsonl", tmp_path / "idx")
    assert options.threads == options.workers == usable_cores()
    given = build_options(tmp_path / "p.jsonl", tmp_path / "i", threads=None, workers=3)
    assert (given.threads, given.workers) == (usable_cores(), 3)


def test_a_test_worker_is_bound_to_one_core_and_its_models_use_that_core():
    """The checkout's conftest.py binds pytest-xdist worker gwN to the Nth core it may use
    (modulo their count), so the models' threads and vLLM's binding stay on that core."""
    code = (
        "import os, conftest\n"
        "from factscore_local.runtime.cores import first_cores, usable_cores\n"
        "print(sorted(os.sched_getaffinity(0)), usable_cores(), first_cores(4),"
        " os.environ['OMP_NUM_THREADS'])\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTEST_XDIST_WORKER": "gw1"}
    env.pop("OMP_NUM_THREADS", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, text=True,
                          capture_output=True, check=True)  # fmt: skip
    cores = sorted(os.sched_getaffinity(0))
    core = cores[1 % len(cores)]
    assert done.stdout.split("] ")[1].split() == ["1", str(core), "1"]
    assert done.stdout.startswith(f"[{core}]")
