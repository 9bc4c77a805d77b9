"""``FactScorer``: FActScore's Python class, with local models and this project's index.

The constructor takes the reference's arguments; ``get_score`` returns the reference's
dictionary (``score``, ``init_score`` when ``gamma``, ``respond_ratio``,
``num_facts_per_response``, ``decisions``), with numpy floats as the reference's
``np.mean`` gives them. Atomic facts come from this project's decomposer and are verified
by its estimator (``pipeline.estimator``), whose verifier defaults to the LM's own (see
``config.build_config``). What the reference needs and this project does not (an OpenAI
key, a cost estimate of API calls) is accepted and ignored with one warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from factscore_local.compat.factscore.knowledge import check_index, ensure_index, source_file
from factscore_local.config import EvalConfig, build_config
from factscore_local.pipeline.components import build_components
from factscore_local.pipeline.decision.scoring import score_bio
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.rows import BioRow
from factscore_local.runtime.cache import ResultCache

# The reference's default knowledge source (its data_dir holds <name>.db / <name>.jsonl).
DEFAULT_KNOWLEDGE_SOURCE = "enwiki-20230401"
# The reference's estimators and the verifier each maps to (None: the LM's default
# verifier, which reads the LM's True/False on the retrieved passages).
MODEL_NAMES: dict[str, str | None] = {
    "retrieval+ChatGPT": None,
    "retrieval+llama": None,
    "retrieval+ChatGPT+npm": "retrieve-lm+np",
    "retrieval+llama+npm": "retrieve-lm+np",
    "npm": "np",
}
# abstain_detection_type of the reference -> this project's rule (None: never abstain).
ABSTAIN_TYPES = {
    None: "none",
    "none": "none",
    "generic": "generic",
    "perplexity_ai": "perplexity_ai",
}
COST_ESTIMATES = ("consider_cache", "ignore_cache")


@dataclass
class _Source:
    """A registered knowledge source: its index and the estimators reading it."""

    index: Path
    estimator: Estimator  # decomposes generations
    given_facts: Estimator  # verifies atomic facts the caller gives (same components)


class FactScorer:
    """FActScore's scorer (``factscore.factscorer.FactScorer``), offline.

    Args:
        model_name: The reference's estimator name: ``retrieval+ChatGPT`` (default) and
            ``retrieval+llama`` use the local LM's default verifier; ``...+npm`` adds NP
            (``retrieve-lm+np``); ``npm`` is NP alone.
        data_dir: Where ``<name>.db`` / ``<name>.jsonl`` of a knowledge source registered
            without paths are looked for.
        model_dir: Where ``lm`` is looked for when it names neither an embedded model nor
            an existing path.
        cache_dir: Where the indexes built from knowledge sources and the result cache
            (``eval-cache.db``) are kept; created if missing.
        openai_key: Not used (no API); a value given is ignored with a warning.
        cost_estimate: Not used (no API cost); a value given is ignored with a warning.
        abstain_detection_type: ``None`` (never abstain, the reference's default),
            ``"generic"`` or ``"perplexity_ai"``.
        batch_size: Generations verified together (facts of one page share their prompt
            prefix within a batch).
        index: An index directory built with ``fscore build-index``, registered as the
            default knowledge source ``enwiki-20230401``.
        lm: The local LM: an embedded model's name, a GGUF file or a Hugging Face
            directory (None: the default embedded model).
        device: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``.
        **settings: Any other field of ``factscore_local.config.EvalConfig`` (``verifier``,
            ``retrieval``, ``k``, ``evidence``, ``margin``, ...).

    Raises:
        ValueError: An unknown model name, abstain type or setting.

    Example:
        >>> fs = FactScorer(lm="qwen2.5-coder-0.5b-instruct-q4_k_m")  # doctest: +SKIP
        >>> fs.register_knowledge_source("enwiki-dev", db_path="enwiki-20230401-dev.db")
        ... # doctest: +SKIP
        >>> out = fs.get_score(["Taral Hicks"], ["Taral Hicks is an American actress."],
        ...                    knowledge_source="enwiki-dev")  # doctest: +SKIP
        >>> sorted(out)  # doctest: +SKIP
        ['decisions', 'init_score', 'num_facts_per_response', 'respond_ratio', 'score']
    """

    def __init__(
        self,
        model_name: str = "retrieval+ChatGPT",
        data_dir: str | Path = ".cache/factscore",
        model_dir: str | Path = ".cache/factscore",
        cache_dir: str | Path = ".cache/factscore",
        openai_key: str | None = None,
        cost_estimate: str | None = None,
        abstain_detection_type: str | None = None,
        batch_size: int = 256,
        *,
        index: str | Path | None = None,
        lm: str | Path | None = None,
        device: str = "auto",
        **settings: Any,
    ) -> None:
        if model_name not in MODEL_NAMES:
            raise ValueError(
                f"model_name must be one of {', '.join(MODEL_NAMES)}; got {model_name!r}"
            )
        if abstain_detection_type not in ABSTAIN_TYPES:
            known = ", ".join(str(k) for k in ABSTAIN_TYPES)
            raise ValueError(f"abstain_detection_type must be one of {known}; "
                             f"got {abstain_detection_type!r}")  # fmt: skip
        if cost_estimate is not None and cost_estimate not in COST_ESTIMATES:
            raise ValueError(f"cost_estimate must be one of {', '.join(COST_ESTIMATES)}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("batch_size must be a positive integer")
        ignored = [n for n, v in (("openai_key", openai_key), ("cost_estimate", cost_estimate))
                   if v is not None]  # fmt: skip
        if ignored:
            warnings.warn(
                f"FactScorer runs local models with no API: {' and '.join(ignored)} "
                f"{'is' if len(ignored) == 1 else 'are'} ignored",
                UserWarning,
                stacklevel=2,
            )
        self.model_name = model_name
        self.data_dir = Path(data_dir)
        self.model_dir = Path(model_dir)
        self.cache_dir = Path(cache_dir)
        self.abstain_detection_type = abstain_detection_type
        self.batch_size = batch_size
        self.device = device
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._options: dict[str, Any] = {
            **settings,
            "lm": self._resolve_lm(lm),
            "device": device,
            "abstain": ABSTAIN_TYPES[abstain_detection_type],
            "chunk_bios": batch_size,
            "validate": False,  # no human labels here
            "cache": self.cache_dir / "eval-cache.db",
        }
        if MODEL_NAMES[model_name] is not None:
            self._options.setdefault("verifier", MODEL_NAMES[model_name])
        self._config(self.cache_dir)  # bad settings fail here, not at the first score
        self._cache: ResultCache | None = None
        self._sources: dict[str, _Source] = {}
        if index is not None:
            self.register_knowledge_source(DEFAULT_KNOWLEDGE_SOURCE, index=index)

    def _resolve_lm(self, lm: str | Path | None) -> str | None:
        """``lm`` as given, or inside ``model_dir`` when it is a bare file name there."""
        from factscore_local.model_store import EMBEDDED_MODELS

        if lm is None or str(lm) in EMBEDDED_MODELS or Path(lm).expanduser().exists():
            return None if lm is None else str(lm)
        for candidate in (self.model_dir / lm, self.model_dir / f"{lm}.gguf"):
            if candidate.exists():
                return str(candidate)
        return str(lm)  # the estimator's error names what was looked for

    def _config(self, index: Path) -> EvalConfig:
        return build_config({**self._options, "index": index})

    @property
    def settings(self) -> EvalConfig:
        """The estimator's settings as this scorer resolves them: the verifier its
        ``model_name`` and LM give, with its thresholds, the LM, NP's scorer. Its ``index``
        is a stand-in (the cache folder): each knowledge source reads its own."""
        return self._config(self.cache_dir)

    # --- knowledge sources ------------------------------------------------------------
    def register_knowledge_source(
        self,
        name: str = DEFAULT_KNOWLEDGE_SOURCE,
        db_path: str | Path | None = None,
        data_path: str | Path | None = None,
        *,
        index: str | Path | None = None,
    ) -> None:
        """Registers a knowledge source: FActScore's ``.db`` or ``.jsonl``, or an index.

        FActScore's files are indexed once into ``cache_dir/indexes/<name>`` (a later
        registration of the same name reopens that index). Unlike the reference, no
        ``.db`` is written from a ``.jsonl``: the index holds the pages.

        Args:
            name: The name ``get_score(knowledge_source=...)`` uses.
            db_path: FActScore's SQLite DB (default ``data_dir/<name>.db``).
            data_path: A JSONL of ``{"title", "text"}``, used when the DB does not exist
                (default ``data_dir/<name>.jsonl``).
            index: An index directory built with ``fscore build-index`` instead.

        Raises:
            ValueError: The name is registered already, or the index folder holds another
                source's build.
            FileNotFoundError: No usable file or index.

        Example:
            >>> fs.register_knowledge_source("enwiki-dev", db_path="enwiki-20230401-dev.db")
            ... # doctest: +SKIP
        """
        if name in self._sources:
            raise ValueError(f"knowledge source {name!r} is already registered")
        if index is not None:
            path = check_index(Path(index))
        else:
            db = Path(db_path) if db_path is not None else self.data_dir / f"{name}.db"
            data = Path(data_path) if data_path is not None else self.data_dir / f"{name}.jsonl"
            global_bm25 = bool(self._options.get("global_evidence"))
            path = ensure_index(name, source_file(name, db, data), self.cache_dir,
                                self.device, global_bm25)  # fmt: skip
        config = self._config(path)
        if self._cache is None:
            self._cache = ResultCache(config.cache)
        estimator = Estimator(config, build_components(config, cache=self._cache))
        given = Estimator(replace(config, use_atomic_facts=True), estimator.components)
        self._sources[name] = _Source(path, estimator, given)

    # --- scoring ------------------------------------------------------------------------
    def get_score(
        self,
        topics: str | Sequence[str],
        generations: str | Sequence[str],
        gamma: float = 10,
        atomic_facts: Sequence[Sequence[str] | None] | None = None,
        knowledge_source: str | None = None,
        verbose: bool = False,
    ) -> dict[str, Any]:
        """FActScore of generations about topics, as the reference returns it.

        Args:
            topics: The entity of each generation (a page title of the knowledge source),
                or one string with ``generations`` one string.
            generations: The texts to score.
            gamma: Length penalty (0 or None: none, and no ``init_score``).
            atomic_facts: The facts of each generation, verified instead of decomposing
                it; an entry of None (or an empty list) is a generation that does not
                respond. Abstention detection applies only without them, as in the
                reference.
            knowledge_source: A registered name (default ``enwiki-20230401``, registered
                from ``data_dir`` on first use).
            verbose: Show a progress bar.

        Returns:
            ``score`` (mean over responding generations, with the length penalty when
            ``gamma``), ``init_score`` (without it; only when ``gamma``),
            ``respond_ratio``, ``num_facts_per_response`` (numpy floats; NaN when no
            generation responds) and ``decisions``: per generation, None when it does
            not respond, else ``[{"atom": str, "is_supported": bool}, ...]``.

        Raises:
            ValueError: Mismatched lengths, an unknown topic, or a knowledge source that
                cannot be registered.
            RuntimeError: A generation could not be evaluated (the message says why).

        Example:
            >>> out = fs.get_score(topics, generations, gamma=10)  # doctest: +SKIP
            >>> out["score"], out["respond_ratio"]  # doctest: +SKIP
        """
        name = knowledge_source or DEFAULT_KNOWLEDGE_SOURCE
        topics, generations = _as_lists(topics, generations)
        facts = None if atomic_facts is None else _checked_facts(atomic_facts, len(topics))
        if name not in self._sources:
            self.register_knowledge_source(name)
        source = self._sources[name]
        _check_topics(source.estimator, topics)
        if facts is None:
            pairs = enumerate(zip(topics, generations, strict=True), start=1)
            bios = [Bio(i, topic=t, output=g, source="get_score") for i, (t, g) in pairs]
            rows = source.estimator.run(bios, None, progress=verbose)
        else:
            triples = enumerate(zip(topics, generations, facts, strict=True), start=1)
            bios = [_bio_with_facts(i, t, g, f) for i, (t, g, f) in triples]
            rows = source.given_facts.run(bios, None, progress=verbose)
        failed = [f"{r.topic!r}: {r.error}" for r in rows if not r.ok]
        if failed:
            raise RuntimeError("could not evaluate " + "; ".join(failed))
        return _reference_output(rows, gamma)

    def save_cache(self) -> None:
        """Kept for the reference's API: every result is stored as it is computed."""

    def close(self) -> None:
        """Closes the indexes and the result cache."""
        for source in self._sources.values():
            source.estimator.ks.close()
        if self._cache is not None:
            self._cache.close()
        self._sources.clear()
        self._cache = None


def _as_lists(topics, generations) -> tuple[list[str], list[str]]:
    """The reference's argument forms: two strings, or two lists of the same length."""
    if isinstance(topics, str) and isinstance(generations, str):
        return [topics], [generations]
    if isinstance(topics, str) or isinstance(generations, str):
        raise ValueError("`topics` and `generations` should both be strings or both be lists")
    topics, generations = list(topics), list(generations)
    if len(topics) != len(generations):
        raise ValueError("`topics` and `generations` should have the same length")
    bad = [x for x in topics + generations if not isinstance(x, str)]
    if bad:
        raise ValueError(f"topics and generations must be strings; got {type(bad[0]).__name__}")
    return topics, generations


def _checked_facts(atomic_facts, n: int) -> list[list[str] | None]:
    facts = list(atomic_facts)
    if len(facts) != n:
        raise ValueError("`topics` and `atomic_facts` should have the same length")
    out: list[list[str] | None] = []
    for entry in facts:
        if entry is None:
            out.append(None)
        elif not isinstance(entry, list | tuple) or not all(isinstance(a, str) for a in entry):
            raise ValueError("each entry of `atomic_facts` must be a list of strings or None")
        else:
            out.append([a.strip() for a in entry if a.strip()] or None)
    return out


def _check_topics(estimator: Estimator, topics: list[str]) -> None:
    """Every topic must name a page (before any model runs); the error suggests titles."""
    problems = []
    for topic in dict.fromkeys(topics):
        resolution = estimator.ks.resolve_title(topic)
        if resolution.title is None:
            hint = ", ".join(resolution.suggestions)
            problems.append(f"{topic!r}" + (f" (did you mean: {hint}?)" if hint else ""))
    if problems:
        raise ValueError("unknown topic(s) in the knowledge source: " + "; ".join(problems))


def _bio_with_facts(line: int, topic: str, generation: str, facts: list[str] | None) -> Bio:
    """A bio whose facts are given, in FActScore's labeled format (None: no response)."""
    annotations = None
    if facts is not None:
        annotations = [{"text": "", "model-atomic-facts": [{"text": a} for a in facts]}]
    return Bio(line, topic=topic, output=generation, annotations=annotations,
               has_annotations_key=True, source="get_score")  # fmt: skip


def _mean(values: list[float]) -> np.float64:
    return np.float64(np.mean(values)) if values else np.float64(np.nan)


def _reference_output(rows: list[BioRow], gamma: float | None) -> dict[str, Any]:
    """The reference's result dictionary from the estimator's rows."""
    decisions: list[list[dict] | None] = []
    scores, init_scores = [], []
    for row in rows:
        if not row.responded:
            decisions.append(None)
            continue
        decision = [{"atom": d.atom, "is_supported": bool(d.is_supported)} for d in row.decisions]
        scored = score_bio([d["is_supported"] for d in decision], gamma or 0)
        decisions.append(decision)
        scores.append(scored.score)
        init_scores.append(scored.init_score)
    out: dict[str, Any] = {
        "score": _mean(scores),
        "respond_ratio": _mean([d is not None for d in decisions]),
        "decisions": decisions,
        "num_facts_per_response": _mean([len(d) for d in decisions if d is not None]),
    }
    if gamma:
        out["init_score"] = _mean(init_scores)
    return out
