"""The GPU kit's parts (scripts/gpu_kit.py): cut to fit a device call, joined back to the
same bytes, one call a part, and the wheels the GPU machine lacks."""

from __future__ import annotations

import hashlib
import os

from scripts.gpu_kit import CALL_LIMIT, DEVICE_HAS, PART_SIZE, calls, join, needed_wheels, split


def test_parts_fit_a_call_and_join_back_to_the_same_bytes(tmp_path):
    data = os.urandom(2 * 1000 + 17)
    source = tmp_path / "kit.tar"
    source.write_bytes(data)
    parts = split(source, tmp_path / "parts", size=1000)
    assert [p.name for p in parts] == ["p000", "p001", "p002"]
    assert [p.stat().st_size for p in parts] == [1000, 1000, 17]
    sha = join(list(reversed(parts)), tmp_path / "joined.tar")  # name order, not list order
    assert sha == hashlib.sha256(data).hexdigest()
    assert (tmp_path / "joined.tar").read_bytes() == data
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
