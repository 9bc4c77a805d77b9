"""``fscore eval``: generations in, FActScore estimates out, with local models only.

Per bio: abstention check -> sentences -> atomic facts (local LM, few-shot) -> passages of
the topic's page (BM25 or dense, query = topic + fact) -> a verifier's decision per fact
-> score. Bios are processed in chunks; every model result goes through a SQLite cache
keyed by its inputs, so a killed run resumes without recomputing.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from factscore_local.abstain import is_abstained
from factscore_local.cache import ResultCache, key_of
from factscore_local.scoring import aggregate, score_bio
from factscore_local.validation import HumanFact, human_bio_score, human_facts
from factscore_local.verify_prompt import no_context_prompt, retrieve_lm_prompt
from npm.np_prob import DEFAULT_NP_THRESHOLD as NPM_THRESHOLD

VERIFIERS = (
    "retrieve-lm",
    "no-context-lm",
    "np",
    "retrieve-lm+np",
    "always-supported",
    "always-not-supported",
    "random",
)
# NP's default scorer, chosen by measurement on the dev labels (BENCHMARKS.md, "NP
# stand-ins"): the causal LM's token probabilities separate supported facts better than
# MiniLM with NPM's math (AUC 0.76 vs 0.62) and give the ensemble a higher F1.
DEFAULT_NP_MODEL = "lm"
# NPM's threshold (0.3) fits a masked LM trained for token retrieval. MiniLM's mass on the
# gold token is ~100x smaller, so it has its own default, fitted on dev topics. For the
# causal LM, thresholds fitted on either topic half (0.31 and 0.47 for NP alone, 0.11 and
# 0.47 in the ensemble) lie around NPM's 0.3, which is kept.
STANDIN_NP_THRESHOLDS = {"minilm": 0.004, "lm": 0.3}


def default_np_threshold(np_model: str | None) -> float:
    """The NP threshold used when none is given, for an NP scorer spec."""
    return STANDIN_NP_THRESHOLDS.get(np_model or DEFAULT_NP_MODEL, NPM_THRESHOLD)


LM_VERIFIERS = {"retrieve-lm", "no-context-lm", "retrieve-lm+np"}
NP_VERIFIERS = {"np", "retrieve-lm+np"}


class InputError(ValueError):
    """The input file cannot be used at all."""


@dataclass
class EvalConfig:
    index: Path
    lm: str | None = None  # embedded name, GGUF file or HF directory; None = default
    backend: str = "auto"
    verifier: str = "retrieve-lm"
    retrieval: str = "bm25"
    k: int = 5
    np_k: int = 3
    np_model: str | None = None
    np_threshold: float | None = None  # None: default_np_threshold(np_model)
    margin: float = 0.0  # supported when logit(True) - logit(False) > margin
    # "page": passages in the prompt in page order, so facts that retrieve the same set in
    # another rank order share the prompt prefix (and its KV cache); "rank": FActScore's
    # order, best passage last.
    passage_order: str = "page"
    gamma: float = 10.0
    abstain: str | None = "generic"
    demos: Path | None = None
    decompose_prompt: str = "ours"  # or "reference": FActScore's instruction, no bullet prime
    use_atomic_facts: bool = False
    cache: Path | None = None
    seed: int = 0
    chunk_bios: int = 4
    # Bios whose lines carry FActScore's annotations also get their human atomic facts
    # verified, for micro-F1 against the human labels.
    validate: bool = True
    threads: int | None = None


@dataclass
class Bio:
    line: int
    topic: str = ""
    output: str = ""
    annotations: list | None = None
    has_annotations_key: bool = False
    error: str = ""
    source: str = ""  # the input file it came from
    record: dict = field(default_factory=dict)


def read_bios(path: Path) -> Iterator[Bio]:
    """One Bio per non-blank line; a bad line becomes a Bio with ``error`` set."""
    if not path.is_file():
        raise InputError(f"input not found: {path}")
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield Bio(number, error="line is not UTF-8", source=str(path))
                continue
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                yield Bio(number, error=f"invalid JSON ({exc.msg})", source=str(path))
                continue
            if not isinstance(obj, dict):
                yield Bio(number, error="line is not a JSON object", source=str(path))
                continue
            topic, output = obj.get("topic"), obj.get("output")
            missing = [
                k for k, v in (("topic", topic), ("output", output)) if not isinstance(v, str)
            ]
            if missing:
                yield Bio(
                    number,
                    topic=topic if isinstance(topic, str) else "",
                    error=f"missing or non-string field(s): {', '.join(missing)}",
                    source=str(path),
                )
                continue
            yield Bio(
                number,
                topic=topic,
                output=output,
                annotations=obj.get("annotations"),
                has_annotations_key="annotations" in obj,
                source=str(path),
                record=obj,
            )


SLICE_GENERATE = 8  # prompts per stored slice of generations
SLICE_TRUE_FALSE = 32  # prompts per stored slice of True/False scores


class CachedLM:
    """Caches an LM's generations and True/False logits by model identity and prompt."""

    def __init__(self, lm, cache: ResultCache, model_id: str) -> None:
        self.lm = lm
        self.cache = cache
        self.model_id = model_id

    def chat(self, user: str) -> str:
        return self.lm.chat(user)

    def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
        keys = [key_of("gen", self.model_id, p, max_new_tokens, stop) for p in prompts]
        return self._cached(
            "generate",
            prompts,
            keys,
            SLICE_GENERATE,
            lambda part: self.lm.generate(part, max_new_tokens, stop),
        )

    def true_false(self, prompts: list[str]) -> list[tuple[float, float]]:
        keys = [key_of("tf", self.model_id, p) for p in prompts]
        values = self._cached(
            "true_false",
            prompts,
            keys,
            SLICE_TRUE_FALSE,
            lambda part: [
                [float(x.true_logit), float(x.false_logit)] for x in self.lm.true_false(part)
            ],
        )
        return [tuple(v) for v in values]

    def _cached(self, kind: str, prompts: list[str], keys: list[str], slice_size: int, compute):
        """Values for prompts, computing the missing ones in sorted slices (neighbours share
        prompt prefixes); each slice is stored as soon as it is done, so a killed run loses
        one slice at most."""
        found = {k: self.cache.get(k) for k in keys}
        todo = sorted(
            {keys[i]: i for i, k in enumerate(keys) if found[k] is None}.values(),
            key=lambda i: prompts[i],
        )
        for start in range(0, len(todo), slice_size):
            part = todo[start : start + slice_size]
            new = dict(
                zip([keys[i] for i in part], compute([prompts[i] for i in part]), strict=True)
            )
            self.cache.put_many(kind, new)
            found.update(new)
        return [found[k] for k in keys]


def model_identity(path: Path, backend: str) -> str:
    stat = path.stat()
    return f"{path.name}|{stat.st_size}|{int(stat.st_mtime)}|{backend}"


_LOADED_LMS: dict[tuple, object] = {}


class Estimator:
    def __init__(self, config: EvalConfig) -> None:
        from index.reader import KnowledgeSource

        if config.verifier not in VERIFIERS:
            raise ValueError(f"unknown verifier {config.verifier!r}; choose from {VERIFIERS}")
        if config.retrieval not in ("bm25", "dense"):
            raise ValueError("retrieval must be 'bm25' or 'dense'")
        if config.np_threshold is None:
            config.np_threshold = default_np_threshold(config.np_model)
        self.config = config
        self.ks = KnowledgeSource(config.index)
        self.cache = ResultCache(config.cache)
        self._lm: CachedLM | None = None
        self._decomposer = None
        self._np = None

    # --- models, loaded on first need --------------------------------------------------
    def lm(self) -> CachedLM:
        if self._lm is None:
            from factscore_local.lm import load_lm
            from factscore_local.model_store import resolve_lm

            key = (self.config.lm, self.config.backend, self.config.threads)
            raw = _LOADED_LMS.get(key)
            if raw is None:  # loaded once per process: estimators with other settings share it
                raw = load_lm(self.config.lm, self.config.backend, threads=self.config.threads)
                _LOADED_LMS[key] = raw
            identity = model_identity(resolve_lm(self.config.lm), raw.backend)
            self._lm = CachedLM(raw, self.cache, identity)
        return self._lm

    def decomposer(self):
        if self._decomposer is None:
            from factscore_local.decompose import (
                REFERENCE_INSTRUCTION,
                Decomposer,
                DemoSelector,
                load_demos,
                parse_facts_reference,
            )

            selector = DemoSelector(load_demos(self.config.demos))
            if self.config.decompose_prompt == "reference":
                self._decomposer = Decomposer(
                    self.lm(),
                    selector,
                    instruction=REFERENCE_INSTRUCTION,
                    prime="",
                    parser=parse_facts_reference,
                )
            else:
                self._decomposer = Decomposer(self.lm(), selector)
        return self._decomposer

    def np_scorer(self):
        """NP's scorer: a masked-LM directory (NPM's math), "minilm" (the embedded encoder
        with NPM's math), or "lm" (the causal-LM stand-in with the verifier's LM)."""
        if self._np is None:
            spec = self.config.np_model or DEFAULT_NP_MODEL
            if spec == "lm":
                from npm.causal_np import CausalNPScorer

                self._np = CausalNPScorer(self.lm().lm)
                self._np_id = f"causal|{self.lm().model_id}"
            else:
                from npm import NPScorer

                if spec == "minilm":
                    from index.models import minilm_path

                    spec = str(minilm_path())
                self._np = NPScorer(spec)
                self._np_id = Path(spec).name
        return self._np

    # --- the pipeline -------------------------------------------------------------------
    def atomic_facts(self, bios: list[Bio]) -> dict[int, list[tuple[str, str]] | None]:
        """id(bio) -> [(sentence, fact)], or None for a bio that does not respond.

        Keyed by the object, not the line number: lines restart in every input file."""
        facts: dict[int, list[tuple[str, str]] | None] = {}
        to_decompose: list[Bio] = []
        for bio in bios:
            if self.config.use_atomic_facts:
                if not bio.has_annotations_key:
                    bio.error = "--use-atomic-facts needs 'annotations' in every line"
                    continue
                if bio.annotations is None:
                    facts[id(bio)] = None
                    continue
                try:
                    facts[id(bio)] = [
                        (sent.get("text", ""), atom["text"])
                        for sent in bio.annotations
                        for atom in (sent.get("model-atomic-facts") or [])
                    ]
                except (AttributeError, KeyError, TypeError):
                    bio.error = "malformed 'annotations' (expected FActScore's labeled format)"
            elif not bio.output.strip() or is_abstained(bio.output, self.config.abstain):
                facts[id(bio)] = None
            else:
                to_decompose.append(bio)
        if to_decompose:
            results = self.decomposer().run_many([b.output for b in to_decompose])
            for bio, pairs in zip(to_decompose, results, strict=True):
                facts[id(bio)] = [(s.text, f) for s, fs in pairs for f in fs]
        return {key: (f if f else None) for key, f in facts.items()}

    def evaluate_chunk(self, bios: list[Bio]) -> list[dict]:
        cfg = self.config
        ready: list[Bio] = []
        for bio in bios:
            if bio.error:
                continue
            resolution = self.ks.resolve_title(bio.topic)
            if resolution.title is None:
                hint = ", ".join(resolution.suggestions)
                bio.error = f"unknown topic {bio.topic!r}" + (
                    f" (did you mean: {hint}?)" if hint else ""
                )
                continue
            bio.record["_title"] = resolution.title
            ready.append(bio)
        facts = self.atomic_facts(ready)
        human = self.human_facts(ready)
        # Every fact of the chunk, the human atomic facts of labeled bios included, verified
        # together (one batched LM call: facts of a page share their prompt prefixes).
        items = [
            (bio, sentence, atom)
            for bio in ready
            if not bio.error and facts.get(id(bio))
            for sentence, atom in facts[id(bio)]
        ]
        human_items = [(bio, f) for bio in ready if not bio.error for f in human.get(id(bio), [])]
        decisions = self.verify(
            [(b.record["_title"], b.topic, a) for b, _, a in items]
            + [(b.record["_title"], b.topic, f.text) for b, f in human_items]
        )
        by_bio: dict[int, list[dict]] = {}
        for (bio, sentence, atom), decision in zip(items, decisions[: len(items)], strict=True):
            by_bio.setdefault(id(bio), []).append({"atom": atom, "sentence": sentence, **decision})
        human_by_bio: dict[int, list[dict]] = {}
        for (bio, fact), decision in zip(human_items, decisions[len(items) :], strict=True):
            human_by_bio.setdefault(id(bio), []).append(
                {"atom": fact.text, "label": fact.label, **decision}
            )
        out = []
        for bio in bios:
            row = {"line": bio.line, "topic": bio.topic, "source": bio.source}
            if bio.error:
                out.append({**row, "error": bio.error})
                continue
            bio_decisions = by_bio.get(id(bio)) if facts.get(id(bio)) else None
            scored = score_bio([d["is_supported"] for d in bio_decisions or []], cfg.gamma)
            out.append(
                {
                    **row,
                    "title": bio.record["_title"],
                    "responded": scored.responded,
                    "n_facts": scored.n_facts,
                    "init_score": scored.init_score,
                    "score": scored.score,
                    "decisions": bio_decisions or [],
                }
            )
            if id(bio) in human:
                bio_human = human_bio_score(bio.annotations)
                out[-1]["human"] = {
                    "score": bio_human[0] if bio_human else None,
                    "n_facts": bio_human[1] if bio_human else 0,
                    "facts": human_by_bio.get(id(bio), []),
                }
        return out

    def human_facts(self, bios: list[Bio]) -> dict[int, list[HumanFact]]:
        """id(bio) -> its human atomic facts, for bios whose line carries annotations."""
        out: dict[int, list[HumanFact]] = {}
        if not self.config.validate:
            return out
        for bio in bios:
            if bio.error or not bio.has_annotations_key:
                continue
            try:
                out[id(bio)] = human_facts(bio.annotations)
                human_bio_score(bio.annotations)
            except (AttributeError, KeyError, TypeError):
                bio.error = "malformed 'annotations' (expected FActScore's labeled format)"
        return out

    def verify(self, items: list[tuple[str, str, str]]) -> list[dict]:
        """items: (page title, topic, atom) -> decision dicts with their evidence."""
        cfg = self.config
        if not items:
            return []
        results: list[dict] = [{} for _ in items]
        if cfg.verifier in ("always-supported", "always-not-supported", "random"):
            for i, (_, topic, atom) in enumerate(items):
                if cfg.verifier == "random":
                    # Seeded per fact, so a decision does not depend on the order of facts.
                    rng = random.Random(key_of(cfg.seed, topic, atom))
                    results[i] = {"is_supported": rng.random() < 0.5}
                else:
                    results[i] = {"is_supported": cfg.verifier == "always-supported"}
            return results
        if cfg.verifier in LM_VERIFIERS:
            prompts = []
            for i, (title, topic, atom) in enumerate(items):
                if cfg.verifier == "no-context-lm":
                    prompts.append(self.lm().chat(no_context_prompt(topic, atom)))
                    continue
                hits = self.ks.search_page(title, f"{topic} {atom}", k=cfg.k, method=cfg.retrieval)
                results[i]["evidence"] = [
                    {
                        "passage_id": h.passage.passage_id,
                        "title": h.passage.title,
                        "rank": h.rank,
                        "score": round(h.score, 4),
                    }
                    for h in hits
                ]
                if cfg.passage_order == "page":
                    # retrieve_lm_prompt writes them in reverse: reverse page order here.
                    hits = sorted(hits, key=lambda h: -h.passage.idx)
                passages = [(h.passage.title, h.passage.text) for h in hits]
                prompts.append(self.lm().chat(retrieve_lm_prompt(topic, atom, passages)))
            for i, (t, f) in enumerate(self.lm().true_false(prompts)):
                results[i]["margin"] = round(t - f, 4)
                results[i]["is_supported"] = (t - f) > cfg.margin
        if cfg.verifier in NP_VERIFIERS:
            # NP of every fact, also where the LM already said "not supported": the value is
            # recorded, so calibration can fit both thresholds from one run.
            probs = self.np_probabilities(items)
            for i, prob in enumerate(probs):
                results[i]["np"] = round(prob, 4)
                np_says = prob > cfg.np_threshold
                if cfg.verifier == "np":
                    results[i]["is_supported"] = np_says
                else:  # supported only if both say so
                    results[i]["is_supported"] = results[i]["is_supported"] and np_says
        return results

    def np_probabilities(self, items: list[tuple[str, str, str]]) -> list[float]:
        """NP of each (page title, topic, atom) against the page's BM25 top-np_k passages."""
        scorer = self.np_scorer()
        inputs, keys = [], []
        for title, topic, atom in items:
            hits = self.ks.search_page(title, f"{topic} {atom}", k=self.config.np_k, method="bm25")
            passages = [h.passage.text.strip() for h in hits]
            inputs.append((atom, passages))
            keys.append(key_of("np", self._np_id, atom, passages))
        found = {k: self.cache.get(k) for k in keys}
        todo = list({k: i for i, k in enumerate(keys) if found[k] is None}.values())
        if hasattr(scorer, "probabilities"):  # the causal stand-in batches (shared prefixes)
            for start in range(0, len(todo), SLICE_TRUE_FALSE):
                part = todo[start : start + SLICE_TRUE_FALSE]
                values = scorer.probabilities([inputs[i] for i in part])
                new = {keys[i]: float(v) for i, v in zip(part, values, strict=True)}
                self.cache.put_many("np", new)
                found.update(new)
        else:
            for i in todo:
                value = float(scorer.probability(*inputs[i]))
                self.cache.put_many("np", {keys[i]: value})
                found[keys[i]] = value
        return [found[k] for k in keys]

    def run(self, bios: list[Bio], out_path: Path | None, progress: bool = True) -> list[dict]:
        """Evaluates bios chunk by chunk, writing a line per bio as it goes; returns the rows."""
        from tqdm import tqdm

        rows: list[dict] = []
        handle = out_path.open("w", encoding="utf-8") if out_path else None
        bar = tqdm(total=len(bios), unit=" bios", desc="eval", disable=not progress)
        try:
            for start in range(0, len(bios), self.config.chunk_bios):
                chunk = bios[start : start + self.config.chunk_bios]
                for row in self.evaluate_chunk(chunk):
                    rows.append(row)
                    if handle:
                        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                if handle:
                    handle.flush()
                bar.update(len(chunk))
        finally:
            bar.close()
            if handle:
                handle.close()
        return rows


def summarize(rows: list[dict]) -> dict:
    from factscore_local.scoring import BioScore

    scored = [
        BioScore(r["responded"], r["n_facts"], r["init_score"], r["score"])
        for r in rows
        if "error" not in r
    ]
    summary = aggregate(scored)
    summary["n_errors"] = sum(1 for r in rows if "error" in r)
    return summary
