"""The verification prompt's options: worked examples before the evidence, the fact's
sentence as context between the evidence and the statement, the question (True or False?
/ Yes or No?) and the format (chat template or plain text). All keep the evidence the
same for every fact of a block (so the block's KV cache is shared), and keep the
statement last, where the joint NP reads it."""

from __future__ import annotations

import pytest

from factscore_local.config import EvalConfig
from factscore_local.pipeline.cached_models import _statement_span
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.signals.verify_prompt import (
    DEMO_JUDGEMENTS,
    SENTENCE,
    STATEMENT,
    no_context_prompt,
    retrieve_lm_prompt,
    sentence_prefix,
    verification_demos,
)
from tests.conftest import judged_prompts, require, require_model
from tests.test_shared_evidence import long_page_bio

PASSAGES = [("Ann Lee", "Ann Lee is a chemist born in Leeds."), ("Ann Lee", "She won a prize.")]


def prefix(prompt: str) -> str:
    return prompt[: prompt.rindex(STATEMENT)]


def test_demos_come_first_and_are_shared_by_every_fact():
    a = retrieve_lm_prompt("Ann Lee", "Ann Lee is a chemist.", PASSAGES, demos=True)
    b = retrieve_lm_prompt("Ann Lee", "She was born in York.", PASSAGES, demos=True)
    assert a.startswith(verification_demos()) and prefix(a) == prefix(b)
    assert all(
        f"{STATEMENT}{fact} True or False? {answer}" in a for fact, answer in DEMO_JUDGEMENTS
    )
    assert {answer for _, answer in DEMO_JUDGEMENTS} == {"True", "False"}
    plain = retrieve_lm_prompt("Ann Lee", "Ann Lee is a chemist.", PASSAGES)
    assert a.endswith(plain)  # the same task after the examples
    assert _statement_span(a, "Ann Lee is a chemist.")  # the real statement, not a demo's


def test_the_sentence_comes_between_the_evidence_and_the_statement():
    """The evidence before the sentence is the plain prompt's shared prefix (read once per
    page, then once per sentence), and the statement is the prompt's last line."""
    sentence = "She studied in Leeds, where she was born."
    with_sentence = retrieve_lm_prompt(
        "Ann Lee", "She was born in Leeds.", PASSAGES, sentence=sentence
    )
    without = retrieve_lm_prompt("Ann Lee", "She was born in Leeds.", PASSAGES)
    assert sentence_prefix(with_sentence) == prefix(without)
    assert sentence_prefix(without) == ""
    tail = with_sentence[len(prefix(without)) :]
    assert tail == f'{SENTENCE}"{sentence}"\n{STATEMENT}She was born in Leeds. True or False?'
    start, end = _statement_span(with_sentence, "She was born in Leeds.")
    assert with_sentence[start + 1 : end] == "She was born in Leeds."
    assert retrieve_lm_prompt("Ann Lee", "x.", PASSAGES, sentence="  ") == retrieve_lm_prompt(
        "Ann Lee", "x.", PASSAGES
    )


def test_yes_no_question_changes_only_the_question_and_the_examples_answers():
    tf = retrieve_lm_prompt("Ann Lee", "She won a prize.", PASSAGES)
    yn = retrieve_lm_prompt("Ann Lee", "She won a prize.", PASSAGES, question="yes-no")
    assert prefix(tf) == prefix(yn) and yn.endswith("She won a prize. Yes or No?")
    demos = verification_demos("yes-no")
    answers = [line.rsplit(" ", 1)[1] for line in demos.splitlines() if "Yes or No?" in line]
    expected = ["Yes" if answer == "True" else "No" for _, answer in DEMO_JUDGEMENTS]
    assert answers == expected and "True" not in demos
    assert no_context_prompt("Ann Lee", "x.", "yes-no").endswith(f"{STATEMENT}x. Yes or No?")


def test_unknown_prompt_options_are_errors(tmp_path):
    with pytest.raises(ValueError, match="fact_context must be one of"):
        EvalConfig(index=tmp_path, fact_context="paragraph")
    with pytest.raises(ValueError, match="verify_format must be one of"):
        EvalConfig(index=tmp_path, verify_format="markdown")
    with pytest.raises(ValueError, match="verify_question must be one of"):
        EvalConfig(index=tmp_path, verify_question="maybe")


@pytest.mark.slow
@pytest.mark.heavy  # a minute; test_plain_format_and_yes_no_reach_the_lm_on_a_real_bio runs in CI
def test_levers_reach_the_lm_on_a_real_bio(db_index, tmp_path):
    """With the small LM on a real labeled bio: every judged prompt holds the examples,
    each fact is judged once with its own sentence (the margin) and once without (the
    joint NP, equal to the plain prompt's), and the margins differ from the plain
    prompt's (the options change what the model reads)."""
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.records.inputs import Bio

    require_model(SMALL_LM)
    bio, _ = long_page_bio(db_index)
    annotations = [s for s in bio.annotations if s.get("human-atomic-facts")][:2]
    one = Bio(line=1, topic=bio.topic, output="x", annotations=annotations,
              has_annotations_key=True, source="ChatGPT.jsonl")  # fmt: skip
    settings = dict(index=db_index, lm=SMALL_LM, use_atomic_facts=True, chunk_bios=1,
                    verifier="retrieve-lm+np")  # fmt: skip
    levers = Estimator(EvalConfig(**settings, verify_demos=True, fact_context="sentence"))
    with judged_prompts(levers.lm().lm) as captured:
        (row,) = levers.run([one], None)
    sentences = {s["text"].strip() for s in annotations}
    assert captured and all(p.count(verification_demos().strip()) == 1 for p in captured)
    facts = {d.atom for d in row.decisions} | {f.atom for f in row.human.facts}
    with_sentence = [p for p in captured if SENTENCE in p]
    assert all(any(f'{SENTENCE}"{s}"' in p for s in sentences) for p in with_sentence)
    # Margins from the prompts with the sentence, the joint NP from those without it.
    assert len(with_sentence) == len(facts) == len(captured) - len(with_sentence)
    (plain_row,) = Estimator(EvalConfig(**settings, verify_demos=True)).run([one], None)
    assert [d.margin for d in plain_row.decisions] != [d.margin for d in row.decisions]
    assert [d.np for d in plain_row.decisions] == [d.np for d in row.decisions]


@pytest.mark.slow
def test_plain_format_and_yes_no_reach_the_lm_on_a_real_bio(db_index, tmp_path):
    """With the small LM on a real labeled bio: plain prompts carry no chat template and
    end in the answer cue, yes-no prompts ask for Yes or No, and each setting is computed
    and cached apart from the default's (other margins, no cache hit between them)."""
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.records.inputs import Bio, read_bios
    from tests.test_shared_evidence import CHATGPT

    require_model(SMALL_LM)
    ks = KnowledgeSource(db_index)
    bio = next(b for b in read_bios(require(CHATGPT))
               if b.annotations and len(ks.get_passages(b.topic)) <= 3)  # fmt: skip
    annotations = [s for s in bio.annotations if s.get("human-atomic-facts")][:1]
    one = Bio(line=1, topic=bio.topic, output="x", annotations=annotations,
              has_annotations_key=True, source="ChatGPT.jsonl")  # fmt: skip
    settings = dict(index=db_index, lm=SMALL_LM, use_atomic_facts=True,
                    cache=tmp_path / "c.db")  # fmt: skip
    margins = {}
    for fmt, question in (("chat", "true-false"), ("plain", "true-false"), ("chat", "yes-no")):
        estimator = Estimator(EvalConfig(**settings, verify_format=fmt, verify_question=question))
        with judged_prompts(estimator.lm().lm) as captured:
            (row,) = estimator.run([one], None)
        assert captured and estimator.cache.misses > 0  # nothing reused from another setting
        chat = "<|im_start|>" in captured[0]
        assert chat == (fmt == "chat")
        if fmt == "plain":
            assert all(p.endswith("True or False?\nAnswer:") for p in captured)
        if question == "yes-no":
            assert all("Yes or No?" in p and "True or False?" not in p for p in captured)
        margins[fmt, question] = [d.margin for d in row.decisions]
    assert len({tuple(m) for m in margins.values()}) == 3
