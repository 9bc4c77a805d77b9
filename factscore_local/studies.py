"""The package as the benchmarks in ``scripts/`` reach it: run a config on bios, verify facts,
re-decide rows from their recorded signals, seed and export result caches, and the
pipeline's evidence and decomposition steps one at a time.

The benchmarks import the package's public names only (``tests/test_scripts_seam.py``
fails on a private one); what they need of the pipeline's internals is named here, so that
a refactor of the pipeline changes this module, not every benchmark.

Example:
    >>> from factscore_local import studies
    >>> from factscore_local.config import build_config
    >>> config = build_config({"index": "dev-index", "use_atomic_facts": True})  # doctest: +SKIP
    >>> rows = studies.run_on_bios(config, bios).out  # doctest: +SKIP
    >>> studies.redecide(rows, config.verifier, thresholds)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from factscore_local.config import EvalConfig
from factscore_local.pipeline.components import Components, Lazy
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.rows import BioRow, FactResult
from factscore_local.pipeline.signals.compute import FactQuery


@dataclass(frozen=True)
class Run:
    """What a run gave: its rows (or fact results) and how many model results it computed
    (the cache's misses: 0 when every result came from the cache)."""

    out: list
    computed: int


def run_on_bios(config: EvalConfig, bios: Sequence[Bio], lm=None, progress: bool = False) -> Run:
    """Scores bios with a config, as ``fscore eval`` does, without writing anything.

    Args:
        config: the run's settings (``config.build_config``).
        bios: the bios to score.
        lm: an LM already loaded (``components.load_shared_lm``), kept across runs; None
            loads the config's when it is first needed.
        progress: show a progress bar.

    Returns:
        One ``BioRow`` per bio (``Run.out``) and the results computed.
    """
    from factscore_local.pipeline.components import build_components
    from factscore_local.pipeline.estimator import Estimator

    estimator = Estimator(config, build_components(config, lm=lm) if lm is not None else None)
    rows: list[BioRow] = estimator.run(list(bios), None, progress=progress)
    return Run(rows, estimator.cache.misses)


def verify_facts(config: EvalConfig, queries: Sequence[FactQuery | tuple[str, str, str]]) -> Run:
    """Verifies facts (``FactQuery``, or (topic, page title, fact)) with a config's
    evidence, LM and rule; one ``FactResult`` per query (``Run.out``)."""
    from factscore_local.pipeline.estimator import Estimator

    estimator = Estimator(config)
    results: list[FactResult] = estimator.verify(queries)
    return Run(results, estimator.cache.misses)


def redecide(rows: list[BioRow], verifier: str, thresholds, gamma: float = 10.0) -> list[BioRow]:
    """Rows decided again by ``verifier`` with other ``thresholds`` (``Thresholds``) from
    their recorded signals, and scored again: what ``fscore eval --settings`` would give,
    with no model run."""
    from factscore_local.labels.calibration import apply_thresholds

    return apply_thresholds(rows, verifier, thresholds, gamma)


def seed_cache(
    cache: Path, exports: Sequence[Path], skip_kinds: Sequence[str] = ()
) -> list[tuple[Path, int, int]]:
    """Imports exported model results (``fscore cache export`` files) into a cache file,
    stored ones winning, those of ``skip_kinds`` left out; per export, (the file, results
    added, results already there)."""
    from factscore_local.runtime.cache import ResultCache

    store = ResultCache(cache)
    try:
        return [(Path(e), *store.import_file(Path(e), skip_kinds)) for e in exports]
    finally:
        store.close()


def export_results(
    cache: Path, out: Path, kinds: Sequence[str] | None = None, exclude: Sequence[Path] = ()
) -> int:
    """Writes a cache's results (of ``kinds``) that none of the files of ``exclude`` holds to
    ``out`` (an ``fscore cache export`` file); returns how many."""
    from factscore_local.runtime.cache import ResultCache

    store = ResultCache(cache)
    try:
        return store.export(out, kinds, exclude=list(exclude))
    finally:
        store.close()


def decomposer(config: EvalConfig, lm):
    """The config's decomposition (sentences to atomic facts) over a cached LM (a
    ``CachedLM``, or a ``Lazy`` of one)."""
    from factscore_local.pipeline.components import _decomposer

    return _decomposer(config, lm if isinstance(lm, Lazy) else Lazy.of(lm))


def own_passages(queries: list[FactQuery], parts: Components, k: int, method: str) -> list:
    """Each fact's own top-k hits: within its page (query: topic and fact), or over the
    whole index for a fact without a page; ``method`` is the retrieval (bm25, dense)."""
    from factscore_local.pipeline.signals import passes

    return passes.own_passages(queries, parts, k, method)


def judged_on(
    queries: list[FactQuery],
    hits: list,
    parts: Components,
    config: EvalConfig,
    token_len: Callable[[str], int],
) -> list[tuple | None]:
    """The passages each fact is judged against under ``config.evidence`` (a shared block,
    a segment of its page, or None for its own hits), from its own hits
    (:func:`own_passages`); ``token_len`` counts a passage's tokens."""
    from factscore_local.pipeline.signals import passes

    return passes.judged_on(queries, hits, parts, config, token_len)
