"""VeriScore offline: verifiable claims extracted from a sliding window with the local LM,
each verified against passages from the whole index (global BM25, no topic), scored by
F1@K (``veriscore_core``).

Extraction: our own instruction and demonstrations (a biography, a QA answer, and advice,
fiction and an opinion that yield no claim); one greedy generation per sentence, cached.
Verification: the label words' next-token logits after the claim and its passages,
binary (Supported / Unsupported) or ternary (Supported / Contradicted / Inconclusive).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from factscore_local.config import DEFAULTS
from factscore_local.methods.veriscore.core import (
    EOS,
    NO_CLAIM,
    SOS,
    Window,
    accept_rewrite,
    f1_at_k,
    median_k,
    opens_with_pronoun,
    paragraphs_of,
    parse_claims,
    unique,
    windows,
)
from factscore_local.pipeline.decomposition.sentences import split_sentences
from factscore_local.pipeline.evidence.blocks import page_blocks, shared_blocks
from factscore_local.pipeline.records.inputs import json_objects
from factscore_local.pipeline.signals.verify_prompt import passage_block, passage_token_counter
from factscore_local.prompts import load_demos, load_prompt

# The wording and our own demonstrations (a biography, a QA answer, and advice, fiction and
# an opinion that yield no claim) are in prompts/veriscore_*.txt.
EXTRACT_INSTRUCTION = load_prompt("veriscore_extract").format(no_claim=NO_CLAIM)
EXTRACT_DEMOS: tuple[tuple[str, str], ...] = load_demos("veriscore_extract_demos", 2)
PASSAGE_MARK = "Passage: "  # where an extraction prompt stops being shared

# A second, short generation for claims that still open with a pronoun (the 1.5B model
# leaves about a quarter of its claims so, despite the instruction): the claim rewritten
# with the name the passage gives; kept only when ``accept_rewrite`` finds nothing else
# changed and the name in the passage.
RESOLVE_INSTRUCTION = load_prompt("veriscore_resolve")
# (passage, claim, rewrite)
RESOLVE_DEMOS: tuple[tuple[str, str, str], ...] = load_demos("veriscore_resolve_demos", 3)
CLAIM_LINE = "Claim: "

VERIFY_INSTRUCTION = {m: load_prompt(f"veriscore_verify_{m}") for m in ("binary", "ternary")}
VERDICT_WORDS = {
    "binary": (("supported", ("Supported", " Supported")),
               ("unsupported", ("Unsupported", " Unsupported"))),
    "ternary": (("supported", ("Supported", " Supported")),
                ("contradicted", ("Contradicted", " Contradicted")),
                ("inconclusive", ("Inconclusive", " Inconclusive"))),
}  # fmt: skip
CLAIM_MARK = "Claim: "
EVIDENCE_MODES = ("per-claim", "shared", "page")
EVIDENCE_BUDGET = DEFAULTS["evidence_budget"]  # tokens per shared block, as for facts


def _marked(window_text: str) -> str:
    return window_text.split("<SOS>", 1)[1].split("<EOS>", 1)[0]


def extraction_prompt(window_text: str) -> str:
    """The window, then the marked sentence repeated (small models otherwise take claims
    from the context), then the claims."""
    demos = "\n\n".join(
        f"{PASSAGE_MARK}{w}\nMarked sentence: {_marked(w)}\nClaims:\n{a}" for w, a in EXTRACT_DEMOS
    )
    return (
        f"{EXTRACT_INSTRUCTION}\n\n{demos}\n\n{PASSAGE_MARK}{window_text}\n"
        f"Marked sentence: {_marked(window_text)}\nClaims:\n"
    )


def resolution_prompt(window_text: str, claim: str) -> str:
    """The passage (the window without its marks) and a claim that opens with a pronoun."""
    passage = window_text.replace(SOS, "").replace(EOS, "")
    demos = "\n\n".join(
        f"{PASSAGE_MARK}{w}\n{CLAIM_LINE}{c}\nRewritten: {r}" for w, c, r in RESOLVE_DEMOS
    )
    return (
        f"{RESOLVE_INSTRUCTION}\n\n{demos}\n\n{PASSAGE_MARK}{passage}\n{CLAIM_LINE}{claim}\n"
        "Rewritten:"
    )


def verification_prompt(claim: str, passages: list[tuple[str, str]], mode: str) -> str:
    context = "\n\n".join(passage_block(t, x) for t, x in passages)
    return f"{VERIFY_INSTRUCTION[mode]}\n\n{context}\n\n{CLAIM_MARK}{claim.strip()}\nAnswer:"


@dataclass
class Response:
    line: int
    response: str = ""
    question: str | None = None
    domain: str = "default"
    record: dict = field(default_factory=dict)
    error: str = ""


def read_responses(path: Path) -> Iterator[Response]:
    """VeriScore's JSONL (``response``, ``question``, ``domain``) or FActScore's (``output``,
    ``input``); a bad line becomes a Response with ``error``."""
    for number, obj in json_objects(path):
        if isinstance(obj, str):
            yield Response(number, error=f"not a JSON line: {obj}")
            continue
        text = obj.get("response", obj.get("output"))
        if not isinstance(text, str):
            yield Response(number, error="no 'response' (or 'output') text", record=obj)
            continue
        if not text.strip():
            yield Response(number, error="empty response", record=obj)
            continue
        question = obj.get("question", obj.get("input"))
        yield Response(
            number,
            text,
            question if isinstance(question, str) and question.strip() else None,
            str(obj.get("domain") or obj.get("prompt_source") or "default"),
            obj,
        )


def extract(
    responses: list[Response], lm, resolve: bool = True
) -> list[list[tuple[Window, list[str]]]]:
    """Per response, each sentence's window and its claims (``lm``: a ``CachedLM``);
    ``resolve``: claims that open with a pronoun are rewritten with the name the window
    gives (``resolve_pronouns``)."""
    per_response = []
    for r in responses:
        split = paragraphs_of(r.response, lambda t: [s.text for s in split_sentences(t)])
        per_response.append(windows(split, r.question) if r.response.strip() else [])
    flat = [w for ws in per_response for w in ws]
    prompts = [lm.chat(extraction_prompt(w.text)) for w in flat]
    outputs = iter(lm.generate(prompts, 160, ["\n\n", PASSAGE_MARK]) if prompts else [])
    claims = [parse_claims(next(outputs)) for _ in flat]
    if resolve:
        claims = resolve_pronouns(flat, claims, lm)
    found = iter(claims)
    return [[(w, next(found)) for w in ws] for ws in per_response]


def resolve_pronouns(windows_: list[Window], claims: list[list[str]], lm) -> list[list[str]]:
    """Each window's claims, those that open with a pronoun rewritten by the LM where the
    rewrite only names it (``accept_rewrite``); the others as they were."""
    todo = [(i, j) for i, cs in enumerate(claims) for j, c in enumerate(cs)
            if opens_with_pronoun(c)]  # fmt: skip
    prompts = [lm.chat(resolution_prompt(windows_[i].text, claims[i][j])) for i, j in todo]
    rewrites = lm.generate(prompts, 60, ["\n"]) if prompts else []
    out = [list(cs) for cs in claims]
    for (i, j), rewrite in zip(todo, rewrites, strict=True):
        if accept_rewrite(claims[i][j], rewrite, windows_[i].text):
            out[i][j] = rewrite.strip()
    return out


def verdicts(
    claims: list[str],
    passages: list[list[tuple[str, str]]],
    lm,
    mode: str,
    shared: bool = False,
) -> list[dict[str, float]]:
    """Each verdict's probability for each claim given its passages ((title, text) pairs):
    a softmax over the verdicts' label logits. ``shared``: claims with the same passages
    share the prompt up to the claim, which the LM then evaluates once for all of them."""
    if not claims:
        return []
    prompts = [
        lm.chat(verification_prompt(c, ps, mode)) for c, ps in zip(claims, passages, strict=True)
    ]
    prefixes = [p[: p.rindex(CLAIM_MARK)] for p in prompts] if shared else None
    names = [n for n, _ in VERDICT_WORDS[mode]]
    logits = np.asarray(lm.choices(prompts, [w for _, w in VERDICT_WORDS[mode]], prefixes), float)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    return [dict(zip(names, map(float, row), strict=True)) for row in probs]


def verify(
    claims: list[str],
    lm,
    knowledge,
    k: int,
    mode: str,
    groups: list | None = None,
    budget: int = EVIDENCE_BUDGET,
    evidence: str | None = None,
) -> tuple[list, list[dict[str, float]], list[tuple | None]]:
    """Per claim: its own passages (global top-k), each verdict's probability, and the
    block of passages it was judged against (None: its own top-k).

    ``evidence`` (default: ``shared`` when ``groups`` are given, else ``per-claim``):
    - ``per-claim``: each claim against its own top-k (VeriScore's procedure);
    - ``shared``: the claims of a group (e.g. the response each claim comes from) against
      the union of their top-k passages, deduplicated, grouped by page, split into blocks
      of at most ``budget`` tokens where it does not fit (no passage a claim retrieved is
      dropped); the LM reads a block once and each claim costs its own tokens;
    - ``page``: each claim against the page that holds most of its top-k (by tokens), or,
      for a page over ``budget``, the segment of it that holds most of them
      (``evidence.page_blocks``). Segments depend on the page alone, so every claim of
      every response that lands on a page shares them, and a verdict depends on the
      claim alone. Passages of the claim's other pages are not read."""
    evidence = evidence or ("shared" if groups is not None else "per-claim")
    if evidence not in EVIDENCE_MODES:
        raise ValueError(f"unknown evidence mode {evidence!r} ({', '.join(EVIDENCE_MODES)})")
    found = {c: knowledge.search(c, k=k) for c in dict.fromkeys(claims)}
    hits = [found[c] for c in claims]
    if evidence == "per-claim":
        passages = [[(h.passage.title, h.passage.text) for h in hs] for hs in hits]
        return hits, verdicts(claims, passages, lm, mode), [None] * len(claims)
    token_len = passage_token_counter(lm.lm.tokenize)
    if evidence == "shared":
        if groups is None:
            raise ValueError("shared evidence needs the claims' groups")
        blocks = shared_blocks(groups, [[h.passage for h in hs] for hs in hits], token_len, budget)
    else:
        blocks = claim_pages(hits, knowledge, token_len, budget)
    passages = [[(p.title, p.text) for p in block] for block in blocks]
    return hits, verdicts(claims, passages, lm, mode, shared=True), blocks


def claim_pages(hits: list, knowledge, token_len, budget: int) -> list[tuple]:
    """For each claim's hits (best first), the segment of its main page: the page whose
    hits hold most tokens (a tie goes to the page of the better-ranked hit); () when the
    claim retrieved nothing."""
    titles, own, where = [], [], []
    for i, claim_hits in enumerate(hits):
        weight: dict[str, list[int]] = {}
        for rank, h in enumerate(claim_hits):
            tokens_best = weight.setdefault(h.passage.title, [0, -rank])
            tokens_best[0] += token_len(h.passage)
        if not weight:
            continue
        title = max(weight, key=lambda t: tuple(weight[t]))
        titles.append(title)
        own.append([h.passage for h in claim_hits if h.passage.title == title])
        where.append(i)
    blocks: list[tuple] = [()] * len(hits)
    segments = page_blocks(titles, own, knowledge.get_passages, token_len, budget)
    for i, segment in zip(where, segments, strict=True):
        blocks[i] = segment
    return blocks


def decide(verdict: dict[str, float], margin: float = 0.0) -> str:
    """The most probable verdict; binary: supported when log P(supported) - log
    P(unsupported) exceeds ``margin`` (the same margin as True/False verification)."""
    if set(verdict) == {"supported", "unsupported"}:
        gap = np.log(max(verdict["supported"], 1e-12)) - np.log(max(verdict["unsupported"], 1e-12))
        return "supported" if gap > margin else "unsupported"
    return max(verdict, key=verdict.__getitem__)


def score_responses(
    responses: list[Response],
    lm,
    knowledge,
    k: int,
    mode: str,
    k_claims: float | None,
    margin: float = 0.0,
    evidence: str = "per-claim",
    budget: int = EVIDENCE_BUDGET,
    resolve: bool = True,
) -> list[dict]:
    """Every response's claims, evidence, verdicts and F1@K, as VeriScore writes them.
    ``evidence``: each claim judged against its own top-k (``per-claim``, VeriScore's
    procedure), against the blocks its response's claims share (``shared``), or against
    its main page's segment (``page``; see ``verify``)."""
    if evidence not in EVIDENCE_MODES:
        raise ValueError(f"unknown evidence mode {evidence!r} ({', '.join(EVIDENCE_MODES)})")
    ok = [r for r in responses if not r.error]
    extracted = extract(ok, lm, resolve)
    all_claims = [unique([c for _, cs in pairs for c in cs]) for pairs in extracted]
    if evidence == "shared":  # a claim's verdict depends on its response's block
        keys = [(i, c) for i, cs in enumerate(all_claims) for c in cs]
        groups = [i for i, _ in keys]
    else:  # a claim's verdict depends on the claim alone
        keys = [(None, c) for c in unique([c for cs in all_claims for c in cs])]
        groups = None
    hits, verdicts, blocks = verify(
        [c for _, c in keys], lm, knowledge, k, mode, groups, budget, evidence
    )
    judged = dict(zip(keys, zip(hits, verdicts, blocks, strict=True), strict=True))
    counts: dict[str, list[int]] = {}
    for r, cs in zip(ok, all_claims, strict=True):
        counts.setdefault(r.domain, []).append(len(cs))
    ks = {d: float(k_claims) for d in counts} if k_claims else median_k(counts)
    rows = {}
    for i, (r, pairs, cs) in enumerate(zip(ok, extracted, all_claims, strict=True)):
        results, found = [], {}
        for claim in cs:
            claim_hits, verdict, block = judged[(i if groups else None, claim)]
            result = {
                "claim": claim,
                "verification_result": decide(verdict, margin),
                "probabilities": {n: round(p, 4) for n, p in verdict.items()},
            }
            if block is not None:  # the shared block it was judged against
                result["judged_on"] = [q.passage_id for q in block]
            results.append(result)
            found[claim] = [
                {"title": h.passage.title, "passage_id": h.passage.passage_id,
                 "snippet": h.passage.clean_text[:300], "score": round(h.score, 4)}
                for h in claim_hits
            ]  # fmt: skip
        supported = sum(x["verification_result"] == "supported" for x in results)
        scores = f1_at_k(supported, len(cs), ks[r.domain])
        rows[r.line] = {
            "line": r.line,
            "question": r.question,
            "response": r.response,
            "domain": r.domain,
            "no_verifiable_claim": not cs,
            "claim_list": [c for _, c in pairs],
            "all_claim_lst": cs,
            "claim_search_results": found,
            "claim_verification_result": results,
            "K": ks[r.domain],
            "supported": supported,
            "evidence": evidence,
            **{name: round(v, 4) for name, v in scores.items()},
        }
    return [{"line": r.line, "error": r.error} if r.error else rows[r.line] for r in responses]


def summarize_veriscore(rows: list[dict]) -> dict:
    """Mean F1@K per domain and over all responses, with claim counts."""
    ok = [r for r in rows if "error" not in r]
    domains: dict[str, list[dict]] = {}
    for r in ok:
        domains.setdefault(r["domain"], []).append(r)

    def block(rs: list[dict]) -> dict:
        n = len(rs)
        return {
            "responses": n,
            "veriscore": round(100 * sum(r["f1_at_k"] for r in rs) / n, 2) if n else None,
            "claims_per_response": round(sum(len(r["all_claim_lst"]) for r in rs) / n, 2)
            if n
            else None,
            "supported_share": round(
                100
                * sum(r["supported"] for r in rs)
                / max(1, sum(len(r["all_claim_lst"]) for r in rs)),
                2,
            ),  # fmt: skip
            "K": rs[0]["K"] if rs else None,
        }

    return {
        "all": block(ok),
        "domains": {d: block(rs) for d, rs in domains.items()},
        "errors": len(rows) - len(ok),
    }
