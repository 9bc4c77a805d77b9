"""The raw-text benchmark's diagnostic: facts that still carry markup, and how many of them
are judged supported beside the others, per subject (scripts/bench_raw_text.py)."""

from __future__ import annotations

from factscore_local.pipeline.records.rows import BioRow, FactResult
from scripts.bench_raw_text import markup_figures


def _row(source: str, facts: list[tuple[str, bool]], responded: bool = True) -> BioRow:
    decisions = tuple(FactResult(atom, supported) for atom, supported in facts)
    return BioRow(1, "T", source, responded=responded, n_facts=len(facts), decisions=decisions)


def test_facts_with_markup_are_counted_apart_per_subject():
    rows = [
        _row("dev/PerplexityAI.jsonl", [
            ("She played Irene Molloy in Hello, Dolly! [1][2].", False),
            ("He was born in 1930 (https://example.org/a).", True),
            ("He was born in 1930.", True),
            ("He studied law.", False),
        ]),
        _row("dev/PerplexityAI.jsonl", [("A fact [3].", True)], responded=False),  # not scored
        _row("dev/ChatGPT.jsonl", [("He was a **painter**.", False), ("He painted.", True)]),
    ]  # fmt: skip
    out = markup_figures(rows)
    assert out["PerplexityAI"] == {"facts_with_markup": 2, "supported_with_markup": 50.0,
                                   "supported_without_markup": 50.0}  # fmt: skip
    assert out["ChatGPT"] == {"facts_with_markup": 1, "supported_with_markup": 0.0,
                              "supported_without_markup": 100.0}  # fmt: skip
    assert out["InstructGPT"] == {"facts_with_markup": 0, "supported_with_markup": None,
                                  "supported_without_markup": None}  # fmt: skip
