"""The GPU kit's parts (scripts/gpu_kit.py): cut to fit a device call, joined back to the
same bytes, one call a part, the wheels the GPU machine lacks, and the replay caches left
out of what the calls send and returned after."""

from __future__ import annotations

import hashlib
import os
import subprocess

import pytest

from scripts.gpu_kit import (
    CALL_LIMIT,
    DEVICE_HAS,
    PART_SIZE,
    back,
    calls,
    leave,
    needed_wheels,
    split,
    travelling_size,
)


def test_parts_fit_a_call_and_join_back_to_the_same_bytes(tmp_path):
    data = os.urandom(2 * 1000 + 17)
    source = tmp_path / "kit.tar"
    source.write_bytes(data)
    parts = split(source, tmp_path / "parts", size=1000)
    assert [p.name for p in parts] == ["p000", "p001", "p002"]
    assert [p.stat().st_size for p in parts] == [1000, 1000, 17]
    # gpu_study.sh joins them as `cat p*` does: in the shell's (sorted) name order
    joined = b"".join(p.read_bytes() for p in sorted(tmp_path.glob("parts/p*")))
    assert hashlib.sha256(joined).hexdigest() == hashlib.sha256(data).hexdigest()
    assert PART_SIZE < CALL_LIMIT


def test_one_call_a_part_and_the_last_runs_the_study():
    plan = calls(["p000", "p001"], "bash scripts/gpu_study.sh")
    assert [c["part"] for c in plan] == ["p000", "p001"]
    assert "gpu_study" not in plan[0]["command"] and plan[-1]["command"].endswith("gpu_study.sh")
    assert all(c["command"].startswith("mkdir -p $HOME/kit && mv .gpu/parts/p*") for c in plan)


def test_the_wheels_that_travel_are_what_the_gpu_machine_lacks():
    wheels = needed_wheels()
    names = {w.split("==")[0].lower().replace("_", "-") for w in wheels}
    assert {"spacy", "gguf", "pysbd", "rank-bm25"} <= names
    assert not names & DEVICE_HAS and "torch" not in names
    assert all("==" in w for w in wheels)


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout  # fmt: skip


def test_the_replay_caches_stay_home_for_the_calls_and_come_back(tmp_path):
    repo = tmp_path / "repo"
    (repo / "scripts" / "cache").mkdir(parents=True)
    (repo / "scripts" / "cache" / "big.jsonl.gz").write_bytes(os.urandom(5000))
    (repo / "scripts" / "run.py").write_text("print(1)\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    assert travelling_size(repo) == 5000 + 9
    assert leave(repo) == 9  # only scripts/run.py travels
    assert (repo / "scripts" / "cache" / "big.jsonl.gz").stat().st_size == 5000  # on disk
    assert _git(repo, "ls-files") == "scripts/run.py\n"
    back(repo)
    assert _git(repo, "status", "--porcelain") == ""  # as before: tracked, nothing staged
    assert "scripts/cache" not in (repo / ".git" / "info" / "exclude").read_text()
    assert travelling_size(repo) == 5000 + 9
    # a change of their own in the caches is refused (back could not tell it apart)
    (repo / "scripts" / "cache" / "big.jsonl.gz").write_bytes(b"changed")
    with pytest.raises(SystemExit, match="uncommitted changes"):
        leave(repo)
    assert _git(repo, "ls-files", "scripts/cache") == "scripts/cache/big.jsonl.gz\n"
