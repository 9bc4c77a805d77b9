"""The estimator's settings: declared once, validated, never changed after construction.

``EvalConfig`` holds every setting with its default; ``build_config`` is the one way the
CLI, a settings file of ``fscore calibrate`` and the scripts make one. Unknown values are
errors, not silent fallbacks.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import MISSING, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from factscore_local.data import data_file
from factscore_local.lm import BACKENDS as LM_BACKENDS
from factscore_local.lm import LM_CONTEXT
from factscore_local.npm.np_prob import DEFAULT_NP_THRESHOLD as NPM_THRESHOLD
from factscore_local.pipeline.abstain import ABSTAIN_RULES
from factscore_local.pipeline.evidence import EVIDENCE_MODES
from factscore_local.pipeline.verifiers import Thresholds, get_verifier
from factscore_local.pipeline.verify_prompt import QUESTIONS

RETRIEVALS = ("bm25", "dense")
# "page": passages in the prompt in page order, so facts that retrieve the same set in
# another rank order share the prompt prefix (and its KV cache); "rank": FActScore's
# order, best passage last.
PASSAGE_ORDERS = ("page", "rank")
# "reference": FActScore's instruction text verbatim, no bullet prime.
DECOMPOSE_PROMPTS = ("ours", "reference")
# What the verifier sees of a fact besides the statement: "sentence" adds the sentence it
# was taken from, as context for its pronouns and references (not as evidence).
FACT_CONTEXTS = ("none", "sentence")
# How a verification prompt reaches the LM: "chat", wrapped in the model's chat template;
# "plain", as text ending in "Answer:".
VERIFY_FORMATS = ("chat", "plain")
DEFAULT_GAMMA = 10.0
# Room in the context for the instruction, the chat template and the fact after a block.
MAX_EVIDENCE_BUDGET = LM_CONTEXT - 512

# NP's default scorer, chosen by measurement on the dev labels (BENCHMARKS.md, "NP
# stand-ins"): the causal LM's token probabilities separate supported facts better than
# MiniLM with NPM's math (AUC 0.76 vs 0.62); read from the verification pass itself
# ("lm-joint") they separate as well as with NP's own passages (AUC 0.793 vs 0.792 on 10
# topics, 2,022 facts) and the ensemble needs one pass per fact instead of two.
DEFAULT_NP_MODEL = "lm-joint"
# NPM's threshold (0.3) fits a masked LM trained for token retrieval. MiniLM's mass on the
# gold token is ~100x smaller, so it has its own default, fitted on dev topics. For the
# causal LM, thresholds fitted on either topic half (0.31 and 0.47 for NP alone, 0.11 and
# 0.47 in the ensemble) lie around NPM's 0.3, which is kept.
STANDIN_NP_THRESHOLDS = {"minilm": 0.004, "lm": 0.3, "lm-joint": 0.3}
# NP read from the Retrieve→LM pass: the probability of the fact's content tokens where the
# verification prompt writes them after its evidence (the verifier's passages, not NP's own
# top np_k), so the ensemble costs one pass per fact instead of two.
JOINT_NP = "lm-joint"


def default_np_threshold(np_model: str | None) -> float:
    """The NP threshold used when none is given, for an NP scorer spec."""
    return STANDIN_NP_THRESHOLDS.get(np_model or DEFAULT_NP_MODEL, NPM_THRESHOLD)


@dataclass(frozen=True)
class EvalConfig:
    index: Path
    lm: str | None = None  # embedded name, GGUF file or HF directory; None = default
    backend: str = "auto"
    verifier: str = "retrieve-lm"
    retrieval: str = "bm25"
    k: int = 5
    np_k: int = 3
    np_model: str | None = None  # None: DEFAULT_NP_MODEL
    np_threshold: float | None = None  # None: default_np_threshold(np_model)
    # A fitted rule's weights (bias, then one per feature of the verifier's rule), from a
    # settings file of ``fscore calibrate``; None: not fitted.
    rule_weights: tuple[float, ...] | None = None
    # Token ids a masked-LM NP scorer skips (e.g. FActScore's roberta_stopwords.txt for
    # npm-single); None: derived from its own tokenizer.
    np_stopwords: Path | None = None
    margin: float = 0.0  # supported when logit(True) - logit(False) > margin
    passage_order: str = "page"
    # Worked examples of the True/False judgement before the Retrieve→LM prompt's evidence.
    verify_demos: bool = False
    fact_context: str = "none"  # one of FACT_CONTEXTS
    verify_format: str = "chat"  # one of VERIFY_FORMATS
    verify_question: str = "true-false"  # a key of verify_prompt.QUESTIONS
    # "per-fact": each fact's own top-k passages (the paper's procedure); "shared": the
    # facts of a bio share one block, the union of their top-k; "page": each fact is judged
    # against the segment of its page that holds its top-k; "auto": per page, whichever of
    # shared and page reads fewer tokens (evidence.py). The default by measurement
    # (BENCHMARKS.md, "Evidence modes"): on long pages the modes separate the human labels
    # alike; page segments are the fastest where a page has many facts (a long bio, or the
    # bios of several subject LMs: 1.2 s/fact against 2.6 shared, 8.3 per-fact), the union
    # where it has few (the demo's short bios: 4.9 s/fact against 16.7 page). On pages of
    # at most k passages all modes build the same prompts.
    evidence: str = "auto"
    evidence_budget: int = 7000  # tokens of passages per block or segment (by measurement)
    # Evidence from the whole index (global BM25 or dense top-k for the fact) for every line,
    # its topic ignored; lines without a topic always get it.
    global_evidence: bool = False
    gamma: float = DEFAULT_GAMMA
    abstain: str = "generic"  # one of ABSTAIN_RULES ("none": never abstain)
    demos: Path | None = None
    decompose_prompt: str = "ours"
    use_atomic_facts: bool = False
    # Sentences of a response that are decomposed; the rest are skipped and reported (a
    # 1,000-sentence response would otherwise hold the run up for hours).
    max_sentences: int = 100
    cache: Path | None = None  # None: memory only
    # A folder of evaluated evidence prefixes (llama.cpp's KV states; lm/prefix_states.py):
    # a later pass over the same evidence loads them instead of reading it. None: not kept.
    prefix_states: Path | None = None
    seed: int = 0
    # Bios verified together; 1 writes each bio's row as soon as it is scored (a page's KV
    # prefix still carries over to the next bio).
    chunk_bios: int = 1
    # Bios whose lines carry FActScore's annotations also get their human atomic facts
    # verified, for micro-F1 against the human labels.
    validate: bool = True
    threads: int | None = None
    # Where the LM and the dense encoder run: auto (a CUDA GPU when torch sees one), cpu,
    # cuda or cuda:N. On the CPU nothing changes; a GPU's results are cached apart.
    device: str = "auto"
    thresholds_from: str = "built-in defaults"  # where margin / np_threshold came from

    def __post_init__(self) -> None:
        get_verifier(self.verifier)  # raises on an unknown name, listing the known ones
        for name, allowed in (
            ("backend", LM_BACKENDS),
            ("retrieval", RETRIEVALS),
            ("passage_order", PASSAGE_ORDERS),
            ("decompose_prompt", DECOMPOSE_PROMPTS),
            ("fact_context", FACT_CONTEXTS),
            ("verify_format", VERIFY_FORMATS),
            ("verify_question", tuple(QUESTIONS)),
            ("abstain", ABSTAIN_RULES),
            ("evidence", EVIDENCE_MODES),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        for name in ("k", "np_k", "chunk_bios", "max_sentences"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not 256 <= self.evidence_budget <= MAX_EVIDENCE_BUDGET:
            raise ValueError(f"evidence_budget must be between 256 and {MAX_EVIDENCE_BUDGET}")
        if self.np_stopwords is not None and self.np_model_spec in ("lm", JOINT_NP):
            raise ValueError("--np-stopwords holds token ids of a masked LM; the causal 'lm' "
                             "NP scorer skips stopwords by their words")  # fmt: skip
        if self.gamma < 0:
            raise ValueError("gamma must be 0 (no length penalty) or positive")
        if self.rule_weights is not None:  # a JSON list from a settings file or a record
            weights = tuple(float(w) for w in self.rule_weights)
            features = get_verifier(self.verifier).features
            if features and len(weights) != 1 + len(features):
                raise ValueError(f"rule_weights of {self.verifier} hold {1 + len(features)} "
                                 f"numbers (bias, {', '.join(features)})")  # fmt: skip
            object.__setattr__(self, "rule_weights", weights)

    @property
    def np_model_spec(self) -> str:
        return self.np_model or DEFAULT_NP_MODEL

    @property
    def thresholds(self) -> Thresholds:
        """The decision thresholds, defaults resolved."""
        np_threshold = self.np_threshold
        if np_threshold is None:
            np_threshold = default_np_threshold(self.np_model)
        return Thresholds(self.margin, np_threshold, tuple(self.rule_weights or ()))


CONFIG_FIELDS = tuple(f.name for f in fields(EvalConfig))
DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in fields(EvalConfig) if f.default is not MISSING
}
# What a settings file of ``fscore calibrate`` may set.
SETTINGS_KEYS = ("verifier", "margin", "np_threshold", "np_model", "rule_weights")
# Thresholds or a rule fitted on the dev labels for an embedded model (written by ``fscore
# calibrate``; see BENCHMARKS.md), applied when that model is used and neither an option
# nor a settings file gives them; "verifier" is the model's default verifier.
MODEL_DEFAULTS_PATH = data_file("model-defaults.json")


def model_name(lm: str | None) -> str:
    """The name an LM spec goes by: an embedded name, or a file or directory's name."""
    from factscore_local.model_store import DEFAULT_LM

    if lm is None:
        return DEFAULT_LM
    return Path(lm).name.removesuffix(".gguf")


@lru_cache(maxsize=1)
def _model_defaults_table() -> dict[str, dict]:
    return json.loads(MODEL_DEFAULTS_PATH.read_text(encoding="utf-8"))


def model_defaults(lm: str | None) -> dict[str, Any]:
    """The fitted thresholds shipped for this LM ({} when there are none)."""
    return _model_defaults_table().get(model_name(lm), {})


def build_config(
    options: Mapping[str, Any],
    settings: Mapping[str, Any] | None = None,
    explicit: Collection[str] | None = None,
) -> EvalConfig:
    """An EvalConfig from option values (keys are EvalConfig's field names).

    ``settings`` (a calibrate settings file) fills the thresholds and verifier unless the
    option was given explicitly: ``explicit`` names those (None: every key of ``options``).
    """
    unknown = set(options) - set(CONFIG_FIELDS)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    values = dict(options)
    given = set(options) if explicit is None else set(explicit)
    sources = []
    if settings:
        taken = [k for k in SETTINGS_KEYS if k in settings and k not in given]
        values.update({k: settings[k] for k in taken})
        given |= set(taken)
        sources += ["settings file"] * bool(taken)
    fitted = model_defaults(values.get("lm"))
    # A model's own default verifier (a rule fitted for it), unless a verifier or a
    # threshold of one was asked for.
    if fitted.get("verifier") and not given & {"verifier", "margin", "np_threshold"}:
        values["verifier"] = fitted["verifier"]
    verifier = values.get("verifier", DEFAULTS["verifier"])
    if fitted.get("verifiers") and verifier in fitted["verifiers"]:
        fitted_keys = ("margin", "np_threshold", "rule_weights")
        taken = [k for k in fitted_keys if k in fitted and k not in given]
        values.update({k: fitted[k] for k in taken})
        sources += [f"fitted defaults of {model_name(values.get('lm'))}"] * bool(taken)
    values["thresholds_from"] = ", ".join(sources) or "built-in defaults"
    if values.get("index") is None:
        raise ValueError("an index directory is required")
    values["index"] = Path(values["index"])
    return EvalConfig(**values)
