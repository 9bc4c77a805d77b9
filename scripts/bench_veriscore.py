"""VeriScore offline, measured (BENCHMARKS.md).

    python -m scripts.bench_veriscore --index dev-index --section facts   # no model
    python -m scripts.bench_veriscore --index dev-index --section verdicts
    python -m scripts.bench_veriscore --index dev-index --section claims --bios 0   # 0: all

- ``facts``: FActScore's atomic facts per sentence and per response, and the share that
  holds a personal pronoun (no model: what the claims are compared with).
- ``verdicts``: agreement of our verification with VeriScore's labels on its own files,
  given the same evidence text (their search results): the 9 few-shot claims (ternary,
  human labels) and the 25 claims of the sample record (binary labels).
- ``claims``: on FActScore's labeled dev bios of each subject, claims per sentence and per
  response against FActScore's atomic facts (``model-atomic-facts``), the share of claims
  and facts that hold a personal pronoun (he, she, they, ...: unresolved in a claim meant
  to stand alone; and the share that opens with one), F1@K per subject with K the median,
  and the speed per sentence (extraction) and per claim (verification). Evidence: global
  BM25 over ``--index``: each claim's own top-k, the shared blocks of its response, or the
  segment of the page holding most of its top-k (``--evidence``; with ``both``, per-claim
  and shared verdicts are compared claim by claim; with ``page``, the share of the claims'
  top-k passages that the page segments hold is reported).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

from factscore_local.config import EvalConfig
from factscore_local.methods.veriscore.core import f1_at_k, unique
from factscore_local.methods.veriscore.pipeline import (
    Response,
    decide,
    extract,
    verdicts,
    verify,
)
from factscore_local.pipeline.components import build_components
from factscore_local.pipeline.records.labeled import model_facts
from scripts.common import BENCH_OUT, SUBJECTS, add_data_option, data_root, labeled_bios

PRONOUN = re.compile(r"\b(he|she|him|her|his|hers|they|them|their|theirs)\b", re.I)
OPENS_WITH_PRONOUN = re.compile(r"^(he|she|they|his|her|their)\b", re.I)


def share(pattern: re.Pattern, texts: list[str]) -> float:
    """Percent of texts in which pattern matches (``search``)."""
    return round(100 * sum(bool(pattern.search(t)) for t in texts) / max(1, len(texts)), 1)


def log(message: str) -> None:
    print(f"[veriscore] {message}", file=sys.stderr, flush=True)


def search_results(text: str) -> list[tuple[str, str]]:
    """VeriScore's 'Search result N / Title: / Content:' text as (title, content) pairs."""
    out = []
    for block in re.split(r"\n*Search result \d+\n", text):
        title = re.search(r"^Title: (.*)$", block, re.M)
        content = re.search(r"^Content: (.*)$", block, re.M)
        if title or content:
            out.append((title.group(1) if title else "", content.group(1) if content else ""))
    return out


def section_verdicts(lm, data: Path) -> dict:
    few = [json.loads(x) for x in (data / "few_shot_examples.jsonl").read_text().splitlines()]
    gold = [x["human_label"].strip(". ").lower() for x in few]
    probs = verdicts([x["claim"] for x in few],
                     [search_results(x["search_result"]) for x in few], lm, "ternary")  # fmt: skip
    predicted = [decide(p) for p in probs]
    sample = json.loads((data / "data_sample.jsonl").read_text().splitlines()[0])
    rows = sample["claim_verification_result"]
    evidence = [search_results(r["search_results"]) for r in rows]
    probs_b = verdicts([r["claim"] for r in rows], evidence, lm, "binary")
    predicted_b = [decide(p) for p in probs_b]
    gold_b = [r["verification_result"] for r in rows]
    out = {
        "few_shot_ternary": {
            "n": len(gold),
            "agree": sum(a == b for a, b in zip(gold, predicted, strict=True)),
            "pairs": list(zip(gold, predicted, strict=True)),
        },
        "sample_binary": {
            "n": len(gold_b),
            "agree": sum(a == b for a, b in zip(gold_b, predicted_b, strict=True)),
            "gold": {g: gold_b.count(g) for g in set(gold_b)},
            "predicted": {g: predicted_b.count(g) for g in set(predicted_b)},
        },
    }
    few_agree, sample = out["few_shot_ternary"]["agree"], out["sample_binary"]
    print(
        f"verdicts given VeriScore's evidence: few-shot ternary {few_agree}/{len(gold)} agree; "
        f"sample binary {sample['agree']}/{len(gold_b)} agree (gold {sample['gold']}, ours "
        f"{sample['predicted']})"
    )
    return out


def judged(claims: list[list[str]], lm, knowledge, k: int, evidence: str):
    """Per response, each claim's binary verdict; the seconds the verification took; the
    claims judged; the verdicts computed (not read from the cache); and the share of the
    claims' top-k passages in the blocks they were judged against (None for per-claim
    evidence)."""
    if evidence == "shared":  # a verdict depends on the claim's response
        keys = [(i, c) for i, cs in enumerate(claims) for c in cs]
        groups: list | None = [i for i, _ in keys]
    else:  # a verdict depends on the claim alone
        keys = [(None, c) for c in unique([c for cs in claims for c in cs])]
        groups = None
    start, misses = time.perf_counter(), lm.cache.misses
    hits, probs, blocks = verify([c for _, c in keys], lm, knowledge, k, "binary", groups,
                                 evidence=evidence)  # fmt: skip
    seconds, computed = time.perf_counter() - start, lm.cache.misses - misses
    by_key = {key: decide(p) == "supported" for key, p in zip(keys, probs, strict=True)}
    verdict = [[by_key[(i if groups else None, c)] for c in cs] for i, cs in enumerate(claims)]
    held = [(sum(h.passage.passage_id in {p.passage_id for p in block} for h in hs), len(hs))
            for hs, block in zip(hits, blocks, strict=True) if block is not None]  # fmt: skip
    read = round(100 * sum(a for a, _ in held) / max(1, sum(b for _, b in held)), 1)
    return verdict, seconds, len(keys), computed, read if held else None


def responding_bios(data: Path, subject: str, n_bios: int) -> list:
    """The first n_bios (all with 0) annotated bios of a subject."""
    bios = labeled_bios(data, (subject,), responding=True)[subject]
    return bios[:n_bios] if n_bios else bios


def fact_counts(bios: list) -> dict:
    """FActScore's side: its atomic facts (``model-atomic-facts``) per annotated sentence
    and per response, and the share that holds a personal pronoun."""
    facts = [[a for _, a in model_facts(b.annotations)] for b in bios]
    n_facts = max(1, sum(map(len, facts)))
    flat = [f for fs in facts for f in fs]
    return {
        "facts_per_sentence": round(n_facts / max(1, sum(len(b.annotations) for b in bios)), 2),
        "facts_per_response": round(statistics.mean(map(len, facts)), 2),
        "facts_with_pronoun": share(PRONOUN, flat),
        "facts_opening_with_pronoun": share(OPENS_WITH_PRONOUN, flat),
    }


def section_facts(data: Path, n_bios: int) -> dict:
    """FActScore's facts alone (no model)."""
    out = {}
    for subject in SUBJECTS:
        bios = responding_bios(data, subject, n_bios)
        out[subject] = {"bios": len(bios), **fact_counts(bios)}
        log(f"{subject}: {out[subject]}")
    return out


def section_claims(
    lm, knowledge, data: Path, n_bios: int, k: int, modes: list[str], resolve: bool = True
) -> dict:
    """Every subject's claims first (the statistics need no verification), then each
    evidence mode's verdicts, all subjects' claims in one run (``verification``: its
    speed); with no mode, extraction only."""
    out, claims_of = {}, {}
    for subject in SUBJECTS:
        bios = responding_bios(data, subject, n_bios)
        responses = [Response(b.line, b.output, b.record.get("input"), subject) for b in bios]
        start, misses, hits = time.perf_counter(), lm.cache.misses, lm.cache.hits
        extracted = extract(responses, lm, resolve)
        extract_s, computed = time.perf_counter() - start, lm.cache.misses - misses
        fresh = lm.cache.hits == hits  # nothing read from the cache
        claims = [unique([c for _, cs in pairs for c in cs]) for pairs in extracted]
        n_sentences = sum(len(pairs) for pairs in extracted)
        per_response = [len(cs) for cs in claims]
        flat = [c for cs in claims for c in cs]
        claims_of[subject] = claims
        out[subject] = {
            "bios": len(bios),
            "sentences": n_sentences,
            "claims_per_sentence": round(sum(per_response) / max(1, n_sentences), 2),
            "claims_per_response": round(statistics.mean(per_response), 2),
            "claims_with_pronoun": share(PRONOUN, flat),
            "claims_opening_with_pronoun": share(OPENS_WITH_PRONOUN, flat),
            **fact_counts(bios),
            "K": max(1.0, float(statistics.median(per_response))),
            # Speed only over what this run computed (a resumed run reads the rest).
            "lm_calls_computed": computed,
            "s_per_lm_call": round(extract_s / computed, 2) if computed else None,
            "s_per_sentence": round(extract_s / max(1, n_sentences), 2) if fresh else None,
        }
        log(f"{subject}: {out[subject]}")
    # Every subject's claims in one verification, as one file of all the responses would
    # be: claims of one page, from any subject, then share the reading of its evidence.
    pooled = [cs for claims in claims_of.values() for cs in claims]
    verdicts_by_mode = {}
    for mode in modes:
        verdict, seconds, n_judged, computed, read = judged(pooled, lm, knowledge, k, mode)
        verdicts_by_mode[mode] = verdict
        out.setdefault("verification", {})[mode] = {
            "claims_judged": n_judged,
            "verdicts_computed": computed,
            "s_per_claim": round(seconds / computed, 2) if computed else None,
            "top_k_read": read,
        }
        log(f"verification, {mode}: {out['verification'][mode]}")
    start = 0
    for subject, claims in claims_of.items():
        row, n_claims = out[subject], max(1, sum(map(len, claims)))
        mine = {m: v[start : start + len(claims)] for m, v in verdicts_by_mode.items()}
        start += len(claims)
        for mode, verdict in mine.items():
            f1 = [f1_at_k(sum(v), len(v), row["K"])["f1_at_k"] for v in verdict]
            row[mode] = {
                "veriscore": round(100 * statistics.mean(f1), 1),
                "supported_share": round(100 * sum(map(sum, verdict)) / n_claims, 1),
            }
        if len(mine) == 2:
            a, b = mine.values()
            same = sum(x == y for va, vb in zip(a, b, strict=True)
                       for x, y in zip(va, vb, strict=True))  # fmt: skip
            row["modes_agree"] = f"{same}/{n_claims}"
        log(f"{subject}: {row}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m scripts.bench_veriscore", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--index", type=Path, required=True)
    add_data_option(ap)
    ap.add_argument("--lm", default=None)
    ap.add_argument("--section", choices=["facts", "verdicts", "claims"], action="append")
    ap.add_argument("--bios", type=int, default=0, help="bios per subject (0: all)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument(
        "--evidence",
        choices=["per-claim", "shared", "page", "both", "none"],
        default="both",
        help="claims section: evidence mode(s) of verification (none: extraction only)",
    )
    ap.add_argument(
        "--keep-pronouns",
        action="store_true",
        help="claims section: no rewrite of claims that open with a pronoun",
    )
    ap.add_argument("--cache", type=Path, default=BENCH_OUT / "veriscore-cache.db")
    ap.add_argument("--out", type=Path, default=BENCH_OUT / "veriscore.json")
    args = ap.parse_args()
    from tqdm import tqdm

    parts = build_components(EvalConfig(index=args.index, lm=args.lm, cache=args.cache))
    # Sentences extracted and claims verified, with the rate (the run takes hours).
    parts.progress.attach(tqdm(desc="veriscore", unit=" steps", total=0))
    shared = data_root(args.data)
    report = {"lm": args.lm, "index": str(args.index)}
    modes = {"both": ["per-claim", "shared"], "none": []}.get(args.evidence, [args.evidence])
    for section in args.section or ["verdicts", "claims"]:
        if section == "facts":
            report["facts"] = section_facts(shared, args.bios)
        elif section == "verdicts":
            report["verdicts"] = section_verdicts(parts.lm.get(), shared / "veriscore")
        else:
            report["claims"] = section_claims(parts.lm.get(), parts.knowledge, shared,
                                              args.bios, args.k, modes,
                                              not args.keep_pronouns)  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
