"""Inputs that used to hurt: an over-long response, and input where nothing can be scored."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.pipeline.decomposition.sentences import MAX_SENTENCE_WORDS, split_sentences
from tests.conftest import SHARED, require, require_model

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"


def test_a_wall_of_text_is_cut_into_pieces_that_fit():
    wall = " ".join(f"word{i}" for i in range(1000))  # no punctuation at all
    pieces = split_sentences(wall)
    assert len(pieces) == -(-1000 // MAX_SENTENCE_WORDS)
    assert all(len(p.text.split()) <= MAX_SENTENCE_WORDS for p in pieces)
    assert " ".join(p.text for p in pieces) == wall  # nothing lost
    assert [p.is_paragraph_start for p in pieces][:2] == [True, False]


@pytest.mark.parametrize("content", [b"", b"\x8f\x00\xff garbage \x01", b"\n\n"])
def test_nothing_scored_exits_non_zero(db_index, tmp_path, content):
    src = tmp_path / "in.jsonl"
    src.write_bytes(content)
    args = ["eval", "--index", str(db_index), "--input", str(src), "--quiet"]
    result = CliRunner().invoke(main, [*args, "--verifier", "always-supported", "--json"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout.splitlines()[0])["n_bios"] == 0  # the summary is printed
    assert "no line of the input could be scored" in result.stderr


@pytest.mark.slow
def test_a_long_response_is_cut_and_reported_and_the_others_are_scored(db_index, tmp_path):
    """A 20,000-word unpunctuated response between two normal bios, with the small LM:
    every bio gets its row, the long one decomposed up to --max-sentences and reported."""
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    records = [json.loads(x) for x in require(CHATGPT).read_text().splitlines()[:2]]
    short = [{"topic": r["topic"], "output": split_sentences(r["output"])[0].text} for r in records]
    wall = " ".join(["he was an american actor born in ohio who starred in many films"] * 1540)
    lines = [short[0], {"topic": records[1]["topic"], "output": wall}, short[1]]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out.jsonl"
    limit = int(os.environ.get("FSCORE_LONG_SENTENCES", "1"))
    args = ["eval", "--index", str(db_index), "--input", str(src), "--lm", SMALL_LM, "--quiet"]
    args += ["--max-sentences", str(limit), "--cache", str(tmp_path / "c.db"), "--out", str(out)]
    args += ["--evidence-budget", "256"]  # short blocks: what is cut is checked, not decided
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3]
    assert all("error" not in r for r in rows)
    pieces = split_sentences(wall)  # seconds for 20,000 words: split once here
    assert rows[1]["skipped_sentences"] == len(pieces) - limit > 100
    assert {d["sentence"] for d in rows[1]["decisions"]} <= {s.text for s in pieces[:limit]}
    assert "skipped_sentences" not in rows[0] and rows[0]["n_facts"] >= 1
    assert "longer than --max-sentences" in result.stdout
