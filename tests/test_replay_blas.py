"""A replay runs under the OpenBLAS kernel and threads its record names (scripts/blas.py):
the stance head's and the 0.5B heads' MLP figures changed with them alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import blas, check, common

AVX512 = frozenset({"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl"})
RECORDED = {"name": "r", "machine": {"blas": {"kernel": "SkylakeX", "threads": 2}}}


def test_a_record_names_the_blas_it_ran_with():
    info = common.machine()["blas"]  # numpy is loaded: OpenBLAS is there to read
    assert info is None or (info["kernel"] and info["threads"] >= 1)


def test_the_replay_runs_under_the_recorded_kernel_and_threads():
    here = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "1", "PATH": "/bin"}
    env = blas.replay_env(RECORDED, here, flags=AVX512)
    assert env["OPENBLAS_CORETYPE"] == "SkylakeX" and env["OPENBLAS_NUM_THREADS"] == "2"
    assert env["PATH"] == "/bin" and here["OPENBLAS_CORETYPE"] == "Haswell"  # a copy
    # A record written before records named their BLAS replays in the environment as it is.
    assert blas.replay_env({"machine": {"cores": 2}}, here) == here


def test_a_kernel_this_cpu_cannot_run_is_not_forced():
    said = []
    env = blas.replay_env(RECORDED, {}, said.append, flags=frozenset({"avx2", "fma"}))
    assert "OPENBLAS_CORETYPE" not in env and env["OPENBLAS_NUM_THREADS"] == "2"
    assert "SkylakeX" in said[0] and "avx512bw" in said[0]


def test_the_checker_passes_the_recorded_blas_to_the_replay(tmp_path, monkeypatch):
    envs = []

    def fake_run(command, **kwargs):
        envs.append(kwargs.get("env") or {})
        out = Path(command[command.index("--results-out") + 1])
        out.write_text(json.dumps({**record, "computed": 0}))
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    record = {"name": "r", "module": "scripts.bench_x", "command": "c", "commit": "c",
              "date": "d", "machine": {"blas": {"kernel": "Haswell", "threads": 2}},
              "figures": {"n": 1}, "replay": {"argv": ["--index", "{index}"]}}  # fmt: skip
    monkeypatch.setattr(blas, "cpu_flags", lambda: AVX512)
    monkeypatch.setattr(check.subprocess, "run", fake_run)
    assert check.check(record, tmp_path, tmp_path)
    assert envs[0]["OPENBLAS_CORETYPE"] == "Haswell" and envs[0]["OPENBLAS_NUM_THREADS"] == "2"


@pytest.mark.parametrize("name", ["stance-head", "heads-98-0.5b"])
def test_the_heads_records_name_their_blas(name):
    """Their MLP figures reproduce only under the kernel and threads they ran with, which
    the replay then forces: whichever kernel the recording machine chose (SkylakeX with
    AVX-512, Haswell without), on the 2 cores of record."""
    record = common.read_results(common.RESULTS / f"{name}.json")
    blas_of_record = record["machine"]["blas"]
    assert blas_of_record["kernel"] in {"SkylakeX", "Haswell"} and blas_of_record["threads"] == 2
