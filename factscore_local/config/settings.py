"""The settings themselves: ``EvalConfig`` declares each one once, with its default, its
help and the values it allows, and checks a value when it is made.

The allowed values are declared apart from the stages that implement them (each stage's
values and the rules of ``factscore_local.declarations``, the LM's backends and
precisions in ``factscore_local.lm``); this module only names them.
"""

from __future__ import annotations

from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any

from factscore_local.declarations.decomposition import ABSTAIN_RULES, DECOMPOSE_PROMPTS
from factscore_local.declarations.evidence import EVIDENCE_MODES, PASSAGE_ORDERS, RETRIEVALS
from factscore_local.declarations.signals import FACT_CONTEXTS, QUESTIONS, VERIFY_FORMATS
from factscore_local.declarations.verifiers import Thresholds, get_verifier, verifier_names
from factscore_local.lm import BACKENDS as LM_BACKENDS
from factscore_local.lm import DTYPES as LM_DTYPES
from factscore_local.lm import LM_CONTEXT, is_server_spec
from factscore_local.npm.defaults import (
    DEFAULT_NP_MODEL,
    JOINT_NP,
    NPM_THRESHOLD,
    STANDIN_NP_THRESHOLDS,
    default_np_threshold,
)

DEFAULT_GAMMA = 10.0
# Room in the context for the instruction, the chat template and the fact after a block.
MAX_EVIDENCE_BUDGET = LM_CONTEXT - 512


def setting(default: Any = MISSING, help: str = "", **cli: Any) -> Any:
    """A setting of :class:`EvalConfig`: its default and its one explanation.

    The explanation is the help of its ``fscore`` option (``factscore_local.cli.options``
    builds the options from these fields) and of the API's keyword argument.

    Args:
        default: The value when none is given (MISSING: required).
        help: What the setting does, for a user (the ``--help`` text).
        **cli: How it is offered on the command line: ``choices`` (a tuple, or a function
            returning one: also checked by ``EvalConfig``), ``option`` (the option's name
            when not ``--field-name``), ``negatable`` (a ``--x/--no-x`` pair instead of a
            flag), ``show_default`` (False hides it), ``min``/``max`` (an integer range),
            ``existing_file`` (a path that must name a file), ``cli`` (False: no option).

    Returns:
        A dataclass field carrying the help in its metadata.

    Example:
        >>> from dataclasses import fields
        >>> [f.metadata["help"] for f in fields(EvalConfig) if f.name == "k"]
        ['Passages per fact for the LM.']
    """
    return field(default=default, metadata={"help": help, **cli})


@dataclass(frozen=True)
class EvalConfig:
    """Every setting of the estimator, with its default (see each field's help).

    Example:
        >>> from pathlib import Path
        >>> EvalConfig(index=Path("my-index"), k=3).evidence
        'auto'
    """

    index: Path = setting(help="Index directory built by build-index.")
    lm: str | None = setting(
        None,
        "Embedded model name, a GGUF file, an HF directory, or the URL of an "
        "OpenAI-compatible server's API (http://HOST:PORT/v1: vLLM, SGLang, llama.cpp's "
        "servers, Ollama; docs: LM servers).",
    )
    lm_model: str | None = setting(
        None,
        "The model to use on an LM server (--lm URL) that serves several; default: the one "
        "it serves. An embedded model's name or a local GGUF/HF path served under that "
        "name gets the local tokenizer and the model's fitted rule.",
    )
    lm_concurrency: int = setting(
        8, "Requests in flight to an LM server (--lm URL) at most.", min=1
    )
    backend: str = setting("auto", choices=LM_BACKENDS, option="--lm-backend")
    verifier: str = setting(
        "retrieve-lm",
        "Default: the LM's own rule where data/model-defaults.json ships one ('default' "
        "for the embedded models); else retrieve-lm.",
        choices=verifier_names,
        show_default=False,
    )
    retrieval: str = setting("bm25", choices=RETRIEVALS)
    k: int = setting(5, "Passages per fact for the LM.")
    np_k: int = setting(
        3, "Passages NP reads per fact when it reads its own (the page's BM25 top).", cli=False
    )
    np_model: str | None = setting(
        None,
        "NP scorer: a local masked-LM directory (e.g. npm-single), 'minilm' (the embedded "
        "encoder), 'lm' (the causal LM's token probabilities given NP's own passages) or "
        "'lm-joint' (the same probabilities read from the Retrieve→LM pass, on its evidence: "
        f"no second pass); default: {DEFAULT_NP_MODEL}.",
    )
    np_threshold: float | None = setting(
        None,
        f"Supported when NP exceeds this; default: {NPM_THRESHOLD} (NPM's) for a masked "
        f"LM, {STANDIN_NP_THRESHOLDS['lm']} for 'lm' and 'lm-joint', "
        f"{STANDIN_NP_THRESHOLDS['minilm']} (fitted on dev topics) for 'minilm'.",
    )
    rule_weights: tuple[float, ...] | None = setting(
        None,
        "A fitted rule's weights (bias, then one per feature of the verifier's rule), from "
        "a settings file of 'fscore calibrate'; none: not fitted.",
        cli=False,
    )
    # The weights were fitted on InstructGPT's facts; the own decomposition's may need a
    # shifted bias (docs/benchmarks/raw-text-98.md). Shipped per model beside them, or 0.
    raw_text_shift: float = setting(
        0.0,
        "Added to a fitted rule's bias when the facts come from the project's own "
        "decomposition (not --use-atomic-facts); 0: none.",
        cli=False,
    )
    np_stopwords: Path | None = setting(
        None,
        "Token ids (one per line) a masked-LM NP scorer skips, e.g. FActScore's "
        "roberta_stopwords.txt with npm-single; default: derived from its tokenizer.",
        existing_file=True,
    )
    margin: float = setting(0.0, "Supported when logit(True) - logit(False) exceeds this.")
    # "page" shares the prompt prefix (and its KV cache) between facts that retrieve the
    # same passages in another rank order.
    passage_order: str = setting(
        "page",
        "Order of the passages in the prompt: 'page' (shares more prompt prefix between "
        "facts, faster) or 'rank' (FActScore's: best passage last).",
        choices=PASSAGE_ORDERS,
    )
    verify_demos: bool = setting(
        False,
        "Worked examples of the True/False judgement (supported, contradicted, not "
        "mentioned) before the Retrieve→LM prompt's evidence.",
        negatable=True,
    )
    fact_context: str = setting(
        "none",
        "'sentence': the verifier also sees the sentence the fact was taken from, as "
        "context for its pronouns (not as evidence); the lm-joint NP is then read from the "
        "prompt without it (a second, shorter pass per fact).",
        choices=FACT_CONTEXTS,
    )
    values_as_stated: bool = setting(
        True,
        "Judge a fact's loose values (a decade, a century, 'between ... and ...', 'about "
        "...') in the form its page states them: 'died in the 1940s' is read as 'died in "
        "1946' where the clause of its role gives 1946, by the LM, NP and the coverage; "
        "the slot check and the rows keep the fact as written.",
        negatable=True,
    )
    verify_format: str = setting(
        "chat",
        "'chat': verification prompts in the model's chat template; 'plain': as text "
        "ending in 'Answer:'.",
        choices=VERIFY_FORMATS,
    )
    verify_question: str = setting(
        "true-false",
        "The question after the statement and its answer words: 'true-false' (True or "
        "False?, FActScore's) or 'yes-no' (Yes or No?).",
        choices=lambda: tuple(QUESTIONS),
    )
    # The default by measurement (docs/benchmarks/evidence-modes.md): on long pages the modes
    # separate the human labels alike; page segments are the fastest where a page has many
    # facts (a long bio, or the bios of several subject LMs: 1.2 s/fact against 2.6 shared,
    # 8.3 per-fact), the union where it has few (the demo's short bios: 4.9 s/fact against
    # 16.7 page). On pages of at most k passages all modes build the same prompts.
    evidence: str = setting(
        "auto",
        "'per-fact': each fact judged against its own top-k passages (the paper's "
        "procedure); 'shared': the facts of a bio against one block, the union of their "
        "top-k in page order, evaluated once (each fact costs its own tokens); 'page': "
        "each fact against its page, or the segment of it that holds its top-k, shared by "
        "every bio of the topic; 'auto': per page, whichever of shared and page reads "
        "fewer tokens.",
        choices=EVIDENCE_MODES,
    )
    evidence_budget: int = setting(  # 7000 by measurement
        7000,
        "Most passage tokens in a block: a longer page is cut into balanced "
        "segments ('page'); a bio whose union is larger is split by passage overlap "
        "('shared').",
    )
    global_evidence: bool = setting(
        False,
        "Ignore the topics: each fact's evidence is its top-k passages from the whole "
        "index (global BM25, or dense with --retrieval dense). Lines without a topic always "
        "get this.",
    )
    gamma: float = setting(DEFAULT_GAMMA, "Length penalty; 0 disables.")
    abstain: str = setting("generic", choices=ABSTAIN_RULES)  # "none": never abstain
    demos: Path | None = setting(
        None, "Decomposition demonstrations {sentence: [facts]}; default: data/demos.json."
    )
    decompose_prompt: str = setting(
        "ours",
        "'reference': FActScore's instruction text verbatim, no bullet prime (with "
        "--demos demons.json, its exact prompts).",
        choices=DECOMPOSE_PROMPTS,
    )
    clean: bool = setting(
        True,
        "Take citation markers ([1], [2018], [citation needed]), footnote marks, URLs and "
        "markdown out of an output before its sentences are split and decomposed.",
        negatable=True,
    )
    standalone: bool = setting(
        True,
        "Set aside own facts that do not stand alone (statements about the text; a subject "
        "that is 'it', 'they' or 'the <noun>' with no name) before they are verified; the "
        "rows list them under 'set_aside'.",
        negatable=True,
    )
    use_atomic_facts: bool = setting(
        False, "Take 'model-atomic-facts' from labeled input instead of decomposing."
    )
    # A 1,000-sentence response would otherwise hold the run up for hours.
    max_sentences: int = setting(
        100,
        "Sentences of a response that are decomposed; the rest are skipped and reported.",
        min=1,
    )
    # EvalConfig itself keeps results in memory only when cache is None; fscore eval and
    # api.evaluate default to <index>/eval-cache.db.
    cache: Path | None = setting(
        None, "SQLite cache of model results (default: <index>/eval-cache.db)."
    )
    # llama.cpp's KV states of evaluated evidence prefixes (lm/prefix_states.py).
    prefix_states: Path | None = setting(
        None,
        "Folder that keeps the evaluated evidence of each page (llama.cpp's KV state, "
        "~28 KB a token for the 1.5B model): a later run on the same pages loads it instead "
        "of reading them again; same results. Off by default.",
    )
    read_states: bool = setting(False, "Also cache each verdict's hidden state.", cli=False)
    head: Path | None = setting(
        None,
        "A state head (.npz, from 'fscore calibrate --head') for "
        "the head rules; default: the LM's, in data/heads/.",
        cli=False,
    )
    seed: int = setting(0, "Seed of the random verifier.")
    # 1 writes each bio's row as soon as it is scored (a page's KV prefix still carries
    # over to the next bio).
    chunk_bios: int = setting(1, "Bios verified together.", cli=False)
    # Scheduling, not deciding: each chunk is still decided on its own (the rows are those
    # of a run chunk by chunk), but the model sees the prompts of many bios at once.
    batch_bios: int = setting(
        32,
        "Bios whose model work is scheduled together: all their sentences in one "
        "generation call, all their facts in one verification call (the generation slots "
        "stay full; a GPU or an LM server sees hundreds of prompts at once). Each bio is "
        "decided as it would be alone; rows are written as each batch ends.",
        min=1,
    )
    validate: bool = setting(
        True,
        "With labeled input, also verify the human atomic facts and report ER and F1.",
        negatable=True,
    )
    threads: int | None = setting(None, "CPU threads of the LM, and the machine's core slots "
                                  "it waits for; default: all cores. Two runs given half the "
                                  "cores each run side by side.", min=1)  # fmt: skip
    device: str = setting(
        "auto",
        "Where the LM and the dense encoder run: auto (a CUDA GPU when torch sees one), "
        "cpu, cuda or cuda:N. On the CPU nothing changes; a GPU's results are cached apart.",
    )
    lm_dtype: str = setting(
        "auto",
        "The transformers backend's precision: auto (bf16 on a GPU, float32 on the CPU), "
        "float32, bfloat16 or float16. A small model can run faster in float32 on a GPU, "
        "with the CPU's decisions (docs: GPU check); llama.cpp takes auto only.",
        choices=LM_DTYPES,
    )
    thresholds_from: str = setting(
        "built-in defaults", "Where margin and np_threshold came from.", cli=False
    )
    # For a server whose model is not named: the fitted settings given explicitly, while
    # the served model's own fitted defaults wait for its name (config/build.py).
    defaults_pending: tuple[str, ...] | None = setting(
        None, "Fitted settings given, while the served model's defaults are pending.", cli=False
    )

    def __post_init__(self) -> None:
        get_verifier(self.verifier)  # raises on an unknown name, listing the known ones
        if self.defaults_pending is not None:  # a list where a run record was read
            object.__setattr__(self, "defaults_pending", tuple(self.defaults_pending))
        if self.lm_model is not None and not is_server_spec(self.lm):
            raise ValueError("--lm-model names a model of an LM server (--lm http://HOST:PORT/v1)")
        for f in fields(self):
            allowed = setting_choices(f.name)
            value = getattr(self, f.name)
            if allowed is not None and value not in allowed:
                raise ValueError(f"{f.name} must be one of {', '.join(allowed)}; got {value!r}")
        for name in ("k", "np_k", "chunk_bios", "batch_bios", "max_sentences"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not 256 <= self.evidence_budget <= MAX_EVIDENCE_BUDGET:
            raise ValueError(f"evidence_budget must be between 256 and {MAX_EVIDENCE_BUDGET}")
        if self.np_stopwords is not None and self.np_model_spec in ("lm", JOINT_NP):
            raise ValueError("--np-stopwords holds token ids of a masked LM; the causal 'lm' "
                             "NP scorer skips stopwords by their words")  # fmt: skip
        if self.gamma < 0:
            raise ValueError("gamma must be 0 (no length penalty) or positive")
        if self.rule_weights is not None:
            # by feature name (checked), or a list in the rule's order (earlier releases)
            verifier = get_verifier(self.verifier)
            if verifier.features:
                weights = verifier.weights_from(self.rule_weights)
            else:
                weights = tuple(float(w) for w in self.rule_weights)
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
        weights = tuple(self.rule_weights or ())
        if self.raw_text_bias:
            weights = (weights[0] + self.raw_text_bias, *weights[1:])
        return Thresholds(self.margin, np_threshold, weights)

    @property
    def raw_text_bias(self) -> float:
        """The raw-text shift in effect: a fitted rule's, on the own decomposition's facts."""
        applies = self.rule_weights and not self.use_atomic_facts
        return self.raw_text_shift if applies else 0.0


CONFIG_FIELDS = tuple(f.name for f in fields(EvalConfig))
SETTING_FIELDS: dict[str, Field] = {f.name: f for f in fields(EvalConfig)}


def setting_choices(name: str) -> tuple[str, ...] | None:
    """The values a setting allows, from its declaration (None: any value of its type).

    Args:
        name: An ``EvalConfig`` field name.

    Returns:
        The allowed values, or None when the setting declares no choices.

    Example:
        >>> setting_choices("retrieval")
        ('bm25', 'dense')
    """
    choices = SETTING_FIELDS[name].metadata.get("choices")
    return tuple(choices()) if callable(choices) else choices


DEFAULTS: dict[str, Any] = {n: f.default for n, f in SETTING_FIELDS.items() if f.default != MISSING}
