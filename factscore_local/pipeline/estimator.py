"""``fscore eval``: generations in, FActScore estimates out, with local models only.

The path of a bio: its topic is resolved to a page of the index; its facts come from the
labeled ``model-atomic-facts`` or from decomposing the output (abstentions and empty
outputs do not respond); every fact of a chunk of bios (and, for labeled bios, every
human atomic fact) gets the signals its verifier reads (``signals``), the verifier's rule
decides (``verifiers``), and the bio is scored (``scoring``) into a ``BioRow``
(``records``). Bios are processed in chunks, and every model result is cached, so a killed
run resumes without recomputing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from factscore_local.config import EvalConfig
from factscore_local.config.build import with_served_defaults
from factscore_local.declarations.verifiers import Verifier, get_verifier
from factscore_local.pipeline.components import Components, build_components
from factscore_local.pipeline.decision.reasons import reasons
from factscore_local.pipeline.decision.scoring import score_bio
from factscore_local.pipeline.decomposition.abstain import is_abstained
from factscore_local.pipeline.decomposition.clean import Cleaned, clean_generation
from factscore_local.pipeline.decomposition.sentences import split_sentences
from factscore_local.pipeline.decomposition.standalone import set_aside
from factscore_local.pipeline.plan import RunPlan, plan_run, warn_unfitted
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.labeled import (
    HumanFact,
    LabeledFormatError,
    human_bio_score,
    human_facts,
    model_facts,
)
from factscore_local.pipeline.records.rows import BioRow, FactResult, HumanSide, recorded_value
from factscore_local.pipeline.signals.compute import FactQuery, compute_signals
from factscore_local.pipeline.signals.person_roles import names_a_role
from factscore_local.pipeline.signals.slot_details import conflict_detail


@dataclass
class _Work:
    """A bio's working state within one chunk (the input Bio is never changed)."""

    bio: Bio
    error: str = ""
    unit: str = ""  # the chunk it is decided with (named by the chunk's first bio)
    title: str = ""
    facts: list[tuple[str, str]] | None = None  # (sentence, atom); None: does not respond
    human: list[HumanFact] | None = None  # labeled bios, when validating
    human_score: tuple[float, int] | None = None  # (score, facts) of the humans' bio
    skipped_sentences: int = 0
    set_aside: list[tuple[str, str]] = field(default_factory=list)  # (atom, reason)
    cleaned: Cleaned | None = None  # the output without its markup, when it had some
    written: dict[str, str] = field(default_factory=dict)  # cleaned sentence -> as written
    decisions: list[FactResult] = field(default_factory=list)
    human_decisions: list[FactResult] = field(default_factory=list)


class Estimator:
    def __init__(
        self,
        config: EvalConfig,
        components: Components | None = None,
        verifier: Verifier | None = None,
        calibrating: bool = False,
    ) -> None:
        """``verifier``: one that is not registered, in place of ``config.verifier`` (the
        pass that reads the states a head is trained on). ``calibrating``: the run fits
        the rule's thresholds (no warning that none are fitted for the LM)."""
        self.config = config
        self.calibrating = calibrating
        self._given_verifier = verifier
        self.verifier = verifier or get_verifier(config.verifier)
        self.components = components if components is not None else build_components(config)
        self.plan: RunPlan | None = None  # made by prepare(), before the first bio
        if plan_run(config, self.verifier).head:  # a missing head stops the run at once
            self.components.head.get()

    def prepare(self) -> RunPlan:
        """The run's plan, made once before the first bio: a server's model's fitted
        defaults applied where they were pending (the config names no model), the LM
        checked against the plan when it loads, before any work (``PlanError`` names what
        it lacks), and a warning when a calibrated rule runs with no thresholds fitted for
        the LM."""
        if self.plan is not None:
            return self.plan
        if self.config.defaults_pending is not None:
            served = self.components.lm.get().lm.model_name
            self.config = with_served_defaults(self.config, served)
            self.verifier = self._given_verifier or get_verifier(self.config.verifier)
        plan = plan_run(self.config, self.verifier)
        config, verifier, cache = self.config, self.verifier, self.cache
        warn = None if self.calibrating else (lambda lm: warn_unfitted(config, verifier, lm, cache))
        self.components.prepare(plan, warn)
        self.plan = plan
        return plan

    @property
    def ks(self):
        return self.components.knowledge

    @property
    def cache(self):
        return self.components.cache

    def lm(self):
        return self.components.lm.get()

    # --- chunks of bios ------------------------------------------------------------------
    def evaluate_chunk(self, bios: Sequence[Bio]) -> list[BioRow]:
        """The rows of one chunk: its bios decided together."""
        return self.evaluate_chunks([bios])[0]

    def evaluate_chunks(self, chunks: Sequence[Sequence[Bio]]) -> list[list[BioRow]]:
        """The rows of several chunks, each decided as :meth:`evaluate_chunk` decides it
        alone, with the model work of all of them scheduled together: every sentence of
        every bio in one generation call, every fact in one verification call (a GPU or a
        server sees all their prompts at once; on a CPU the generation slots stay full)."""
        units = [
            [
                _Work(bio, error=bio.error, unit=f"{chunk[0].source}:{chunk[0].line}")
                for bio in chunk
            ]
            for chunk in chunks
        ]
        self.prepare()
        work = [w for unit in units for w in unit]
        ready = [w for w in work if not w.error and self._resolve(w)]
        self._collect_facts(ready)
        if self.config.validate:
            self._collect_human_facts(ready)
        ready = [w for w in ready if not w.error]
        # Every fact of the chunk, the human atomic facts included, verified together (one
        # batched LM call: facts of a page share their prompt prefixes).
        model_items = [(w, s, a) for w in ready for s, a in w.facts or []]
        human_items = [(w, f) for w in ready for f in w.human or []]
        # The progress bar counts a bio as done once the verified share of the pass covers
        # its facts (model and human facts, in the order they are verified).
        counts = {id(w): 0 for w in work}
        for w, *_ in model_items + human_items:
            counts[id(w)] += 1
        plan = self.prepare()
        kind = "np" if "np_scorer" in plan.passes and len(plan.passes) == 1 else "true_false"
        self.components.progress.start_bios([counts[id(w)] for w in work], kind)
        # In the shared mode a bio's facts share blocks of evidence (the group is named by
        # the bio's place in the input, not by its chunk); its human facts use the model
        # facts' blocks without changing them (tier 1), so validating changes no estimate.
        results = self.verify(
            [
                FactQuery(w.title, w.bio.topic, a, self._group(w), 0, s, w.unit)
                for w, s, a in model_items
            ]
            + [
                FactQuery(w.title, w.bio.topic, f.text, self._group(w), 1, f.sentence, w.unit)
                for w, f in human_items
            ]
        )
        for (w, sentence, _), result in zip(model_items, results, strict=False):
            # The rows show the sentence as the output wrote it (markers included).
            w.decisions.append(replace(result, sentence=w.written.get(sentence, sentence)))
        for (w, fact), result in zip(human_items, results[len(model_items) :], strict=True):
            w.human_decisions.append(replace(result, label=fact.label))
        return [[self._row(w) for w in unit] for unit in units]

    @staticmethod
    def _group(w: _Work) -> str:
        return f"{w.bio.source}:{w.bio.line}"

    def _resolve(self, w: _Work) -> bool:
        if self.config.global_evidence or not w.bio.topic.strip():
            w.title = ""  # evidence from the whole index
            return True
        resolution = self.ks.resolve_title(w.bio.topic)
        if resolution.title is None:
            hint = ", ".join(resolution.suggestions)
            w.error = f"unknown topic {w.bio.topic!r}" + (
                f" (did you mean: {hint}?)" if hint else ""
            )
            return False
        w.title = resolution.title
        return True

    def _collect_facts(self, work: list[_Work]) -> None:
        to_decompose: list[_Work] = []
        for w in work:
            bio = w.bio
            if self.config.use_atomic_facts:
                if not bio.has_annotations_key:
                    w.error = "--use-atomic-facts needs 'annotations' in every line"
                    continue
                try:
                    w.facts = model_facts(bio.annotations) or None
                except LabeledFormatError as exc:
                    w.error = str(exc)
            elif bio.output.strip() and not is_abstained(bio.output, self.config.abstain):
                cleaned = clean_generation(bio.output) if self.config.clean else None
                if any(ch.isalpha() for ch in (cleaned.text if cleaned else bio.output)):
                    w.cleaned = cleaned if cleaned and cleaned.changed else None
                    to_decompose.append(w)
                else:
                    held = ", ".join(cleaned.removed) if cleaned else "characters with no word"
                    w.error = f"no claim to verify: the output holds only {held}"
        if to_decompose:
            split = [split_sentences(w.cleaned.text if w.cleaned else w.bio.output)
                     for w in to_decompose]  # fmt: skip
            for w, sentences in zip(to_decompose, split, strict=True):
                w.skipped_sentences = max(0, len(sentences) - self.config.max_sentences)
            decomposed = self.components.decomposer.get().run_split(split)
            for w, pairs in zip(to_decompose, decomposed, strict=True):
                if self.config.standalone:
                    pairs, w.set_aside = set_aside(pairs)
                w.facts = [(s.text, f) for s, fs in pairs for f in fs] or None
                if w.cleaned is not None:
                    at = 0
                    for s, _ in pairs:
                        if s.text not in w.written:
                            original, at = w.cleaned.original_span(s.text, at)
                            w.written[s.text] = original.strip()

    def _collect_human_facts(self, work: list[_Work]) -> None:
        for w in work:
            if w.error or not w.bio.has_annotations_key:
                continue
            try:
                w.human = human_facts(w.bio.annotations)
                w.human_score = human_bio_score(w.bio.annotations)
            except LabeledFormatError as exc:
                w.error = str(exc)

    def _row(self, w: _Work) -> BioRow:
        bio = w.bio
        if w.error:
            return BioRow(bio.line, bio.topic, bio.source, error=w.error, category=bio.category)
        decisions = tuple(w.decisions) if w.facts else ()
        scored = score_bio([d.is_supported for d in decisions] or None, self.config.gamma)
        human_side = None
        if w.human is not None:
            score, n_facts = w.human_score or (None, 0)
            human_side = HumanSide(score, n_facts, tuple(w.human_decisions))
        return BioRow(
            bio.line,
            bio.topic,
            bio.source,
            title=w.title,
            responded=scored.responded,
            n_facts=scored.n_facts,
            init_score=scored.init_score,
            score=scored.score,
            decisions=decisions,
            human=human_side,
            skipped_sentences=w.skipped_sentences,
            category=bio.category,
            set_aside=tuple(w.set_aside),
        )

    # --- facts ---------------------------------------------------------------------------
    def verify(self, queries: Sequence[FactQuery | tuple[str, str, str]]) -> list[FactResult]:
        """(page title, topic, atom) -> each fact's decision, signals and evidence."""
        queries = [FactQuery(*q) for q in queries]
        if not queries:
            return []
        self.prepare()
        signals = compute_signals(self.verifier, queries, self.components, self.config)
        # Decided on the values as recorded, so that re-deciding an output (--settings,
        # calibration) gives exactly the decisions a run with those thresholds gives.
        recorded = {
            name: [recorded_value(name, v) for v in values]
            for name, values in signals.values.items()
        }
        decided = self.verifier.decide(
            {name: np.asarray(v, float) for name, v in recorded.items()},
            self.config.thresholds,
            len(queries),
        )
        why = reasons(
            self.verifier,
            {name: np.asarray(v, float) for name, v in recorded.items()},
            self.config.thresholds,
            decided,
            lambda i, kind: self._conflict(queries[i].atom, kind, signals.evidence[i]),
        )
        return [
            FactResult(
                atom=q.atom,
                is_supported=bool(decided[i]),
                reason=why[i],
                evidence=signals.evidence[i],
                block=signals.blocks[i],
                read_as=None if signals.read_as is None else signals.read_as[i],
                state=None if signals.states is None else signals.states[i],
                values={name: values[i] for name, values in recorded.items()},
            )
            for i, q in enumerate(queries)
        ]

    def _conflict(self, atom: str, kind: str, evidence) -> str:
        """The values of a fact's conflicting slot, quoted from its own top-k passages (or
        the person its passages give the fact's role: asked of every rejected fact, most
        of which name no role, so their passages are not read for it)."""
        if kind == "person" and not names_a_role(atom):
            return ""
        knowledge = self.components.knowledge
        passages = [
            (f'"{e.title}" #{e.passage_id}', knowledge.passage(e.passage_id).clean_text)
            for e in evidence or ()
        ]
        return conflict_detail(atom, kind, passages)

    def _evaluate_safely(self, chunks: Sequence[Sequence[Bio]]) -> list[BioRow]:
        """evaluate_chunks, where a bio that makes a model call fail (a prompt the LM cannot
        take, say) is reported in its own row and the others are scored."""
        try:
            return [row for rows in self.evaluate_chunks(chunks) for row in rows]
        except (ValueError, RuntimeError) as exc:
            if len(chunks) > 1:
                return [row for chunk in chunks for row in self._evaluate_safely([chunk])]
            bios = chunks[0]
            if len(bios) > 1:
                return [row for bio in bios for row in self._evaluate_safely([[bio]])]
            bio = bios[0]
            message = f"could not be evaluated: {type(exc).__name__}: {exc}"
            return [BioRow(bio.line, bio.topic, bio.source, error=message, category=bio.category)]

    # --- a whole input ------------------------------------------------------------------------
    def run(
        self,
        bios: Sequence[Bio],
        out_path: Path | None,
        progress: bool = True,
        batch_bios: int | None = None,
    ) -> list[BioRow]:
        """Evaluates bios chunk by chunk, the chunks of ``batch_bios`` bios (default: the
        config's) scheduled together, writing a line per bio as each batch ends; returns
        the rows (the same whatever the batch: each chunk is decided on its own)."""
        import json

        from tqdm import tqdm

        self.prepare()  # stops here, before the first bio, when the LM lacks what it needs
        size = self.config.chunk_bios
        per_batch = max(1, (batch_bios or self.config.batch_bios) // size)
        chunks = [bios[start : start + size] for start in range(0, len(bios), size)]
        rows: list[BioRow] = []
        handle = out_path.open("w", encoding="utf-8") if out_path else None
        bar = tqdm(total=len(bios), unit=" bios", desc="eval", disable=not progress)
        self.components.progress.attach(bar if progress else None)
        try:
            for start in range(0, len(chunks), per_batch):
                batch = chunks[start : start + per_batch]
                for row in self._evaluate_safely(batch):
                    rows.append(row)
                    if handle:
                        handle.write(json.dumps(row.to_json(), ensure_ascii=False) + "\n")
                if handle:
                    handle.flush()
                self.components.progress.end_bios(sum(map(len, batch)))  # the bios written
        finally:
            self.components.progress.attach(None)
            bar.close()
            if handle:
                handle.close()
        return rows
