"""What the estimator works with, built by one factory from the config: the knowledge
source, the result cache, the LM, the NP scorer, the decomposer and the state head.

Models load on first use (``Lazy``), so a run that needs no LM never loads one. Tests and
benchmarks pass their own parts to ``build_components`` instead of touching private fields.
Every model call goes through the cached wrappers of ``cached_models.py``: results are keyed
by the model's identity and the exact input, so a killed run resumes without recomputing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from factscore_local.config import EvalConfig
from factscore_local.lm.protocol import LM, PREFIX_STATES
from factscore_local.npm.defaults import JOINT_NP

# CachedLM is part of this module's API (tests and scripts build their own parts with it).
from factscore_local.pipeline.cached_models import CachedLM, CachedNP
from factscore_local.runtime.cache import ResultCache, key_of
from factscore_local.runtime.progress import Progress

if TYPE_CHECKING:
    from factscore_local.pipeline.plan import RunPlan

T = TypeVar("T")


class Lazy(Generic[T]):
    """A value made on first ``get()``."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._value: T | None = None
        self.loaded = False
        self._hooks: list[Callable[[T], None]] = []

    @classmethod
    def of(cls, value: T) -> Lazy[T]:
        lazy = cls(lambda: value)
        lazy.get()
        return lazy

    def get(self) -> T:
        if not self.loaded:
            value = self._make()
            for hook in self._hooks:  # a hook that raises leaves it unmade
                hook(value)
            self._value, self.loaded = value, True
        return self._value  # type: ignore[return-value]

    def when_made(self, hook: Callable[[T], None]) -> None:
        """Calls ``hook(value)`` once the value is made (now, if it is)."""
        if self.loaded:
            hook(self._value)  # type: ignore[arg-type]
        else:
            self._hooks.append(hook)


@dataclass
class Components:
    knowledge: Any  # index.reader.KnowledgeSource
    cache: ResultCache
    lm: Lazy[CachedLM]
    np: Lazy[CachedNP]
    decomposer: Lazy[Any]  # factscore_local.pipeline.decomposition.decompose.Decomposer
    progress: Progress
    head: Lazy[Any]  # state_head.StateHead

    def prepare(self, plan: RunPlan, on_lm: Callable[[LM], None] | None = None) -> None:
        """Holds the run to its plan: the LM is checked against it as soon as it is loaded,
        before any work is given to it (``PlanError`` names what it lacks), then handed to
        ``on_lm``; a head rule's state head is loaded now (a missing or foreign head stops
        the run, not each bio). A run whose bios need no model loads none."""
        if plan.loads_lm:
            self.lm.when_made(lambda cached: plan.check(cached.lm))
            if on_lm is not None:
                self.lm.when_made(lambda cached: on_lm(cached.lm))
        if plan.head:
            self.head.get()


# Raw LMs loaded in this process, by (spec, backend, threads): estimators with other
# settings (the scripts make many) share one copy of the weights.
_LOADED_LMS: dict[tuple, Any] = {}


def load_shared_lm(config: EvalConfig) -> LM:
    from factscore_local.lm import load_lm

    key = (config.lm, config.backend, config.threads, config.device, config.lm_dtype,
           config.lm_model, config.lm_concurrency)  # fmt: skip
    if key not in _LOADED_LMS:
        _LOADED_LMS[key] = load_lm(
            config.lm,
            config.backend,
            threads=config.threads,
            device=config.device,
            dtype=config.lm_dtype,
            lm_model=config.lm_model,
            concurrency=config.lm_concurrency,
        )
    return _LOADED_LMS[key]


def _cached_lm(config: EvalConfig, raw: LM, cache: ResultCache, progress: Progress) -> CachedLM:
    """The LM behind the result cache, keyed by what the LM says identifies its results."""
    identity = raw.cache_identity(cache)
    if config.prefix_states is not None and PREFIX_STATES in raw.capabilities:
        raw.keep_prefix_states(config.prefix_states, identity)  # for every run that uses it
    return CachedLM(raw, cache, identity, progress)


def _np_scorer(
    config: EvalConfig, lm: Lazy[CachedLM], cache: ResultCache, progress: Progress
) -> CachedNP:
    """NP's scorer: "lm" (the causal-LM stand-in with the verifier's LM), "minilm" (the
    embedded encoder with NPM's math) or a masked-LM directory (NPM's math)."""
    spec = config.np_model_spec
    if spec == JOINT_NP:
        raise ValueError("the lm-joint NP is read from the Retrieve→LM pass, not a scorer")
    if spec == "lm":
        from factscore_local.npm.causal_np import CausalNPScorer

        cached = lm.get()
        return CachedNP(CausalNPScorer(cached.lm), cache, f"causal|{cached.model_id}", progress)
    from factscore_local.npm import NPScorer, load_stopword_ids

    if spec == "minilm":
        from factscore_local.index.models import minilm_path

        spec = str(minilm_path())
    stopwords = load_stopword_ids(config.np_stopwords) if config.np_stopwords else None
    scorer_id = Path(spec).name
    if stopwords:  # results depend on the skipped ids: they name the scorer in the cache
        scorer_id += "|stopwords:" + key_of(sorted(stopwords))[:16]
    return CachedNP(NPScorer(spec, stopword_ids=stopwords), cache, scorer_id, progress)


def _state_head(config: EvalConfig):
    """The head a head rule weighs: the config's file, else the one shipped for the LM."""
    from factscore_local.config import model_name
    from factscore_local.pipeline.signals.state_head import load_head, shipped_head_path

    path = config.head or shipped_head_path(model_name(config.lm, config.lm_model))
    if config.head is None and not path.is_file():
        raise ValueError(f"{config.verifier} weighs a state head, and none ships for "
                         f"{model_name(config.lm, config.lm_model)}: train one with "
                         f"'fscore calibrate --head' and pass its settings file")  # fmt: skip
    return load_head(str(path))


def _decomposer(config: EvalConfig, lm: Lazy[CachedLM]):
    from factscore_local.pipeline.decomposition.decompose import (
        REFERENCE_INSTRUCTION,
        Decomposer,
        DemoSelector,
        load_demos,
        parse_facts_reference,
    )

    selector = DemoSelector(load_demos(config.demos))
    if config.decompose_prompt == "reference":
        return Decomposer(
            lm.get(),
            selector,
            instruction=REFERENCE_INSTRUCTION,
            prime="",
            parser=parse_facts_reference,
            max_sentences=config.max_sentences,
        )
    return Decomposer(lm.get(), selector, max_sentences=config.max_sentences)


def build_components(
    config: EvalConfig,
    *,
    knowledge=None,
    cache: ResultCache | None = None,
    lm=None,
    np_scorer: CachedNP | None = None,
) -> Components:
    """The estimator's parts for ``config``; any part given is used as it is. ``lm`` may be
    a loaded ``LocalLM`` (wrapped in a cache with its identity) or a ``CachedLM``."""
    if knowledge is None:
        from factscore_local.index.reader import KnowledgeSource

        knowledge = KnowledgeSource(config.index, device=config.device)
    if cache is None:
        cache = ResultCache(config.cache)
    progress = Progress()
    if isinstance(lm, CachedLM):
        lm.progress = progress
        lm_part = Lazy.of(lm)
    else:
        raw = lm
        lm_part = Lazy(
            lambda: _cached_lm(
                config, raw if raw is not None else load_shared_lm(config), cache, progress
            )
        )
    if np_scorer is not None:
        np_scorer.progress = progress
        np_part = Lazy.of(np_scorer)
    else:
        np_part = Lazy(lambda: _np_scorer(config, lm_part, cache, progress))
    return Components(
        knowledge=knowledge,
        cache=cache,
        lm=lm_part,
        np=np_part,
        decomposer=Lazy(lambda: _decomposer(config, lm_part)),
        progress=progress,
        head=Lazy(lambda: _state_head(config)),
    )
