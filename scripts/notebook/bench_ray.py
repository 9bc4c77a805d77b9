"""The Ray engine against the single process, and what a cluster would do (a simulation).

    python -m scripts.notebook.bench_ray --bios 10 --work bench-out/ray

Three parts, written to ``scripts/results/ray.json``:

* ``eval``: the same real dev bios (ChatGPT's, atomic facts given, the 0.5B model), once in
  one process with 2 threads and once on a local Ray cluster of 2 workers x 1 thread, each
  with a fresh result cache: facts/s of each, their ratio, and whether every decision is
  the same. On a 2-core machine the two can only share the same 2 cores: no speed-up is
  possible there, only the cost of the orchestration shows.
* ``simulation``: a SIMULATED cluster. Actors stand in for the LM with a sleep of the
  measured seconds per fact (time-scaled), on the real scheduler of the Ray engine (groups
  by topic, restarts, the driver's bookkeeping), for 1 to 16 workers, on the real fact
  counts of the 3 x 98 dev bios; plus the orchestration overhead per bio (a sleep of 0).
  From it, the expected hours of a 500-bio x N-LM study on N machines.
* ``dense``: the dev pages' dense build in one process and on 2 Ray workers: passages/s,
  the vectors' largest difference, and whether the top-k of 100 queries (model atomic
  facts of the dev bios) are identical between the two FAISS indexes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from factscore_local.config import EvalConfig
from factscore_local.model_store import SMALL_LM
from factscore_local.pipeline.records.labeled import model_facts
from scripts.common import (
    BENCH_OUT,
    SUBJECTS,
    add_data_option,
    data_root,
    labeled_bios,
    log,
    results_record,
    write_results,
)

TAG = "ray"
DEV_DB = Path("enwiki-20230401", "enwiki-20230401-dev.db")
WORKER_COUNTS = (1, 2, 4, 8, 16)
STUDY_BIOS = 500  # per subject LM, as the paper's


def _dev_index(root: Path, work: Path) -> Path:
    from factscore_local.index.builder import BuildOptions, build_index

    index = work / "dev-index"
    if not (index / "manifest.json").is_file():
        log(TAG, f"building the dev index (BM25) in {index}")
        build_index(BuildOptions(source=root / DEV_DB, out=index, dense=None, progress=False))
    return index


def _eval_config(index: Path, cache: Path, **extra) -> EvalConfig:
    return EvalConfig(
        index=index, lm=SMALL_LM, use_atomic_facts=True, validate=False, cache=cache, **extra
    )


def _decisions(rows) -> list:
    return [(r.line, [(d.atom, d.is_supported) for d in r.decisions]) for r in rows]


def _trimmed(bios: list, sentences: int | None) -> list:
    """The bios with only their first ``sentences`` annotated sentences (None: whole)."""
    from dataclasses import replace

    if sentences is None:
        return bios
    return [replace(b, annotations=b.annotations[:sentences]) for b in bios]


def bench_eval(
    root: Path, work: Path, n_bios: int, sentences: int | None, budget: int | None
) -> dict:
    """Single process x 2 threads against Ray 2 workers x 1 thread, fresh caches."""
    from factscore_local.distributed import evaluate_with_ray
    from factscore_local.pipeline.estimator import Estimator

    index = _dev_index(root, work)
    bios = labeled_bios(root, ("ChatGPT",), responding=True)["ChatGPT"][:n_bios]
    bios = _trimmed(bios, sentences)
    extra = {"evidence_budget": budget} if budget else {}
    for name in ("single-cache.db", "ray-cache.db"):
        for path in work.glob(name + "*"):
            path.unlink()
    log(TAG, f"eval: {len(bios)} bios in one process (2 threads)")
    start = time.perf_counter()
    single = Estimator(_eval_config(index, work / "single-cache.db", threads=2, **extra)).run(
        bios, work / "single.jsonl", progress=False
    )
    single_s = time.perf_counter() - start
    log(TAG, f"eval: the same bios on Ray, 2 workers x 1 thread ({single_s:.0f} s single)")
    start = time.perf_counter()
    run = evaluate_with_ray(
        _eval_config(index, work / "ray-cache.db", **extra),
        bios,
        work / "ray.jsonl",
        workers=2,
        threads_per_worker=1,
        progress=False,
    )
    ray_s = time.perf_counter() - start
    facts = sum(r.n_facts for r in single)
    same_rows = (work / "single.jsonl").read_text("utf-8") == (work / "ray.jsonl").read_text(
        "utf-8"
    )
    flat = [d for _, ds in _decisions(single) for d in ds]
    agree = sum(
        a == b for a, b in zip(flat, [d for _, ds in _decisions(run.rows) for d in ds], strict=True)
    )
    return {
        "bios": len(bios),
        "facts": facts,
        "single_2_threads": {
            "seconds": round(single_s, 1),
            "facts_per_s": round(facts / single_s, 3),
            "s_per_fact": round(single_s / facts, 3),
        },
        "ray_2x1": {
            "seconds": round(ray_s, 1),
            "facts_per_s": round(facts / ray_s, 3),
            "scoring_seconds": round(run.pool.seconds, 1),
            "startup_seconds": round(ray_s - run.pool.seconds, 1),
        },
        "ratio_facts_per_s_ray_over_single": round(single_s / ray_s, 3),
        "decisions_identical": agree == len(flat),
        "decisions_agreeing": agree,
        "rows_identical": same_rows,
    }


class SleepWorker:
    """The stand-in LM of the simulation: a group of bios costs its facts times a fixed
    latency (a sleep), and returns rows of a real row's size."""

    def __init__(self, seconds_per_fact: float, row: dict) -> None:
        self.seconds_per_fact = seconds_per_fact
        self.row = row

    def prepare(self) -> dict:
        return {"pid": os.getpid()}

    def evaluate(self, facts: list[int]) -> list[dict]:
        time.sleep(self.seconds_per_fact * sum(facts))
        return [self.row] * len(facts)


def _simulate(ray, workers: int, groups: list[list[int]], latency: float, row: dict) -> float:
    """Wall seconds of the Ray engine's scheduler with ``workers`` stand-in actors."""
    from factscore_local.distributed.cluster import (
        actor_options,
        kill_actors,
        run_items,
        start_actors,
    )

    actor_class = ray.remote(SleepWorker)
    actors = [actor_class.options(**actor_options(1, 0)).remote(latency, row)
              for _ in range(workers)]  # fmt: skip
    try:
        start_actors(ray, actors, "simulated")
        written: list[int] = []
        start = time.perf_counter()
        run_items(
            ray,
            actors,
            groups,
            lambda a, g: a.evaluate.remote(g),
            lambda i, rows: written.append(len(json.dumps(rows))),
            "simulated",
        )
        return time.perf_counter() - start
    finally:
        kill_actors(ray, actors)


def bench_simulation(root: Path, s_per_fact: float, row: dict, scaled_total_s: float) -> dict:
    """SIMULATION: the engine's scheduling of the 3 x 98 dev bios (their real fact counts,
    grouped by topic) on 1-16 stand-in workers of a fixed per-fact latency."""
    from factscore_local.distributed.cluster import ray_session

    bios = labeled_bios(root, SUBJECTS)
    by_topic: dict[str, list[int]] = {}
    for subject in SUBJECTS:
        for bio in bios[subject]:
            facts = len(model_facts(bio.annotations) or []) if bio.annotations else 0
            by_topic.setdefault(bio.topic, []).append(facts)
    groups = sorted(by_topic.values(), key=lambda g: -sum(g))  # the engine's order
    n_bios = sum(len(g) for g in groups)
    total_facts = sum(map(sum, groups))
    scale = scaled_total_s / (total_facts * s_per_fact)  # the 1-worker run takes this long
    latency = s_per_fact * scale
    out: dict = {
        "label": "simulation: stand-in LM = sleep of the measured s/fact, time-scaled",
        "bios": n_bios,
        "groups": len(groups),
        "facts": total_facts,
        "facts_per_bio": round(total_facts / n_bios, 2),
        "s_per_fact_measured": round(s_per_fact, 3),
        "time_scale": round(scale, 6),
        "workers": {},
    }
    with ray_session(None, num_cpus=max(WORKER_COUNTS)) as ray:
        for workers in WORKER_COUNTS:
            log(TAG, f"simulation: {workers} worker(s)")
            zero = _simulate(ray, workers, groups, 0.0, row)
            wall = _simulate(ray, workers, groups, latency, row)
            ideal = total_facts * latency / workers
            efficiency = ideal / wall
            study_h = STUDY_BIOS * (total_facts / n_bios) * s_per_fact / efficiency / 3600
            out["workers"][str(workers)] = {
                "overhead_ms_per_bio": round(1000 * zero / n_bios, 2),
                "scaled_wall_s": round(wall, 2),
                "scaled_ideal_s": round(ideal, 2),
                "efficiency": round(efficiency, 3),
                "study_hours_500_bios_x_N_lms_on_N_machines": round(study_h, 2),
            }
    return out


def bench_dense(root: Path, work: Path, n_queries: int) -> dict:
    """The dev pages' dense vectors: one process against 2 Ray workers x 1 thread."""
    import faiss

    from factscore_local.distributed import build_index_with_ray
    from factscore_local.index.builder import BuildOptions, build_index
    from factscore_local.index.dense import Embedder

    paths = {"single": work / "dense-single", "ray": work / "dense-ray"}
    for path in paths.values():
        shutil.rmtree(path, ignore_errors=True)
    source = root / DEV_DB
    log(TAG, "dense: the dev pages in one process")
    single = build_index(
        BuildOptions(source=source, out=paths["single"], bm25=False, progress=False, threads=2)
    )
    log(TAG, "dense: the dev pages on Ray, 2 workers x 1 thread")
    start = time.perf_counter()
    on_ray = build_index_with_ray(
        BuildOptions(source=source, out=paths["ray"], bm25=False, progress=False), workers=2
    )
    ray_total = time.perf_counter() - start
    passages = single["counts"]["passages"]
    queries = [
        fact
        for bio in labeled_bios(root, ("ChatGPT",), responding=True)["ChatGPT"]
        for _, fact in model_facts(bio.annotations) or []
    ][:n_queries]
    vectors = Embedder("minilm", device="cpu").encode(queries)
    tops = {}
    for name, path in paths.items():
        index = faiss.read_index(str(path / "dense.faiss"))
        tops[name] = index.search(vectors, 5)[1]
    import sqlite3

    def table(path: Path) -> tuple[list[int], np.ndarray]:
        conn = sqlite3.connect(path / "knowledge.db")
        rows = conn.execute("SELECT passage_id, vector FROM embeddings ORDER BY passage_id")
        rows = rows.fetchall()
        conn.close()
        return [r[0] for r in rows], np.stack([np.frombuffer(r[1], np.float32) for r in rows])

    ids_a, vec_a = table(paths["single"])
    ids_b, vec_b = table(paths["ray"])
    single_s = single["timings"]["dense_s"]
    ray_s = on_ray["timings"]["dense_s"]
    return {
        "pages": single["counts"]["pages"],
        "passages": passages,
        "single": {"dense_s": single_s, "passages_per_s": round(passages / single_s, 2)},
        "ray_2x1": {
            "dense_s": ray_s,
            "passages_per_s": round(passages / ray_s, 2),
            "with_ingest_s": round(ray_total, 1),
        },
        "same_passage_ids": ids_a == ids_b,
        "max_abs_vector_difference": float(np.abs(vec_a - vec_b).max()),
        "queries": len(queries),
        "top5_identical": bool((tops["single"] == tops["ray"]).all()),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_option(ap)
    ap.add_argument("--bios", type=int, default=10, help="ChatGPT dev bios of the eval part")
    ap.add_argument(
        "--sentences",
        type=int,
        default=None,
        help="keep each bio's first N annotated sentences (default: all)",
    )
    ap.add_argument(
        "--evidence-budget",
        type=int,
        default=None,
        help="the estimator's evidence budget (default: its own)",
    )
    ap.add_argument("--queries", type=int, default=100, help="queries of the dense part")
    ap.add_argument(
        "--scaled-seconds",
        type=float,
        default=20.0,
        help="wall seconds of the simulation's 1-worker run",
    )
    ap.add_argument("--work", type=Path, default=BENCH_OUT / "ray", help="scratch folder")
    ap.add_argument("--out", type=Path, default=None, help="results file (default: ray.json)")
    args = ap.parse_args(argv)
    argv = list(argv if argv is not None else __import__("sys").argv[1:])
    load_before = os.getloadavg()[0]
    root = data_root(args.data)
    args.work.mkdir(parents=True, exist_ok=True)
    figures_tree = {
        "eval": bench_eval(root, args.work, args.bios, args.sentences, args.evidence_budget)
    }
    log(TAG, json.dumps(figures_tree["eval"]))
    row = json.loads((args.work / "ray.jsonl").read_text("utf-8").splitlines()[0])
    s_per_fact = figures_tree["eval"]["single_2_threads"]["s_per_fact"]
    figures_tree["simulation"] = bench_simulation(root, s_per_fact, row, args.scaled_seconds)
    figures_tree["dense"] = bench_dense(root, args.work, args.queries)
    from scripts.common import flatten

    record = results_record(
        "ray",
        "scripts.notebook.bench_ray",
        argv,
        {
            "eval": f"the first {args.bios} responding ChatGPT dev bios, atomic facts given "
            f"(first {args.sentences or 'all'} sentences), {SMALL_LM}, evidence budget "
            f"{args.evidence_budget or 'default'}",
            "simulation": "fact counts of the 3 x 98 labeled dev bios",
            "dense": "enwiki-20230401-dev.db, minilm",
        },
        flatten(figures_tree),
        results=figures_tree,
        # Other work shared the 2 cores: the load average says how much.
        load_average={"start": round(load_before, 1), "end": round(os.getloadavg()[0], 1)},
    )
    path = write_results(record, args.out)
    log(TAG, f"wrote {path}")


if __name__ == "__main__":
    main()
