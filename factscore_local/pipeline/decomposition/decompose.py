"""Atomic-fact decomposition: demos, prompts, output parsing and post-processing.

Everything FActScore does to turn a generation into atomic facts, except running the LM,
which the caller supplies (see :class:`FactLM`). The flow per generation:

1. split into sentences (:mod:`factscore_local.pipeline.decomposition.sentences`);
2. for each distinct sentence build a few-shot prompt: the first ``n_fixed`` demos plus
   the ``k_retrieved`` BM25-nearest demos, then the sentence itself;
3. one batched LM call; parse "- " bullets from each output;
4. force ``[]`` for the reference's boilerplate sentences ("Sure...", "Please...", ...);
5. the reference's spaCy post-processing (drop or repair facts with invented numbers or
   dates, drop redundant "He was born." style facts, dedupe), which lives in
   :mod:`factscore_local.pipeline.decomposition.fact_postprocess`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from rank_bm25 import BM25Okapi

from factscore_local.data import data_file
from factscore_local.pipeline.decomposition import fragments
from factscore_local.pipeline.decomposition.fact_postprocess import (
    SPACY_MODEL,
    detect_entities,
    load_spacy,
    postprocess,
)
from factscore_local.pipeline.decomposition.sentences import Sentence, split_sentences
from factscore_local.prompts import load_prompt

__all__ = [
    "DEFAULT_DEMOS_PATH",
    "DEFAULT_INSTRUCTION",
    "DEFAULT_STOP",
    "REFERENCE_INSTRUCTION",
    "SPACY_MODEL",
    "Decomposer",
    "DemoSelector",
    "FactLM",
    "build_prompt",
    "cut_off_fact",
    "detect_entities",
    "forced_empty",
    "load_demos",
    "load_spacy",
    "parse_facts",
    "parse_facts_reference",
    "postprocess",
    "stop_sequences",
]

DEFAULT_DEMOS_PATH = data_file("demos.json")

# The reference's instruction, for byte-exact reproduction of its prompts.
REFERENCE_INSTRUCTION = load_prompt("decompose_reference_instruction")
# Our own wording; same role, same position in the prompt.
DEFAULT_INSTRUCTION = load_prompt("decompose_instruction")


def stop_sequences(instruction: str = DEFAULT_INSTRUCTION) -> list[str]:
    """Stop strings for the LM: a blank line ends a bullet list in the demos, and a new
    instruction line means the model started inventing the next block."""
    return ["\n\n", instruction]


DEFAULT_STOP: tuple[str, ...] = tuple(stop_sequences(DEFAULT_INSTRUCTION))


class FactLM(Protocol):
    """What :class:`Decomposer` needs from a language model (deterministic decoding)."""

    def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
        """One completion per prompt, in order, cut at the first stop string."""
        ...


# ---------------------------------------------------------------------------------------
# Demonstrations


def load_demos(path: Path | str | None = None) -> dict[str, list[str]]:
    """Read a ``{sentence: [fact, ...]}`` JSON file, keeping file order."""
    p = Path(path) if path is not None else DEFAULT_DEMOS_PATH
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise ValueError(f"demonstrations file not found: {p}") from e
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read demonstrations file {p}: {e}") from e
    if not isinstance(raw, dict) or not raw:
        raise ValueError(f"{p}: expected a non-empty JSON object {{sentence: [facts]}}")
    for key, facts in raw.items():
        if not isinstance(facts, list) or not all(isinstance(f, str) and f for f in facts):
            raise ValueError(f"{p}: demo {key!r} must map to a list of non-empty strings")
    return raw


class DemoSelector:
    """Chooses the demonstrations for one sentence: fixed ones, then BM25-retrieved ones.

    As in the reference, retrieval is over all demo keys (a fixed demo can be retrieved
    again), tokenisation is ``str.split(" ")`` (case-sensitive), and ranking follows
    ``BM25Okapi.get_top_n`` (ties: reversed ``np.argsort`` order).
    """

    def __init__(self, demos: dict[str, list[str]], n_fixed: int = 7, k_retrieved: int = 1) -> None:
        if not demos:
            raise ValueError("no demonstrations given")
        if n_fixed < 0 or k_retrieved < 0:
            raise ValueError("n_fixed and k_retrieved must be >= 0")
        if n_fixed > len(demos):
            raise ValueError(f"n_fixed={n_fixed} but only {len(demos)} demonstrations")
        self.demos = demos
        self.keys = list(demos)
        self.n_fixed = n_fixed
        self.k_retrieved = k_retrieved
        self._bm25 = BM25Okapi([k.split(" ") for k in self.keys]) if k_retrieved else None

    def fixed(self) -> list[str]:
        return self.keys[: self.n_fixed]

    def retrieve(self, sentence: str) -> list[str]:
        if self._bm25 is None:
            return []
        return list(self._bm25.get_top_n(sentence.split(" "), self.keys, n=self.k_retrieved))

    def select(self, sentence: str) -> list[str]:
        """Demo keys for ``sentence``, in prompt order."""
        return self.fixed() + self.retrieve(sentence)


def build_prompt(
    sentence: str, selector: DemoSelector, instruction: str = DEFAULT_INSTRUCTION
) -> str:
    """Few-shot prompt in the reference layout, as plain text.

    Each demo block is ``"{instruction} {demo}\\n"`` followed by ``"- {fact}\\n"`` lines
    and a blank line; the target line closes the prompt. The whole text is stripped, so
    it ends with the sentence and no newline (the reference strips before sending).
    """
    parts: list[str] = []
    for key in selector.select(sentence):
        parts.append(f"{instruction} {key}\n")
        parts.extend(f"- {fact}\n" for fact in selector.demos[key])
        parts.append("\n")
    parts.append(f"{instruction} {sentence}\n")
    return "".join(parts).strip()


# ---------------------------------------------------------------------------------------
# Parsing LM output

# A bullet at the start of a line: "-", "*" or "•" followed by a space (repeats such as
# "- - " allowed), or a numbered "1." / "1)". Requiring the space keeps "**Facts:**" or
# "---" from being read as bullets.
_BULLET_RE = re.compile(r"^(?:(?:[-*\u2022](?:\s+|$))+|\d{1,3}[.)]\s+)")
_CLOSERS = "\"'\u201d\u2019"


def _ends_sentence(fact: str) -> bool:
    return fact.rstrip(_CLOSERS).endswith((".", "!", "?"))


def _terminate(fact: str) -> str:
    # Add a full stop unless the fact already ends a sentence (possibly inside quotes).
    return fact if _ends_sentence(fact) else fact + "."


def parse_facts(output: str) -> list[str]:
    """Facts from an LM completion, one per bullet line.

    Deliberate deviations from the reference parser (``parse_facts_reference``):
    a dash inside a fact ("1990 - 1995") no longer splits it, empty bullets are skipped
    instead of crashing, "*", "•" and numbered bullets are accepted, lines before the
    first bullet (a chat-style preamble) are ignored, the list ends at the first blank or
    non-bullet line after a bullet (so a new instruction or commentary is not glued onto
    the last fact), and every fact, not only the last, gets a final "." when it lacks
    closing punctuation. But when every other fact of the list ends a sentence and the
    last does not, the LM was cut off mid-fact by the token limit ("- Itote went on"): that
    last fact is dropped, since it is not a statement (on the dev bios' own decomposition
    every such list had run to the limit, often in a repetition loop;
    docs/benchmarks/fragments-98.md). And a fact the list repeats is kept once.
    """
    facts = bullet_texts(output)
    if _last_cut_off(facts):
        facts.pop()
    # A fact repeated in one list (a small LM's greedy loop) is kept once: else each copy
    # would be verified and counted.
    return list(dict.fromkeys(_terminate(f) for f in facts))


def cut_off_fact(output: str) -> str | None:
    """The last fact of an LM completion when the LM was cut off in the middle of it: it
    does not end a sentence while every other fact of the list does. None otherwise."""
    facts = bullet_texts(output)
    return facts[-1] if _last_cut_off(facts) else None


def _last_cut_off(facts: list[str]) -> bool:
    return len(facts) > 1 and not _ends_sentence(facts[-1]) and all(map(_ends_sentence, facts[:-1]))


def bullet_texts(output: str) -> list[str]:
    """The text of each bullet of the first bullet list, as written."""
    facts: list[str] = []
    started = False
    for line in output.splitlines():
        stripped = line.strip()
        match = _BULLET_RE.match(stripped)
        if match is None:
            if started:
                break
            continue
        started = True
        fact = stripped[match.end() :].strip()
        if fact:
            facts.append(fact)
    return facts


def parse_facts_reference(output: str) -> list[str]:
    """The reference's parser, for reproduction: split on every "- ", strip each piece,
    and add "." to the last piece only. An empty piece ("- - "), on which the reference
    crashes with IndexError, is skipped so that one odd completion does not stop a run."""
    facts = [f for f in (piece.strip() for piece in output.split("- ")[1:]) if f]
    if facts and not facts[-1].endswith("."):
        facts[-1] += "."
    return facts


# Putting it together


def forced_empty(sentence: str, index: int) -> bool:
    """Sentences whose facts the reference always discards (boilerplate, not content)."""
    return sentence.startswith(("This sentence does not contain any facts", "Sure", "Please")) or (
        index == 0 and sentence.startswith("Here are")
    )


class Decomposer:
    """Generation -> ``[(Sentence, [facts])]`` with a caller-supplied LM.

    Each distinct sentence is prompted once, all in one ``generate`` call; sentences whose
    facts are forced to ``[]`` are not prompted at all (the reference prompts them and
    throws the answer away, so results are the same). Nothing is cached here.
    """

    def __init__(
        self,
        lm: FactLM,
        selector: DemoSelector | None = None,
        *,
        instruction: str = DEFAULT_INSTRUCTION,
        stop: Sequence[str] | None = None,
        max_new_tokens: int = 256,
        parser: Callable[[str], list[str]] = parse_facts,
        apply_postprocess: bool = True,
        drop_fragments: bool = True,
        nlp: Any = None,
        prime: str = "\n-",
        max_sentences: int | None = None,
    ) -> None:
        self.lm = lm
        self.selector = selector if selector is not None else DemoSelector(load_demos())
        self.instruction = instruction
        self.stop = list(stop) if stop is not None else stop_sequences(instruction)
        self.max_new_tokens = max_new_tokens
        self.parser = parser
        self.apply_postprocess = apply_postprocess
        # Facts cut mid-word or without a verb are dropped (fragments.py): a fragment must
        # never count as supported.
        self.drop_fragments = drop_fragments
        self.nlp = nlp
        # The prompt ends with the start of the first bullet: small local LMs otherwise
        # tend to continue the target sentence instead of listing its facts (measured).
        self.prime = prime
        # Sentences past this many are not decomposed (a response-length limit).
        self.max_sentences = max_sentences

    def prompt(self, sentence: str) -> str:
        return build_prompt(sentence, self.selector, self.instruction) + self.prime

    def run(self, generation: str) -> list[tuple[Sentence, list[str]]]:
        return self.run_many([generation])[0]

    def run_many(self, generations: Iterable[str]) -> list[list[tuple[Sentence, list[str]]]]:
        """Like :meth:`run` for several generations, with a single LM call for all."""
        return self.run_split([split_sentences(g) for g in generations])

    def run_split(
        self, split: Sequence[Sequence[Sentence]]
    ) -> list[list[tuple[Sentence, list[str]]]]:
        """:meth:`run_many` for generations already split into sentences (up to
        ``max_sentences`` of each are decomposed)."""
        split = [list(sents)[: self.max_sentences] for sents in split]
        todo: list[str] = []
        for sents in split:
            for idx, s in enumerate(sents):
                if not forced_empty(s.text, idx) and s.text not in todo:
                    todo.append(s.text)
        facts_by_sentence: dict[str, list[str]] = {}
        if todo:
            outputs = self.lm.generate(
                [self.prompt(t) for t in todo], self.max_new_tokens, list(self.stop)
            )
            if len(outputs) != len(todo):
                raise ValueError(f"LM returned {len(outputs)} outputs for {len(todo)} prompts")
            lead = self.prime.lstrip("\n")
            facts_by_sentence = {
                t: self.parser(lead + o) for t, o in zip(todo, outputs, strict=True)
            }

        results = []
        for sents in split:
            pairs = [
                (s, [] if forced_empty(s.text, i) else list(facts_by_sentence[s.text]))
                for i, s in enumerate(sents)
            ]
            if self.apply_postprocess:
                pairs = postprocess(pairs, self.nlp)
            results.append(fragments.drop_fragments(pairs) if self.drop_fragments else pairs)
        return results
