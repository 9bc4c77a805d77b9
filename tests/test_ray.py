"""The Ray engine: a local cluster of 2 workers scores real dev bios exactly as the single
process does, survives a worker killed mid-run, resumes an interrupted run from its
journal, builds the same dense vectors, and stops with one clear line when the cluster
cannot be reached or a worker cannot load its model."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from factscore_local.config import EvalConfig
from factscore_local.index.builder import BuildOptions, build_index
from factscore_local.model_store import SMALL_LM, installed_path
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import read_bios
from tests.conftest import DEV_DB, SHARED, require, require_model

ray = pytest.importorskip("ray")

from factscore_local.distributed import (  # noqa: E402 - after the skip when Ray is absent
    RayEngineError,
    build_index_with_ray,
    evaluate_with_ray,
)
from factscore_local.distributed.cluster import ray_session  # noqa: E402
from factscore_local.distributed.journal import JOURNAL_FORMAT, journal_path  # noqa: E402
from factscore_local.distributed.ray_eval import _run_key, worker_name  # noqa: E402

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
# Four short dev bios (Joeri Adams, Eric Hacker, Craig Morton, Quintus Sosius Senecio), each
# cut to its first annotated sentence so that a run takes seconds, not minutes.
PICK = (4, 15, 32, 3)
SENTENCES = 1


@pytest.fixture(scope="module")
def local_ray():
    """One local cluster for the module (the engine uses a connection it finds open)."""
    with ray_session(None, num_cpus=2) as session:
        yield session


@pytest.fixture(scope="module")
def bios_file(tmp_path_factory) -> Path:
    lines = require(CHATGPT).read_text("utf-8").splitlines()
    out = tmp_path_factory.mktemp("ray-bios") / "ChatGPT-4.jsonl"
    picked = []
    for i in PICK:
        record = json.loads(lines[i])
        record["annotations"] = record["annotations"][:SENTENCES]
        picked.append(json.dumps(record, ensure_ascii=False))
    out.write_text("\n".join(picked) + "\n", "utf-8")
    return out


def config(index: Path, cache: Path, **extra) -> EvalConfig:
    require_model(SMALL_LM)
    return EvalConfig(
        index=index,
        lm=SMALL_LM,
        use_atomic_facts=True,
        validate=False,
        evidence_budget=256,  # short blocks: the prefill of long ones is most of a run
        cache=cache,
        **extra,
    )


def by_line(path: Path) -> list[dict]:
    return sorted(
        (json.loads(x) for x in path.read_text("utf-8").splitlines()),
        key=lambda r: (r["source"], r["line"]),
    )


@pytest.fixture(scope="module")
def single_rows(db_index, bios_file, tmp_path_factory) -> list[dict]:
    """The single process's rows (2 threads), the reference for every Ray run."""
    work = tmp_path_factory.mktemp("ray-single")
    bios = list(read_bios(bios_file))
    Estimator(config(db_index, work / "cache.db", threads=2)).run(
        bios, work / "out.jsonl", progress=False
    )
    rows = by_line(work / "out.jsonl")
    assert len(rows) == len(PICK) and all(r.get("n_facts") for r in rows)
    return rows


@pytest.mark.slow
def test_rows_identical_to_single_process(local_ray, db_index, bios_file, single_rows, tmp_path):
    bios = list(read_bios(bios_file))
    out = tmp_path / "ray.jsonl"
    run = evaluate_with_ray(
        config(db_index, tmp_path / "cache.db"), bios, out, workers=2, progress=False
    )
    assert by_line(out) == single_rows
    # Written in input order, one row per bio, and the journal is gone.
    assert [r.line for r in run.rows] == [b.line for b in bios]
    assert not journal_path(out).exists()
    assert len(run.pids) == 2 and run.groups == len(PICK)
    assert run.components.lm.loaded and run.components.lm.get().lm.backend == "llama.cpp"
    assert run.components.cache.misses > 0

    # A driver killed mid-run left a journal with two finished rows: the rerun sends only
    # the other two bios out again, and the rows are the same.
    cfg = config(db_index, tmp_path / "cache.db")
    kept = out.read_text("utf-8").splitlines()[:2]
    journal = journal_path(out)
    header = {"format": JOURNAL_FORMAT, "run": _run_key(cfg, bios)}
    entries = [json.dumps({"position": i, "row": json.loads(x)}) for i, x in enumerate(kept)]
    journal.write_text("\n".join([json.dumps(header), *entries, '{"position": 3, "ro']) + "\n")
    out.unlink()
    resumed = evaluate_with_ray(cfg, bios, out, workers=2, progress=False)
    assert resumed.resumed == 2 and resumed.groups == 2
    assert by_line(out) == single_rows


@pytest.mark.slow
@pytest.mark.heavy
def test_worker_killed_mid_run(local_ray, db_index, bios_file, single_rows, tmp_path):
    """A worker's process killed while it scores: Ray restarts it and its bios are scored
    again; every bio is written exactly once, with the single process's results."""
    bios = list(read_bios(bios_file))
    out = tmp_path / "ray.jsonl"
    journal = journal_path(out)
    killed: list[int] = []

    def kill_first_worker() -> None:
        deadline = time.time() + 600
        # Once a first row is in, both workers hold a group: kill worker 0 in its work.
        while time.time() < deadline:
            if journal.exists() and len(journal.read_text("utf-8").splitlines()) >= 2:
                break
            time.sleep(0.05)
        actor = ray.get_actor(worker_name("eval", 0))
        pid = ray.get(actor.pid.remote())
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_first_worker, daemon=True)
    killer.start()
    run = evaluate_with_ray(
        config(db_index, tmp_path / "cache.db"), bios, out, workers=2, progress=False
    )
    killer.join(timeout=60)
    assert killed, "the worker was not killed"
    rows = by_line(out)
    assert [r["line"] for r in rows] == sorted(b.line for b in bios)  # each bio once
    assert rows == single_rows
    # The killed worker's group came back from a restarted process (or another worker).
    restarted = run.pids - {w["pid"] for w in run.workers}
    assert restarted or run.pool.resubmitted > 0


@pytest.mark.slow
def test_worker_that_cannot_load_its_model(local_ray, db_index, bios_file, tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)
    cfg = EvalConfig(
        index=db_index,
        lm=str(broken),
        use_atomic_facts=True,
        validate=False,
        cache=tmp_path / "cache.db",
    )
    bios = list(read_bios(bios_file))
    with pytest.raises(RayEngineError, match=r"^eval worker \d could not start: \w+") as err:
        evaluate_with_ray(cfg, bios, tmp_path / "out.jsonl", workers=2, progress=False)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "out.jsonl").exists()


def test_unreachable_cluster(tmp_path):
    with socket.socket() as s:  # a port of this machine that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = EvalConfig(index=tmp_path / "index", cache=tmp_path / "cache.db")
    bios = [next(iter(read_bios(require(CHATGPT))))]
    started = time.perf_counter()
    with pytest.raises(RayEngineError, match=f"cannot reach a Ray cluster at 127.0.0.1:{port}"):
        evaluate_with_ray(cfg, bios, tmp_path / "out.jsonl", address=f"127.0.0.1:{port}")
    options = BuildOptions(source=require(DEV_DB), out=tmp_path / "index", progress=False)
    with pytest.raises(RayEngineError, match="cannot reach a Ray cluster"):
        build_index_with_ray(options, address=f"127.0.0.1:{port}")
    assert time.perf_counter() - started < 30
    assert not (tmp_path / "index").exists()  # refused before anything was built


def _tiny_source(path: Path, pages: int = 4) -> Path:
    src = sqlite3.connect(require(DEV_DB))
    rows = src.execute(f"SELECT title, text FROM documents ORDER BY rowid LIMIT {pages}")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE documents (title PRIMARY KEY, text)")
    db.executemany("INSERT INTO documents VALUES (?, ?)", rows.fetchall())
    db.commit()
    db.close()
    src.close()
    return path


def _vectors(index: Path) -> tuple[list[int], np.ndarray]:
    conn = sqlite3.connect(index / "knowledge.db")
    rows = conn.execute("SELECT passage_id, vector FROM embeddings ORDER BY passage_id").fetchall()
    conn.close()
    return [r[0] for r in rows], np.stack([np.frombuffer(r[1], np.float32) for r in rows])


@pytest.mark.slow
def test_dense_build_on_ray_matches_single_process(local_ray, tmp_path):
    import faiss

    source = _tiny_source(tmp_path / "tiny.db")
    single, on_ray = tmp_path / "single", tmp_path / "ray"
    build_index(BuildOptions(source=source, out=single, bm25=False, progress=False, dense_batch=8))
    manifest = build_index_with_ray(
        BuildOptions(source=source, out=on_ray, bm25=False, progress=False, dense_batch=8),
        workers=2,
    )
    assert manifest["indexes"]["dense"] == "dense.faiss"
    assert manifest["models"]["dense"]["dim"] == 384
    ids, vectors = _vectors(single)
    ray_ids, ray_vectors = _vectors(on_ray)
    assert ids == ray_ids and len(ids) > 8  # more than one shard
    np.testing.assert_allclose(ray_vectors, vectors, atol=1e-5)
    a = faiss.read_index(str(single / "dense.faiss"))
    b = faiss.read_index(str(on_ray / "dense.faiss"))
    assert a.ntotal == b.ntotal == len(ids)
    _, top_a = a.search(vectors[:5], 3)
    _, top_b = b.search(vectors[:5], 3)
    assert (top_a == top_b).all()


def test_an_lm_server_that_does_not_answer_stops_the_run_before_any_worker(tmp_path):
    from scripts.llama_server import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    cfg = EvalConfig(index=tmp_path / "index", lm=url, cache=tmp_path / "cache.db")
    bios = [next(iter(read_bios(require(CHATGPT))))]
    out = tmp_path / "out.jsonl"
    with pytest.raises(RayEngineError, match=f"the LM server at {url} cannot be reached"):
        evaluate_with_ray(cfg, bios, out, workers=2, progress=False)
    assert not out.exists() and not journal_path(out).exists()


@pytest.mark.heavy  # a minute: Ray's workers (tested above) and a server (test_vllm_server)
def test_workers_send_their_prompts_to_one_lm_server(local_ray, db_index, bios_file, tmp_path):
    """``--engine ray --lm URL``: the workers load no model and score through the server,
    with the decisions the single process gets through the same server."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("uvicorn", reason="llama-cpp-python's server extra")
    from scripts.llama_server import LlamaServer

    require_model(SMALL_LM)
    server = LlamaServer(installed_path(SMALL_LM), tmp_path / "server.log")
    server.start()
    try:
        # two bios, one a worker: this server decodes one request at a time
        bios = list(read_bios(bios_file))[:2]
        served = replace(config(db_index, tmp_path / "single.db"), lm=server.url,
                         verifier="retrieve-lm")  # fmt: skip
        Estimator(served).run(bios, tmp_path / "single.jsonl", progress=False)
        out = tmp_path / "ray.jsonl"
        cfg = replace(served, cache=tmp_path / "ray.db")
        run = evaluate_with_ray(cfg, bios, out, workers=2, progress=False)
    finally:
        server.kill()
    assert len(run.pids) == 2
    assert {w["backend"] for w in run.workers} == {"server"}
    assert run.components.lm.get().lm.device == "server"
    single, distributed = by_line(tmp_path / "single.jsonl"), by_line(out)
    assert [r["line"] for r in distributed] == [r["line"] for r in single]
    for a, b in zip(single, distributed, strict=True):
        facts_a, facts_b = a["decisions"], b["decisions"]
        assert [f["atom"] for f in facts_a] == [f["atom"] for f in facts_b]
        for x, y in zip(facts_a, facts_b, strict=True):  # the server's run-to-run noise
            assert abs(x["margin"] - y["margin"]) < 0.08, x["atom"]
