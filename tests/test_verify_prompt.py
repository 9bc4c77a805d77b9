"""The verification prompt's options: worked examples before the evidence, and the fact's
sentence as context after the statement. Both keep the prompt up to the statement the
same for every fact of a block (so the block's KV cache is shared), and keep the
statement where the joint NP reads it."""

from __future__ import annotations

import pytest

from factscore_local.components import _statement_span
from factscore_local.config import EvalConfig
from factscore_local.estimator import Estimator
from factscore_local.verify_prompt import (
    DEMO_JUDGEMENTS,
    STATEMENT,
    retrieve_lm_prompt,
    verification_demos,
)
from tests.conftest import judged_prompts
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


def test_the_sentence_follows_the_statement_and_leaves_the_prefix_alone():
    sentence = "She studied in Leeds, where she was born."
    with_sentence = retrieve_lm_prompt(
        "Ann Lee", "She was born in Leeds.", PASSAGES, sentence=sentence
    )
    without = retrieve_lm_prompt("Ann Lee", "She was born in Leeds.", PASSAGES)
    assert prefix(with_sentence) == prefix(without)
    tail = with_sentence[with_sentence.rindex(STATEMENT) :]
    assert tail.index("She was born in Leeds.") < tail.index(sentence)
    assert tail.endswith("True or False?")
    start, end = _statement_span(with_sentence, "She was born in Leeds.")
    assert with_sentence[start + 1 : end] == "She was born in Leeds."
    assert retrieve_lm_prompt("Ann Lee", "x.", PASSAGES, sentence="  ") == retrieve_lm_prompt(
        "Ann Lee", "x.", PASSAGES
    )


def test_unknown_fact_context_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="fact_context must be one of"):
        EvalConfig(index=tmp_path, fact_context="paragraph")


@pytest.mark.slow
def test_levers_reach_the_lm_on_a_real_bio(db_index, tmp_path):
    """With the small LM on a real labeled bio: every judged prompt holds the examples and
    its fact's sentence, the human facts get their own sentence, and the margins differ
    from the plain prompt's (the options change what the model reads)."""
    from factscore_local.inputs import Bio
    from factscore_local.model_store import SMALL_LM, installed_path

    if installed_path(SMALL_LM) is None:
        pytest.skip(f"{SMALL_LM} not installed (fscore models install)")
    bio, _ = long_page_bio(db_index)
    annotations = [s for s in bio.annotations if s.get("human-atomic-facts")][:2]
    one = Bio(line=1, topic=bio.topic, output="x", annotations=annotations,
              has_annotations_key=True, source="ChatGPT.jsonl")  # fmt: skip
    settings = dict(index=db_index, lm=SMALL_LM, use_atomic_facts=True, chunk_bios=1)
    levers = Estimator(EvalConfig(**settings, verify_demos=True, fact_context="sentence"))
    with judged_prompts(levers.lm().lm) as captured:
        (row,) = levers.run([one], None)
    sentences = {s["text"].strip() for s in annotations}
    assert captured and all(p.count(verification_demos().strip()) == 1 for p in captured)
    for p in captured:
        assert any(f'not evidence: "{s}")' in p for s in sentences)
    assert len(captured) == len({d.atom for d in row.decisions} | {f.atom for f in row.human.facts})
    (plain_row,) = Estimator(EvalConfig(**settings)).run([one], None)
    assert [d.margin for d in plain_row.decisions] != [d.margin for d in row.decisions]
