"""``fscore build-index --engine ray``: the dense stage spread over Ray workers.

Ingest and Lucene BM25 run here as in the single process (one machine indexes all of
Wikipedia's passages for BM25 in minutes). The dense stage is the slow one: the driver
reads the passages not embedded yet in shards, each worker (an actor with its own encoder,
on a GPU when it has one) embeds whole shards, and the driver writes every shard's vectors
to the store's ``embeddings`` table in passage-id order, then builds the FAISS index from
the table: the same files as the single process, and the same resume point (embedded
passages are always a prefix of the ids), whichever engine resumes a killed build.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

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
from factscore_local.distributed.ray_eval import next_run, worker_name
from factscore_local.index.builder import BuildOptions, build_index, peak_rss_mb


class EmbedWorker:
    """One Ray worker: a sentence-transformers encoder, loaded once."""

    def __init__(self, spec: str, device: str, threads: int) -> None:
        self.spec = spec
        self.device = device
        self.threads = threads
        self.embedder = None

    def _ready(self):
        if self.embedder is None:
            from factscore_local.index.dense import Embedder
            from factscore_local.runtime.offline import enforce_offline

            enforce_offline()
            import torch

            torch.set_num_threads(self.threads)
            self.embedder = Embedder(self.spec, device=self.device)
        return self.embedder

    def prepare(self) -> dict:
        embedder = self._ready()
        return {"pid": os.getpid(), "device": embedder.device, "dim": embedder.dim}

    def encode(self, ids: list[int], texts: list[str]) -> tuple[list[int], np.ndarray]:
        """Unit vectors of a shard's passage inputs, batched as the single process does."""
        return ids, self._ready().encode(texts, batch_size=64)

    def pid(self) -> int:
        return os.getpid()


@dataclass
class DenseRun:
    """What the Ray dense stage did."""

    passages: int  # embedded by this run
    shards: int
    seconds: float
    workers: list[dict]
    pool: PoolStats


def _shards(store, after_id: int, size: int) -> Iterator[tuple[list[int], list[str]]]:
    from factscore_local.index.dense import passage_input

    passages = store.iter_passages(after_id=after_id)
    while True:
        part = list(itertools.islice(passages, size))
        if not part:
            return
        yield [p for p, _, _ in part], [passage_input(t, text) for _, t, text in part]


def embed_with_ray(
    out: Path,
    spec: str,
    *,
    address: str | None = None,
    workers: int = 2,
    threads_per_worker: int = 1,
    gpus_per_worker: float = 0,
    device: str = "auto",
    shard_passages: int = 256,
    window_shards: int | None = None,
    progress: bool = True,
) -> DenseRun:
    """Embeds the passages of an index directory's store that have no vector for ``spec``
    yet, on Ray workers, and writes the FAISS index.

    Args:
        out: an index directory whose ingest is done.
        spec: the dense model (``minilm`` or a local sentence-transformers directory).
        address: None for a new local cluster; ``auto`` or ``HOST:PORT`` for a running one.
        workers: actors, each with its own encoder.
        threads_per_worker: CPU threads (and Ray CPUs) of each worker.
        gpus_per_worker: GPUs of each worker (0: the CPU).
        device: the encoder's device on a worker with a GPU (``auto``, ``cuda``).
        shard_passages: passages per work item (the single process's commit batch).
        window_shards: shards read ahead of the last one written (default: 4 per worker).
        progress: show a progress bar.

    Returns:
        A :class:`DenseRun`.
    """

    from factscore_local.index.dense import (
        DENSE_INDEX,
        build_faiss_index,
        dense_resume,
        store_vectors,
    )
    from factscore_local.index.store import STORE_NAME, Store

    start = time.perf_counter()
    device = worker_device(device, gpus_per_worker)
    store = Store(out / STORE_NAME)
    try:
        done_up_to, bar = dense_resume(store, spec, progress, "dense (ray)")
        shards = _shards(store, done_up_to, shard_passages)
        window = window_shards or 4 * workers
        with ray_session(address, num_cpus=local_cpus(workers, threads_per_worker)) as ray:
            actor_class = ray.remote(EmbedWorker)
            next_run()
            actors = [
                actor_class.options(
                    **actor_options(threads_per_worker, gpus_per_worker, worker_name("embed", i))
                ).remote(spec, device, threads_per_worker)
                for i in range(workers)
            ]
            pool = PoolStats()
            n_shards = embedded = 0
            try:
                infos = start_actors(ray, actors, "embed")
                dims = {w["dim"] for w in infos}
                if len(dims) != 1:
                    raise RayEngineError(f"the embed workers disagree on the dimension: {dims}")
                # A window of shards at a time: the driver holds the vectors of finished
                # shards until every shard before them is written, so the store's embedded
                # passages stay a prefix of the ids (the single process's resume point).
                while True:
                    window_items = list(itertools.islice(shards, window))
                    if not window_items:
                        break
                    results: dict[int, tuple[list[int], np.ndarray]] = {}
                    written = 0

                    def on_result(index: int, value, results=results) -> None:
                        nonlocal written, embedded
                        results[index] = value
                        while written in results:
                            ids, vectors = results.pop(written)
                            store_vectors(store.conn, spec, ids, vectors)
                            store.conn.commit()
                            bar.update(len(ids))
                            embedded += len(ids)
                            written += 1

                    part = run_items(
                        ray,
                        actors,
                        window_items,
                        lambda actor, item: actor.encode.remote(*item),
                        on_result,
                        "embed",
                    )
                    pool.resubmitted += part.resubmitted
                    pool.actors_lost += part.actors_lost
                    n_shards += len(window_items)
            finally:
                kill_actors(ray, actors)
                bar.close()
        build_faiss_index(store.conn, spec, dims.pop(), out / DENSE_INDEX)
        store.set_state("dense_model", {"spec": spec, "dim": infos[0]["dim"]})
        store.conn.commit()
    finally:
        store.close()
    seconds = time.perf_counter() - start
    pool.seconds = seconds
    return DenseRun(embedded, n_shards, seconds, infos, pool)


def build_index_with_ray(
    opts: BuildOptions,
    *,
    address: str | None = None,
    workers: int = 2,
    threads_per_worker: int = 1,
    gpus_per_worker: float = 0,
) -> dict:
    """``build_index`` with its dense stage on Ray workers; the same index directory.

    Args:
        opts: the build's options, as for ``index.builder.build_index``.
        address: None for a new local cluster; ``auto`` or ``HOST:PORT`` for a running one.
        workers: embedding actors.
        threads_per_worker: CPU threads of each.
        gpus_per_worker: GPUs of each (0: the CPU).

    Returns:
        The manifest, as ``build_index`` returns it.

    Raises:
        RayEngineError: Ray missing, a cluster that cannot be reached, or a worker that
            cannot load the encoder.

    Example:
        >>> build_index_with_ray(BuildOptions(source=src, out=out), workers=4)  # doctest: +SKIP
    """
    from factscore_local.index.manifest import write_manifest
    from factscore_local.index.store import STORE_NAME, Store

    if workers < 1 or threads_per_worker < 1 or gpus_per_worker < 0:
        raise ValueError("workers and threads per worker must be at least 1, GPUs at least 0")
    if opts.dense_leads:  # a few vectors per page: nothing to spread over workers
        raise ValueError("--dense-leads builds on one machine; leave out --engine ray")
    require_ray()
    if address:  # before the long ingest
        check_reachable(address)
    manifest = build_index(replace(opts, dense=None))  # ingest and BM25, resumable
    if not opts.dense:
        return manifest
    out = opts.out.expanduser()
    store = Store(out / STORE_NAME)
    try:
        finished = store.get_state("dense_done") == opts.dense
    finally:
        store.close()
    if not finished:
        run = embed_with_ray(
            out,
            opts.dense,
            address=address,
            workers=workers,
            threads_per_worker=threads_per_worker,
            gpus_per_worker=gpus_per_worker,
            device=opts.device,
            shard_passages=opts.dense_batch,
            progress=opts.progress,
        )
    store = Store(out / STORE_NAME)
    try:
        if not finished:
            timings = store.get_state("timings", {})
            timings["dense_s"] = timings.get("dense_s", 0.0) + run.seconds
            store.set_state("timings", timings)
            store.set_state("dense_done", opts.dense)
            store.conn.commit()
        return write_manifest(out, store, opts.source.expanduser().resolve(), opts, peak_rss_mb())
    finally:
        store.close()
