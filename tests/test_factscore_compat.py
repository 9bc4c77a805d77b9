"""FActScore's Python API (``factscore.factscorer.FactScorer``) run against factscore-local.

The slow test is the usage example of FActScore's README (construct a scorer, register a
knowledge source from FActScore's own ``.db``, ``get_score`` on topics and generations),
with only the import line changed; the result must have the reference's keys and types.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from factscore_local.compat.factscore.factscorer import FactScorer
from factscore_local.model_store import SMALL_LM
from tests.conftest import DEV_DB, SHARED, require

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
# What the reference's get_score returns with gamma (init_score only then).
REFERENCE_KEYS = {"score", "init_score", "respond_ratio", "num_facts_per_response", "decisions"}


def _two_short_bios() -> list[dict]:
    """The two shortest responding ChatGPT bios of the dev topics (keeps the LM run short)."""
    rows = [json.loads(line) for line in require(CHATGPT).open(encoding="utf-8")]
    return sorted((r for r in rows if r["annotations"]), key=lambda r: len(r["output"]))[:2]


def _check_reference_types(out: dict, n: int) -> None:
    """Types as the reference's np.mean / list building gives them."""
    for key in ("score", "init_score", "respond_ratio", "num_facts_per_response"):
        assert isinstance(out[key], np.float64), key
    assert isinstance(out["decisions"], list) and len(out["decisions"]) == n
    for decision in out["decisions"]:
        if decision is None:
            continue
        assert isinstance(decision, list) and decision
        for fact in decision:
            assert set(fact) == {"atom", "is_supported"}
            assert isinstance(fact["atom"], str) and fact["atom"]
            assert isinstance(fact["is_supported"], bool)


def test_ignored_arguments_warn_once(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FactScorer(openai_key="api.key", cost_estimate="consider_cache", cache_dir=tmp_path)
    assert len(caught) == 1
    assert "openai_key and cost_estimate are ignored" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FactScorer(cache_dir=tmp_path)  # nothing ignored: no warning


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"model_name": "retrieval+GPT4"}, "model_name must be one of"),
        ({"abstain_detection_type": "polite"}, "abstain_detection_type must be one of"),
        ({"cost_estimate": "free"}, "cost_estimate must be one of"),
        ({"verifier": "oracle"}, "oracle"),
        ({"no_such_setting": 1}, "unknown setting"),
    ],
)
def test_bad_arguments_are_refused(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        FactScorer(cache_dir=tmp_path, **kwargs)


def test_bad_inputs_and_sources(tmp_path):
    fs = FactScorer(cache_dir=tmp_path, data_dir=tmp_path / "data")
    with pytest.raises(ValueError, match="same length"):
        fs.get_score(["a", "b"], ["only one"])
    with pytest.raises(ValueError, match="both be strings or both be lists"):
        fs.get_score("a", ["x"])
    with pytest.raises(ValueError, match="`atomic_facts` should have the same length"):
        fs.get_score(["a"], ["x"], atomic_facts=[])
    # The default source is looked for in data_dir, as the reference does.
    with pytest.raises(FileNotFoundError, match="enwiki-20230401.db"):
        fs.get_score(["a"], ["x"])


def test_dev_db_source_without_lm(tmp_path):
    """Registering FActScore's .db builds an index once; no-response entries need no LM."""
    fs = FactScorer(cache_dir=tmp_path, lm=SMALL_LM)
    fs.register_knowledge_source("dev", db_path=require(DEV_DB))
    with pytest.raises(ValueError, match="already registered"):
        fs.register_knowledge_source("dev", db_path=DEV_DB)
    assert (tmp_path / "indexes" / "dev" / "manifest.json").is_file()
    with pytest.raises(ValueError, match="unknown topic.*Taral Hicksx"):
        fs.get_score(["Taral Hicksx"], ["text"], knowledge_source="dev")
    out = fs.get_score(["Taral Hicks", "Eric Hacker"], ["a", "b"], atomic_facts=[None, []],
                       knowledge_source="dev")  # fmt: skip
    assert set(out) == REFERENCE_KEYS
    assert out["decisions"] == [None, None] and out["respond_ratio"] == 0.0
    assert math.isnan(out["score"]) and math.isnan(out["num_facts_per_response"])
    fs.close()
    # A second scorer reopens the same index (no rebuild) through index=.
    again = FactScorer(cache_dir=tmp_path, index=tmp_path / "indexes" / "dev")
    again.close()


@pytest.mark.slow
@pytest.mark.heavy  # minutes with the default model; the drop-in's other tests run in CI
def test_readme_example_with_the_import_changed(tmp_path):
    bios = _two_short_bios()
    topics = [b["topic"] for b in bios]
    generations = [b["output"] for b in bios]

    # FActScore's README, with `from factscore.factscorer import FactScorer` changed.
    with pytest.warns(UserWarning, match="openai_key"):
        fs = FactScorer(openai_key="...", cache_dir=tmp_path, lm=SMALL_LM)
    fs.register_knowledge_source("enwiki-20230401-dev", db_path=str(require(DEV_DB)),
                                 data_path=str(tmp_path / "unused.jsonl"))  # fmt: skip
    out = fs.get_score(topics, generations, gamma=10, knowledge_source="enwiki-20230401-dev")
    print(out["score"])  # FActScore
    print(out["init_score"])  # FActScore w/o length penalty
    print(out["respond_ratio"])  # % of responding (not abstaining from answering)
    print(out["num_facts_per_response"])  # average number of atomic facts per response

    assert set(out) == REFERENCE_KEYS
    _check_reference_types(out, 2)
    assert out["respond_ratio"] == 1.0
    assert 0.0 <= out["score"] <= out["init_score"] <= 1.0
    n_facts = [len(d) for d in out["decisions"]]
    assert out["num_facts_per_response"] == np.mean(n_facts)
    assert out["init_score"] == np.mean(
        [np.mean([f["is_supported"] for f in d]) for d in out["decisions"]]
    )

    # --use_atomic_facts of the reference: FActScore's own facts verified, none decomposed;
    # gamma=0 drops init_score, as in the reference.
    facts = [[a["text"] for s in b["annotations"] for a in s["model-atomic-facts"]] for b in bios]
    given = fs.get_score(topics, generations, gamma=0, atomic_facts=[facts[0], None],
                         knowledge_source="enwiki-20230401-dev")  # fmt: skip
    assert set(given) == REFERENCE_KEYS - {"init_score"}
    assert given["decisions"][1] is None and given["respond_ratio"] == 0.5
    assert [f["atom"] for f in given["decisions"][0]] == [a.strip() for a in facts[0]]
    assert given["num_facts_per_response"] == len(facts[0])
    fs.close()
