"""The Ray engine behind ``fscore eval --engine ray``: the same result and run record as
``api.run_config``, with the rows scored on Ray workers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factscore_local.config import EvalConfig
from factscore_local.pipeline.records.inputs import Bio

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class RayOptions:
    """Where and on how many workers a Ray run goes.

    Attributes:
        address: None for a new local cluster; ``auto`` or ``HOST:PORT`` for a running one.
        workers: actors, each with its own copy of the model.
        threads_per_worker: CPU threads (Ray CPUs) of each worker.
        gpus_per_worker: GPUs of each worker (0: the CPU).
    """

    address: str | None = None
    workers: int = 2
    threads_per_worker: int = 1
    gpus_per_worker: float = 0

    def as_run_option(self) -> dict:
        return {"engine": "ray", "address": self.address, "workers": self.workers,
                "threads_per_worker": self.threads_per_worker,
                "gpus_per_worker": self.gpus_per_worker}  # fmt: skip


def run_config_with_ray(
    config: EvalConfig,
    bios: Sequence[Bio],
    *,
    ray: RayOptions,
    out: str | Path | None = None,
    inputs: Sequence[Path] = (),
    run_options: Mapping[str, Any] | None = None,
    progress: bool = False,
):
    """``api.run_config`` on Ray: the same ``EvalResult``, rows and run record.

    Args:
        config: the run's settings.
        bios: the bios to score.
        ray: where and on how many workers.
        out: where to write the rows and the run record; None writes nothing.
        inputs: the files the bios came from, for the record.
        run_options: how the bios were chosen, for the record (the engine is added).
        progress: show a progress bar.

    Returns:
        A ``results.EvalResult``.

    Example:
        >>> run_config_with_ray(config, bios, ray=RayOptions(workers=4))  # doctest: +SKIP
    """
    from factscore_local.api import finish_run
    from factscore_local.distributed.ray_eval import evaluate_with_ray

    out = Path(out) if out is not None else None
    run = evaluate_with_ray(
        config,
        list(bios),
        out,
        address=ray.address,
        workers=ray.workers,
        threads_per_worker=ray.threads_per_worker,
        gpus_per_worker=ray.gpus_per_worker,
        progress=progress,
    )
    options = {**dict(run_options or {}), **ray.as_run_option()}
    return finish_run(run.config or config, run.rows, run.components, out, inputs, options)


def evaluate_on_ray(
    generations,
    index: str | Path,
    *,
    ray: RayOptions,
    out: str | Path | None = None,
    cache: str | Path | None = None,
    settings_file: str | Path | None = None,
    n_samples: int | None = None,
    topic_half: int | None = None,
    progress: bool = False,
    **settings: Any,
):
    """``api.evaluate`` on Ray workers (``fscore eval --engine ray``).

    Args:
        generations: as for ``api.evaluate`` (paths, or ``{"topic", "output"}`` dicts).
        index: an index directory, at the same path on every node of the cluster.
        ray: where and on how many workers.
        out: where to write the rows and the run record.
        cache: the result cache (default ``<index>/eval-cache.db``).
        settings_file: thresholds written by ``fscore calibrate``.
        n_samples: only the first N bios of each file.
        topic_half: only the topics of this half (0 or 1).
        progress: show a progress bar.
        **settings: ``EvalConfig`` fields, as for ``api.evaluate``.

    Returns:
        A ``results.EvalResult``, the same as ``api.evaluate`` gives.

    Example:
        >>> evaluate_on_ray("bios.jsonl", "my-index", ray=RayOptions(workers=2))  # doctest: +SKIP
    """
    from factscore_local.api import load_config, read_generations

    config = load_config(index, cache=cache, settings_file=settings_file, **settings)
    bios, paths = read_generations(generations, n_samples, topic_half)
    return run_config_with_ray(
        config,
        bios,
        ray=ray,
        out=out,
        inputs=paths,
        run_options={"n_samples": n_samples, "topic_half": topic_half},
        progress=progress,
    )


def build_index_on_ray(source: str | Path, out: str | Path, *, ray: RayOptions, **options: Any):
    """``api.build_index`` with the dense stage on Ray workers (``fscore build-index
    --engine ray``); the same index directory.

    Args:
        source: the Wikipedia source, as for ``api.build_index``.
        out: the index directory to create (or resume).
        ray: where and on how many embedding workers.
        **options: ``BuildOptions`` fields, as for ``api.build_index``.

    Returns:
        The index's manifest.

    Example:
        >>> build_index_on_ray("pages.db", "my-index", ray=RayOptions(workers=4))  # doctest: +SKIP
    """
    from factscore_local.api import build_options
    from factscore_local.distributed.ray_build import build_index_with_ray

    return build_index_with_ray(
        build_options(source, out, **options),
        address=ray.address,
        workers=ray.workers,
        threads_per_worker=ray.threads_per_worker,
        gpus_per_worker=ray.gpus_per_worker,
    )
