"""VeriScore offline: the sliding window, claim parsing, F1@K arithmetic, K per domain,
bad input per line, global retrieval without a topic, and a small real run (slow)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.methods.veriscore.core import (
    NO_CLAIM,
    f1_at_k,
    median_k,
    paragraphs_of,
    parse_claims,
    unique,
    windows,
)
from factscore_local.methods.veriscore.pipeline import decide, extraction_prompt, read_responses
from tests.conftest import require_model

S = [f"S{i}." for i in range(8)]


def test_window_has_up_to_three_before_and_one_after():
    ws = windows([S[:5]])
    assert ws[0].text == "<SOS>S0.<EOS> S1."
    assert ws[2].text == "S0. S1. <SOS>S2.<EOS> S3."
    assert ws[4].text == "S1. S2. S3. <SOS>S4.<EOS>"  # 3 before, none after
    assert [w.sentence for w in ws] == S[:5]


def test_long_paragraph_leads_and_question_prefix():
    ws = windows([S[:7]], question="Why?")
    # 7 sentences > 5: the first sentence leads every window that does not already hold it.
    assert ws[6].text == "Question: Why? S0. S3. S4. S5. <SOS>S6.<EOS>"
    assert ws[3].text == "Question: Why? S0. S1. S2. <SOS>S3.<EOS> S4."  # already in it
    assert windows([S[:5]])[4].text.startswith("S1.")  # 5 sentences: no lead
    # Paragraphs are windows of their own.
    two = windows([S[:2], S[2:4]])
    assert two[2].text == "<SOS>S2.<EOS> S3." and two[2].paragraph == 1


def test_paragraphs_split_on_line_breaks():
    text = "A one. A two.\n\nB one.\nC one."
    assert paragraphs_of(text, lambda t: t.replace(". ", ".|").split("|")) == [
        ["A one.", "A two."], ["B one."], ["C one."]]  # fmt: skip


def test_no_verifiable_claim_and_bullets():
    assert parse_claims(NO_CLAIM) == []
    assert parse_claims("no verifiable claim") == []
    assert parse_claims("- A is B.\n* C is D.\n2) E is F.\nnot a claim") == [
        "A is B.", "C is D.", "E is F."]  # fmt: skip
    assert unique(["A is B.", "a  is b.", "C."]) == ["A is B.", "C."]
    prompt = extraction_prompt("<SOS>X.<EOS>")
    assert prompt.endswith("Passage: <SOS>X.<EOS>\nMarked sentence: X.\nClaims:\n")
    assert NO_CLAIM in prompt


def test_f1_at_k_arithmetic():
    assert f1_at_k(0, 5, 3)["f1_at_k"] == 0.0  # S = 0
    assert f1_at_k(0, 0, 3) == {"precision": 0.0, "recall_at_k": 0.0, "f1_at_k": 0.0}
    full = f1_at_k(4, 5, 3)  # S >= K: recall capped at 1
    assert full["recall_at_k"] == 1.0 and full["f1_at_k"] == pytest.approx(2 * 0.8 / 1.8)
    half = f1_at_k(2, 2, 4)  # P 1, R 0.5
    assert half["f1_at_k"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        f1_at_k(1, 1, 0)


def test_k_is_the_median_per_domain():
    assert median_k({"bio": [2, 9, 4], "qa": [1, 2, 3, 10], "none": [0, 0]}) == {
        "bio": 4.0, "qa": 2.5, "none": 1.0}  # fmt: skip


def test_binary_decision_uses_the_margin():
    verdict = {"supported": 0.4, "unsupported": 0.6}
    assert decide(verdict) == "unsupported"
    assert decide(verdict, margin=-0.5) == "supported"  # log(0.4/0.6) = -0.405
    assert decide({"supported": 0.2, "contradicted": 0.5, "inconclusive": 0.3}) == "contradicted"


def test_bad_lines_reported_per_line(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([
        json.dumps({"question": "Q?", "response": "A.", "domain": "qa"}),
        json.dumps({"input": "Tell me.", "output": "B.", "topic": "X"}),
        json.dumps({"response": "   "}),
        json.dumps({"topic": "no text"}),
        "{bad",
    ]), "utf-8")  # fmt: skip
    rs = list(read_responses(path))
    assert (rs[0].question, rs[0].domain) == ("Q?", "qa")
    assert (rs[1].question, rs[1].response, rs[1].domain) == ("Tell me.", "B.", "default")
    assert rs[2].error == "empty response"
    assert "no 'response'" in rs[3].error and "not a JSON line" in rs[4].error


@pytest.mark.slow
def test_veriscore_runs_end_to_end_with_global_evidence(xml_index, tmp_path):
    """The small LM extracts and verifies claims of a short answer against an index of
    real Wikipedia pages, without a topic; bad lines get their own rows."""

    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    index = xml_index  # the real dump excerpt, built once for the session
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join([
        json.dumps({"question": "Who was Aristotle?", "domain": "bio",
                    "response": "Aristotle was a Greek philosopher. He taught Alexander the "
                                "Great."}),
        json.dumps({"response": ""}),
    ]) + "\n", "utf-8")  # fmt: skip
    out = tmp_path / "out.jsonl"
    args = ["veriscore", "--index", str(index), "--input", str(source), "--out", str(out),
            "--lm", SMALL_LM, "--cache", str(tmp_path / "c.db"), "--quiet"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert rows[1] == {"line": 2, "error": "empty response"}
    first = rows[0]
    assert len(first["claim_list"]) == 2  # one list per sentence
    assert first["all_claim_lst"] and first["K"] >= 1
    for claim in first["all_claim_lst"]:
        evidence = first["claim_search_results"][claim]
        assert len(evidence) == 5 and all(e["title"] and e["snippet"] for e in evidence)
    assert any(e["title"] == "Aristotle" for c in first["all_claim_lst"]
               for e in first["claim_search_results"][c])  # fmt: skip
    assert {v["verification_result"] for v in first["claim_verification_result"]} <= {
        "supported", "unsupported"}  # fmt: skip
    assert "bio: VeriScore (F1@K" in result.output
    assert "1 line(s) could not be used" in result.output


@pytest.mark.slow
@pytest.mark.heavy  # the same mechanism as test_shared_evidence.py's, through VeriScore
def test_shared_evidence_reads_a_block_once_and_decides_as_a_fresh_full_prompt(tmp_path, xml_index):
    """Claims of one response share the union of their top-k (deduplicated, grouped by
    page); the block is evaluated once, the verdicts match a fresh whole-prompt evaluation
    of the same block, and a second run is answered from the cache."""
    from factscore_local.config import EvalConfig
    from factscore_local.methods.veriscore.pipeline import verdicts, verify
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.components import CachedLM, build_components
    from factscore_local.runtime.cache import ResultCache

    require_model(SMALL_LM)
    parts = build_components(EvalConfig(index=xml_index, lm=SMALL_LM, cache=tmp_path / "c.db"))
    lm = parts.lm.get()
    claims = ["Aristotle was a Greek philosopher.", "Aristotle taught Alexander the Great.",
              "Aristotle was born in Stagira.", "Plato founded the Academy in Athens."]  # fmt: skip
    groups = [0, 0, 0, 1]
    before = (lm.lm.stats.prompt_tokens, lm.lm.stats.evaluated_tokens)
    hits, probs, blocks = verify(claims, lm, parts.knowledge, 3, "binary", groups)
    prompt_tokens = lm.lm.stats.prompt_tokens - before[0]
    evaluated = lm.lm.stats.evaluated_tokens - before[1]

    ids = [[p.passage_id for p in block] for block in blocks]
    union = {h.passage.passage_id for hs in hits[:3] for h in hs}
    assert ids[0] == ids[1] == ids[2] and set(ids[0]) == union  # one block for response 0
    assert len(set(ids[0])) == len(ids[0])  # deduplicated
    assert [(p.title, p.idx) for p in blocks[0]] == sorted((p.title, p.idx) for p in blocks[0])
    assert {h.passage.passage_id for h in hits[3]} == set(ids[3])  # response 1: its own
    # The shared block went through the model once, not once per claim.
    block_tokens = prompt_tokens - evaluated
    assert block_tokens > prompt_tokens / 2

    fresh = CachedLM(lm.lm, ResultCache(tmp_path / "fresh.db"), lm.model_id)
    lm.lm.forget()
    passages = [[(p.title, p.text) for p in block] for block in blocks]
    whole = verdicts(claims, passages, fresh, "binary")  # each prompt evaluated whole
    for shared_p, whole_p in zip(probs, whole, strict=True):
        assert decide(shared_p) == decide(whole_p)
        assert abs(shared_p["supported"] - whole_p["supported"]) < 0.05

    misses = parts.cache.misses
    _, again, _ = verify(claims, lm, parts.knowledge, 3, "binary", groups)
    assert parts.cache.misses == misses and again == probs  # resumed from the cache


def test_page_evidence_takes_the_segment_of_the_page_holding_most_of_the_top_k(xml_index):
    """Global search, no topic: each claim is judged against the segment of the page whose
    passages among its top-k hold most tokens; the segment depends on the page alone (the
    same with or without other claims), and a claim with no hits gets no passages."""
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.methods.veriscore.pipeline import claim_pages
    from factscore_local.pipeline.evidence.blocks import page_segments

    knowledge = KnowledgeSource(xml_index)

    def token_len(p) -> int:
        return len(p.text) // 4 + 2

    claims = ["Aristotle was a student of Plato.", "Ayn Rand wrote The Fountainhead.",
              "zzqx qqzx"]  # fmt: skip
    hits = [knowledge.search(c, k=5) for c in claims]
    assert not hits[2]
    budget = 1_000  # small enough to cut the long pages into several segments
    blocks = claim_pages(hits, knowledge, token_len, budget)
    assert blocks[2] == ()
    for claim_hits, block in zip(hits[:2], blocks[:2], strict=True):
        tokens: dict[str, int] = {}
        for h in claim_hits:
            tokens[h.passage.title] = tokens.get(h.passage.title, 0) + token_len(h.passage)
        title = max(tokens, key=tokens.__getitem__)
        assert {p.title for p in block} == {title}
        segments = page_segments(knowledge.get_passages(title), token_len, budget)
        assert len(segments) > 1 and block in segments
        ids = {p.passage_id for p in block}
        mine = [h.passage for h in claim_hits if h.passage.title == title]
        held = sum(token_len(p) for p in mine if p.passage_id in ids)
        for other in segments:  # no other segment holds more of the claim's passages
            other_ids = {p.passage_id for p in other}
            assert sum(token_len(p) for p in mine if p.passage_id in other_ids) <= held
    alone = claim_pages(hits[:1], knowledge, token_len, budget)
    assert alone[0] == blocks[0]


@pytest.mark.heavy  # the page read once: tests/test_lm_logprobs.py's, through VeriScore
def test_page_evidence_is_read_once_for_claims_of_several_responses(tmp_path, xml_index):
    """Claims of different responses that land on one page segment share it: the LM reads
    it once, each verdict matches a fresh whole-prompt evaluation of the same segment, the
    output records the segment, and a rerun is answered from the cache."""
    from factscore_local.config import EvalConfig
    from factscore_local.methods.veriscore.pipeline import verdicts, verify
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.components import CachedLM, build_components
    from factscore_local.runtime.cache import ResultCache

    require_model(SMALL_LM)
    parts = build_components(EvalConfig(index=xml_index, lm=SMALL_LM, cache=tmp_path / "c.db"))
    lm = parts.lm.get()
    claims = ["Aristotle was a student of Plato.", "Aristotle was a student of Plato's Academy.",
              "Aristotle founded the Lyceum."]  # fmt: skip
    before = (lm.lm.stats.prompt_tokens, lm.lm.stats.evaluated_tokens)
    hits, probs, blocks = verify(claims, lm, parts.knowledge, 5, "binary", evidence="page",
                                 budget=800)  # fmt: skip
    prompt_tokens = lm.lm.stats.prompt_tokens - before[0]
    evaluated = lm.lm.stats.evaluated_tokens - before[1]
    assert blocks[0] == blocks[1] and all(p.title == "Aristotle" for p in blocks[0])
    assert prompt_tokens - evaluated > 0  # the shared segment went through the model once

    fresh = CachedLM(lm.lm, ResultCache(tmp_path / "fresh.db"), lm.model_id)
    lm.lm.forget()
    whole = verdicts(claims, [[(p.title, p.text) for p in b] for b in blocks], fresh, "binary")
    for page_p, whole_p in zip(probs, whole, strict=True):
        assert decide(page_p) == decide(whole_p)
        assert abs(page_p["supported"] - whole_p["supported"]) < 0.05
    misses = parts.cache.misses
    _, again, _ = verify(claims, lm, parts.knowledge, 5, "binary", evidence="page", budget=800)
    assert parts.cache.misses == misses and again == probs


def test_a_pronoun_rewrite_is_kept_only_when_it_just_names_the_pronoun():
    from factscore_local.methods.veriscore.core import accept_rewrite, opens_with_pronoun

    context = ("Question: Tell me a bio of Kyra Sedgwick. Kyra Sedgwick is an American "
               "actress. <SOS>She is best known for her role in The Closer.<EOS>")  # fmt: skip
    claim = "She is best known for her role in The Closer."
    assert opens_with_pronoun(claim) and opens_with_pronoun("their album sold well.")
    assert not opens_with_pronoun("Hermann Hesse wrote Siddhartha.")
    assert accept_rewrite(claim, "Kyra Sedgwick is best known for her role in The Closer.",
                          context)  # fmt: skip
    rewrite = "Kyra Sedgwick's role in The Closer won awards."
    assert accept_rewrite("Her role in The Closer won awards.", rewrite, context + " awards")
    # The name is not in the passage: from the model's memory, not kept.
    assert not accept_rewrite(claim, "Kevin Bacon is best known for her role in The Closer.",
                              context)  # fmt: skip
    # The context copied in front of the claim (a small model's habit): more than a name.
    assert not accept_rewrite(claim, "Kyra Sedgwick is an American actress. She is best known "
                              "for her role in The Closer.", context)  # fmt: skip
    # Another claim, or one that still opens with a pronoun, or two lines.
    assert not accept_rewrite(claim, "Kyra Sedgwick is an American actress.", context)
    assert not accept_rewrite(claim, "She is best known for The Closer.", context)
    assert not accept_rewrite(claim, "Kyra Sedgwick is best known.\nShe acts.", context)


@pytest.mark.slow
def test_claims_opening_with_a_pronoun_get_the_name_from_their_window(tmp_path, xml_index):
    from factscore_local.config import EvalConfig
    from factscore_local.methods.veriscore.core import Window
    from factscore_local.methods.veriscore.pipeline import resolve_pronouns
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.components import build_components

    require_model(SMALL_LM)
    parts = build_components(EvalConfig(index=xml_index, lm=SMALL_LM, cache=tmp_path / "c.db"))
    window = Window(0, 1, "", "Question: Tell me a bio of Doug Sheehan. Doug Sheehan is an "
                    "American actor. <SOS>He appeared in Knots Landing and General "
                    "Hospital.<EOS> He lives in California.")  # fmt: skip
    claims = [["He appeared in Knots Landing.", "Knots Landing is a TV series."]]
    out = resolve_pronouns([window], claims, parts.lm.get())
    assert out == [["Doug Sheehan appeared in Knots Landing.", "Knots Landing is a TV series."]]
