"""Evaluation without a topic: facts of a line that names no topic (or of every line with
--global-evidence) take their evidence from the whole index, and the output records which
pages it came from."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.config import EvalConfig
from factscore_local.index.reader import KnowledgeSource
from factscore_local.pipeline.components import build_components
from factscore_local.pipeline.records.inputs import read_bios
from factscore_local.pipeline.signals.compute import FactQuery, _own_passages
from factscore_local.pipeline.signals.verify_prompt import STATEMENT, open_prompt
from tests.conftest import require_model


def test_lines_without_topic_are_read_and_lines_without_text_are_not(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([
        json.dumps({"output": "Cairo is in Egypt."}),
        json.dumps({"topic": None, "output": "X."}),
        json.dumps({"input": "nothing else"}),
        json.dumps({"topic": 3, "output": "X."}),
    ]), "utf-8")  # fmt: skip
    bios = list(read_bios(path))
    assert (bios[0].topic, bios[0].error) == ("", "") and bios[1].topic == ""
    assert bios[2].error == "missing or non-string field(s): output"
    assert bios[3].error == "missing or non-string field(s): topic"


def test_a_fact_without_a_page_searches_the_whole_index(db_index):
    config = EvalConfig(index=db_index)
    parts = build_components(config, knowledge=KnowledgeSource(db_index))
    fact = "Kang Ji-hwan is a South Korean actor."
    (global_hits,) = _own_passages([FactQuery("", "", fact)], parts, 5, "bm25")
    assert len(global_hits) == 5
    assert len({h.passage.passage_id for h in global_hits}) == 5  # no passage twice
    assert global_hits[0].passage.title == "Kang Ji-hwan"
    assert len({h.passage.title for h in global_hits}) >= 1
    # The same fact on its page searches only that page.
    (page_hits,) = _own_passages(
        [FactQuery("Kang Ji-hwan", "Kang Ji-hwan", fact)], parts, 5, "bm25"
    )
    assert {h.passage.title for h in page_hits} == {"Kang Ji-hwan"}


def test_the_topicless_prompt_names_no_topic():
    prompt = open_prompt("Cairo is in Egypt.", [("Cairo", "Cairo is the capital of Egypt.")])
    assert "about" not in prompt.split("\n")[0]
    assert prompt.endswith(f"{STATEMENT}Cairo is in Egypt. True or False?")
    assert "Title: Cairo" in prompt


@pytest.mark.slow
@pytest.mark.heavy  # a minute; the whole-index search above and VeriScore's run with the LM
# (test_veriscore.py) cover its parts in CI
def test_eval_without_topic_records_the_pages_of_its_evidence(xml_index, tmp_path):
    """The small LM verifies a topic-less bio against an index of real Wikipedia pages."""

    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    index = xml_index  # the real dump excerpt, built once for the session
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"output": "Abraham Lincoln was the 16th president of the "
                                            "United States."}) + "\n", "utf-8")  # fmt: skip
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(main, [
        "eval", "--index", str(index), "--input", str(source), "--lm", SMALL_LM,
        "--out", str(out), "--cache", str(tmp_path / "c.db"), "--quiet"])  # fmt: skip
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text("utf-8"))
    assert row["title"] == "" and row["n_facts"] >= 1
    titles = {e["title"] for d in row["decisions"] for e in d["evidence"]}
    assert "Abraham Lincoln" in titles
    assert all(len(d["evidence"]) == 5 for d in row["decisions"])
