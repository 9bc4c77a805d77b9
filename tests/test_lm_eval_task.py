"""The lm-evaluation-harness task ``factscore_local`` (factscore_local/harness).

The slow end-to-end test runs the ``lm_eval`` command on two dev topics with the small
embedded model as the model under test, through lm-eval's own ``hf`` backend (the GGUF
dequantized by transformers), and reads FActScore from lm-eval's printed results table.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time

import pytest

lm_eval = pytest.importorskip("lm_eval", reason="lm-eval is not installed (pip install lm-eval)")

from factscore_local.harness import TASK_NAME, task_dir  # noqa: E402
from factscore_local.harness import task as harness  # noqa: E402
from factscore_local.model_store import SMALL_LM, resolve_lm  # noqa: E402
from tests.conftest import SHARED, require  # noqa: E402

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
TOPICS = ["Taral Hicks", "Eric Hacker"]  # two dev topics with short pages
OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _metadata(topics, index) -> dict:
    return {"fscore_topics": str(topics), "fscore_index": str(index), "fscore_lm": SMALL_LM}


def test_task_loads_offline(tmp_path, db_index, monkeypatch):
    from lm_eval.tasks import TaskManager

    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)
    topics = tmp_path / "topics.txt"
    topics.write_text("\n".join(TOPICS) + "\n\n", encoding="utf-8")
    manager = TaskManager(
        include_path=str(task_dir()), include_defaults=False, metadata=_metadata(topics, db_index)
    )
    assert TASK_NAME in manager.all_tasks
    task = manager.load([TASK_NAME])["tasks"][TASK_NAME]
    docs = list(task.test_docs())
    assert [d["topic"] for d in docs] == TOPICS
    assert task.doc_to_text(docs[0]) == "Question: Tell me a bio of Taral Hicks."
    assert task.config.generation_kwargs["until"] == ["Question:"]


def test_bad_settings_are_refused(tmp_path, db_index, monkeypatch):
    for key in harness.SETTING_KEYS:
        monkeypatch.delenv(key.upper(), raising=False)
    topics = tmp_path / "topics.txt"
    topics.write_text("Taral Hicks\nTaral Hicksx\n", encoding="utf-8")
    with pytest.raises(harness.TaskSettingsError, match="needs fscore_index"):
        harness.load_topics(fscore_topics=str(topics))
    with pytest.raises(harness.TaskSettingsError, match="not an index directory"):
        harness.load_topics(fscore_topics=str(topics), fscore_index=str(tmp_path))
    with pytest.raises(harness.TaskSettingsError, match="Taral Hicksx"):
        harness.load_topics(**_metadata(topics, db_index))
    with pytest.raises(harness.TaskSettingsError, match="fscore_settings"):
        harness.load_topics(**_metadata(topics, db_index), fscore_settings={"k": 0})
    # The environment is the fallback of --metadata.
    monkeypatch.setenv("FSCORE_INDEX", str(db_index))
    topics.write_text("Taral Hicks\n", encoding="utf-8")
    assert len(harness.load_topics(fscore_topics=str(topics))["test"]) == 1


def test_aggregations_follow_factscore():
    assert harness.mean_responding([0.5, None, 1.0]) == 0.75
    assert math.isnan(harness.mean_responding([None]))
    items = [{"human": 0.5, "estimate": 0.7}, {"human": None, "estimate": 0.1},
             {"human": 0.3, "estimate": 0.3}]  # fmt: skip
    assert harness.error_rate(items) == pytest.approx(0.1)
    # G = NS and IR facts; P = facts called not supported.
    pairs = [[["S", True], ["NS", False], ["IR", True]], [["NS", False]]]
    assert harness.f1_micro(pairs) == pytest.approx(0.8)


@pytest.mark.slow
def test_labeled_topics_report_error_rate_and_f1(tmp_path, db_index):
    """A labeled topics file: the humans' bio is scored too, giving ER and F1 items."""
    line = json.loads(require(CHATGPT).open(encoding="utf-8").readline())
    first = line["annotations"][:1]  # one labeled sentence keeps the LM run short
    labeled = dict(line, output=first[0]["text"], annotations=first)
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps(labeled) + "\n", encoding="utf-8")
    doc = harness.load_topics(**_metadata(topics, db_index))["test"][0]
    out = harness.process_results(doc, [first[0]["text"]])
    assert set(out) == {"factscore", "factscore_init", "respond_ratio", "facts_per_response",
                        "error_rate", "f1_micro"}  # fmt: skip
    assert out["respond_ratio"] == 1.0 and 0.0 <= out["factscore"] <= 1.0
    assert len(out["f1_micro"]) == len(first[0]["human-atomic-facts"])
    assert 0.0 <= harness.error_rate([out["error_rate"]]) <= 1.0


@pytest.mark.slow
@pytest.mark.heavy  # minutes; test_labeled_topics_report_error_rate_and_f1 runs the task in CI
def test_lm_eval_runs_the_task_end_to_end(tmp_path, db_index):
    model = tmp_path / "model"  # lm-eval's hf backend reads a GGUF from a model directory
    model.mkdir()
    (model / "model.gguf").symlink_to(resolve_lm(SMALL_LM))
    topics = tmp_path / "topics.txt"
    topics.write_text("\n".join(TOPICS) + "\n", encoding="utf-8")
    command = [
        sys.executable, "-m", "lm_eval",
        "--model", "hf",
        "--model_args", f"pretrained={model},gguf_file=model.gguf,dtype=float32",
        "--tasks", TASK_NAME,
        "--include_path", str(task_dir()),
        "--device", "cpu",
        "--batch_size", "2",
        "--apply_chat_template",
        "--gen_kwargs", "max_gen_toks=64",
        "--metadata", json.dumps(_metadata(topics, db_index)),
    ]  # fmt: skip
    start = time.perf_counter()
    # Output to files, so that a slow run can be followed while it goes (a few minutes on
    # an idle 2-core machine, much longer on a loaded one).
    out, err = tmp_path / "lm_eval.out", tmp_path / "lm_eval.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        code = subprocess.run(command, stdout=stdout, stderr=stderr, timeout=5400,
                              env={**os.environ, **OFFLINE}).returncode  # fmt: skip
    print(f"lm_eval took {time.perf_counter() - start:.0f} s")
    assert code == 0, err.read_text()[-3000:]
    printed = out.read_text()
    print(printed)
    # lm-eval's table: |Tasks|Version|Filter|n-shot|Metric| |Value| |Stderr|
    # (the task's name is printed on its first row only).
    rows, task = {}, ""
    for line in printed.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 7 and not set(cells[4]) <= {"-"}:
            task = cells[0] or task
            rows[cells[4]] = [task, *cells[1:]]
    assert rows["factscore"][0] == "FActScore"
    for metric in ("factscore", "factscore_init", "respond_ratio", "facts_per_response"):
        assert re.fullmatch(r"\d+(\.\d+)?|nan", rows[metric][6]), rows[metric]
    assert float(rows["respond_ratio"][6]) > 0  # the model wrote at least one bio
