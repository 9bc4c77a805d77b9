"""``fscore eval --engine ray``: the estimator on a pool of Ray actors.

Bios are grouped by topic, so that the bios of one page (one per subject LM) go to the
same worker and still share its evidence and the LM's cached prompt prefix. Each worker is
an actor that builds the estimator's components once (its LM loads once) and scores whole
groups with ``Estimator.run``, exactly as the single process scores them; the rows come
back to the driver, which writes them in input order: the same JSONL rows, and (through
:class:`RayEvaluation.components`) the same run record, as ``Estimator.run``.

Resuming. Workers read and write the run's result cache (``config.cache``: one SQLite file
that the workers of one machine share; on a cluster, a path on a shared file system, or
each node keeps its own). The driver also appends each finished row to a journal beside
the output (``OUT.partial.jsonl``: ``journal.py``), keyed by its place in the input: a
driver killed mid-run starts again from the journal without sending a finished bio out
again, and a row is written once however many times a crashed worker's bios were retried.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from factscore_local.config import EvalConfig
from factscore_local.distributed.cluster import (
    PoolStats,
    RayEngineError,
    actor_options,
    check_reachable,
    kill_actors,
    local_cpus,
    ray_session,
    require_ray,
    run_items,
    start_actors,
    worker_device,
)
from factscore_local.distributed.journal import Journal, journal_path, read_journal, write_rows
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.rows import BioRow

# Runs of this driver process so far: each run names its workers afresh (Ray frees the
# name of a killed actor later, not at once).
_RUNS = {"n": 0}


def worker_name(kind: str, index: int) -> str:
    """The Ray name of worker ``index`` of this driver's current run (``kind``: ``eval``
    or ``embed``), for ``ray.get_actor`` (a test kills one by it)."""
    return f"fscore-{kind}-{os.getpid()}-{_RUNS['n']}-{index}"


def next_run() -> None:
    """Starts a new run's worker names."""
    _RUNS["n"] += 1


class EvalWorker:
    """One Ray worker: an estimator whose components (and LM) are built once."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        self.estimator = None

    def _ready(self):
        if self.estimator is None:
            from factscore_local.pipeline.estimator import Estimator
            from factscore_local.runtime.offline import enforce_offline

            enforce_offline()
            estimator = Estimator(self.config)
            if estimator.prepare().loads_lm:  # loaded (and checked) before the first bio
                estimator.lm()
            self.estimator = estimator
        return self.estimator

    def prepare(self) -> dict:
        """Loads the components; says where this worker runs and with which LM."""
        components = self._ready().components
        raw = components.lm.get().lm if components.lm.loaded else None
        return {
            "pid": os.getpid(),
            "backend": None if raw is None else raw.backend,
            "device": None if raw is None else str(raw.device),
            "lm": None if raw is None else raw.fingerprint(components.cache),
        }

    def evaluate(self, bios: list[Bio]) -> dict:
        """Rows of a group of bios (in the order given), with the cache's counts."""
        estimator = self._ready()
        cache = estimator.components.cache
        hits, misses = cache.hits, cache.misses
        start = time.perf_counter()
        rows = estimator.run(bios, None, progress=False)
        return {
            "rows": rows,
            "hits": cache.hits - hits,
            "misses": cache.misses - misses,
            "seconds": time.perf_counter() - start,
            "pid": os.getpid(),
        }

    def pid(self) -> int:
        return os.getpid()


@dataclass
class RemoteLM:
    """The LM the workers loaded, as the run record reads it: the fingerprint one of them
    reported (``EvalWorker.prepare``)."""

    entry: dict

    @property
    def backend(self) -> str:
        return self.entry.get("backend", "")

    @property
    def device(self) -> str:
        return self.entry.get("device", "cpu")

    def fingerprint(self, cache) -> dict:
        return dict(self.entry)


@dataclass
class RayEvaluation:
    """A finished Ray run: its rows in input order, and what the run record needs.

    ``components`` stands for the estimator's components in
    ``pipeline.run_record.build_record``: the driver's view of the result cache (with the
    workers' hit and miss counts) and the LM the workers loaded.
    """

    rows: list[BioRow]
    components: Any
    config: EvalConfig | None = None  # the run's settings, a server's fitted defaults applied
    workers: list[dict] = field(default_factory=list)
    pids: set[int] = field(default_factory=set)  # worker processes that returned rows
    resumed: int = 0  # rows taken from the journal of an interrupted run
    groups: int = 0
    pool: PoolStats = field(default_factory=PoolStats)
    seconds: float = 0.0


def group_by_topic(bios: Sequence[Bio]) -> list[list[int]]:
    """Positions of the bios, grouped by topic (input order inside a group), the groups
    with the longest outputs first so that workers end together. A bio without a topic
    (global evidence) is a group of its own."""
    groups: dict[str, list[int]] = {}
    for i, bio in enumerate(bios):
        topic = bio.topic.strip()
        groups.setdefault(topic or f"\x00{i}", []).append(i)
    size = {key: sum(len(bios[i].output) + 1 for i in group) for key, group in groups.items()}
    return [groups[key] for key in sorted(groups, key=lambda k: -size[k])]


def _run_key(config: EvalConfig, bios: Sequence[Bio]) -> str:
    """What a journal belongs to: the settings (threads aside) and the bios."""
    from factscore_local.pipeline.records.run_record import settings_of
    from factscore_local.runtime.cache import key_of

    settings = {k: v for k, v in settings_of(config).items() if k != "threads"}
    return key_of(settings, [(b.source, b.line, b.topic, b.output, b.error) for b in bios])


def _fingerprint_here(config: EvalConfig, device: str, cache) -> dict:
    """The run record's LM entry made on the driver, when no worker loaded the LM (every
    row came from the journal): the weights' digest, without loading them."""
    from factscore_local.lm.names import known_name
    from factscore_local.lm.server_client import is_server_spec
    from factscore_local.model_store import resolve_lm
    from factscore_local.runtime.weights import lm_fingerprint

    if is_server_spec(config.lm):
        name = known_name(config.lm, config.lm_model)
        return {"name": name, "path": None, "size": None, "sha256": None,
                "backend": "server", "device": "server", "url": config.lm}  # fmt: skip
    path = resolve_lm(config.lm)
    backend = config.backend if config.backend != "auto" else (
        "llama.cpp" if path.is_file() else "transformers")  # fmt: skip
    return {**lm_fingerprint(path, backend, cache), "device": device}


def worker_config(config: EvalConfig, threads_per_worker: int, gpus_per_worker: float):
    """The config each worker runs: its own thread count, and the CPU unless Ray gave it
    a GPU. With an LM server (``--lm URL``) every worker sends its requests to that
    server, which holds the model; the workers load none."""
    device = worker_device(config.device, gpus_per_worker)
    return replace(config, threads=threads_per_worker, device=device)


def check_server(config: EvalConfig) -> EvalConfig:
    """With ``--lm URL``: connects to the server before any worker starts, applies its
    model's fitted defaults where they were pending, and checks the run's plan against
    what it gives, so the run stops here naming the URL (each worker would otherwise fail
    on its own). Returns the config the workers run."""
    from factscore_local.config.build import with_served_defaults
    from factscore_local.lm import load_lm
    from factscore_local.lm.server_client import ServerError, is_server_spec
    from factscore_local.pipeline.plan import plan_run

    if not is_server_spec(config.lm):
        return config
    try:
        lm = load_lm(config.lm, lm_model=config.lm_model, concurrency=1)
    except ServerError as exc:
        raise RayEngineError(str(exc)) from exc
    try:
        config = with_served_defaults(config, lm.model_name)
        plan_run(config).check(lm)
    finally:
        lm.close()
    return config


def evaluate_with_ray(
    config: EvalConfig,
    bios: Sequence[Bio],
    out: Path | None = None,
    *,
    address: str | None = None,
    workers: int = 2,
    threads_per_worker: int = 1,
    gpus_per_worker: float = 0,
    progress: bool = True,
) -> RayEvaluation:
    """Scores ``bios`` on a pool of Ray workers, as ``Estimator(config).run`` would.

    Args:
        config: the estimator's settings (its ``threads`` and ``device`` are set per worker).
        bios: the input, as ``pipeline.inputs.read_bios`` reads it.
        out: where to write one JSON line per bio, in input order (None: not written).
        address: None for a new local cluster; ``auto`` or ``HOST:PORT`` for a running one.
        workers: actors, each with its own copy of the LM.
        threads_per_worker: CPU threads (and Ray CPUs) of each worker.
        gpus_per_worker: GPUs of each worker (0: the workers run on the CPU).
        progress: show a progress bar over the bios.

    Returns:
        A :class:`RayEvaluation`: the rows in input order, and the components for the
        run record.

    Raises:
        RayEngineError: Ray missing, a cluster that cannot be reached, a worker that
            cannot load its model, or a failure inside a worker (one line each).

    Example:
        >>> run = evaluate_with_ray(config, bios, Path("out.jsonl"), workers=2)  # doctest: +SKIP
        >>> len(run.rows) == len(bios)  # doctest: +SKIP
        True
    """
    from tqdm import tqdm

    from factscore_local.pipeline.components import Lazy
    from factscore_local.pipeline.plan import plan_run
    from factscore_local.runtime.cache import ResultCache

    if workers < 1 or threads_per_worker < 1 or gpus_per_worker < 0:
        raise ValueError("workers and threads per worker must be at least 1, GPUs at least 0")
    require_ray()
    if address:  # before anything is read or written
        check_reachable(address)
    config = check_server(config)
    remote_config = worker_config(config, threads_per_worker, gpus_per_worker)
    start = time.perf_counter()
    run_key = _run_key(config, bios)
    journal_file = journal_path(out) if out is not None else None
    done = read_journal(journal_file, run_key, bios) if journal_file else {}
    resumed = len(done)
    groups = [g for g in group_by_topic(bios) if any(i not in done for i in g)]
    journal = Journal(journal_file, run_key, done)
    hits = misses = 0
    pids: set[int] = set()
    infos: list[dict] = []
    pool = PoolStats()
    bar = tqdm(
        total=len(bios), initial=resumed, unit=" bios", desc="eval (ray)", disable=not progress
    )
    try:
        if groups:
            with ray_session(address, num_cpus=local_cpus(workers, threads_per_worker)) as ray:
                actor_class = ray.remote(EvalWorker)
                next_run()
                actors = [
                    actor_class.options(
                        **actor_options(threads_per_worker, gpus_per_worker, worker_name("eval", i))
                    ).remote(remote_config)
                    for i in range(workers)
                ]
                try:
                    infos = start_actors(ray, actors, "eval")

                    def on_result(index: int, value: dict) -> None:
                        nonlocal hits, misses
                        hits, misses = hits + value["hits"], misses + value["misses"]
                        pids.add(value["pid"])
                        for position, row in zip(groups[index], value["rows"], strict=True):
                            if position not in done:  # written once, however often computed
                                done[position] = row
                                journal.add(position, row)
                        bar.update(len(value["rows"]))

                    pool = run_items(
                        ray,
                        actors,
                        [[bios[i] for i in group] for group in groups],
                        lambda actor, item: actor.evaluate.remote(item),
                        on_result,
                        "eval",
                    )
                finally:
                    kill_actors(ray, actors)
    finally:
        bar.close()
        journal.close()
    rows = [done[i] for i in range(len(bios))]
    if out is not None:
        write_rows(out, rows)
        journal_file.unlink(missing_ok=True)
    cache = ResultCache(config.cache)
    cache.hits, cache.misses = hits, misses
    entry = next((w["lm"] for w in infos if w.get("lm")), None)
    if entry is None and plan_run(config).loads_lm:  # every row came from the journal
        entry = _fingerprint_here(config, remote_config.device, cache)
    lm = Lazy.of(SimpleNamespace(lm=RemoteLM(entry))) if entry is not None else Lazy(lambda: None)
    components = SimpleNamespace(cache=cache, lm=lm)
    return RayEvaluation(
        rows=rows,
        components=components,
        config=config,
        workers=infos,
        pids=pids,
        resumed=resumed,
        groups=len(groups),
        pool=pool,
        seconds=time.perf_counter() - start,
    )
