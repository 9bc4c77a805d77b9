"""FActScore's command line (``python -m factscore.factscorer``) as
``python -m factscore_local.compat.factscore``: the reference's flags, summary lines and
output file.

The slow test is the README's invocation (``--input_path data/labeled/InstructGPT.jsonl
--model_name retrieval+llama+npm --use_atomic_facts --n_samples ...``) with the module name
changed, on a labeled file of FActScore's dev data, the dev index and the embedded 0.5B
model; the others need no model.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from factscore_local.compat.factscore.cli import (
    CommandError,
    build_parser,
    knowledge_source,
    output_path,
    read_inputs,
)
from factscore_local.model_store import SMALL_LM
from tests.conftest import ROOT, SHARED, require, require_model

INSTRUCTGPT = SHARED / "factscore" / "labeled-dev" / "InstructGPT.jsonl"
MODULE = [sys.executable, "-m", "factscore_local.compat.factscore"]
# A summary line as the reference logs it: "%(asctime)s - %(name)s - %(message)s".
LOGGED = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d - root - (?P<message>.+)$")
REFERENCE_KEYS = {"score", "init_score", "respond_ratio", "num_facts_per_response", "decisions"}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command in a fresh interpreter, from ``cwd`` (its relative defaults land there)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*MODULE, *args], capture_output=True, text=True, cwd=cwd, env=env)


def summary(stderr: str) -> dict[str, str]:
    """The logged summary lines: message label -> value text."""
    lines = [m["message"] for line in stderr.splitlines() if (m := LOGGED.match(line))]
    return dict(line.split(" = ", 1) for line in lines)


def fact_count(record: dict) -> int:
    return sum(len(sent["model-atomic-facts"]) for sent in record["annotations"])


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --- no model ---------------------------------------------------------------------------
def test_help_names_the_reference_flags_and_how_to_give_an_index(tmp_path):
    result = run("--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    for flag in ("--input_path", "--model_name", "--gamma", "--knowledge_source", "--cache_dir",
                 "--use_atomic_facts", "--verbose", "--print_rate_limit_error", "--n_samples",
                 "--openai_key", "--data_dir", "--model_dir", "--abstain_detection_type",
                 "--cost_estimate", "--lm"):  # fmt: skip
        assert flag in text, flag
    assert "A folder built by 'fscore build-index' (give its path)" in text
    assert "the index folder DATA_DIR/NAME" in text


def test_the_readme_abbreviation_and_the_reference_defaults_parse():
    args = build_parser().parse_args(["--abstain_detection", "generic"])
    assert args.abstain_detection_type == "generic"
    assert (args.model_name, args.gamma, args.n_samples) == ("retrieval+ChatGPT", 10, None)
    assert args.input_path == "data/labeled/InstructGPT.jsonl"
    assert args.cache_dir == args.data_dir == ".cache/factscore/"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--model_name", "retrieval+GPT4"])


def test_n_samples_counts_the_skipped_lines_as_the_reference_does(tmp_path):
    bios = [{"topic": "A", "output": "a", "annotations": None},
            {"topic": "B", "output": "b", "annotations": [
                {"text": "b", "model-atomic-facts": [{"text": "B is b."}, {"text": "B is."}]}]},
            {"topic": "C", "output": "c", "annotations": [
                {"text": "c", "model-atomic-facts": [{"text": "C is c."}]}]}]  # fmt: skip
    path = write_jsonl(tmp_path / "in.jsonl", bios)
    facts = read_inputs(path, use_atomic_facts=True, n_samples=2)
    assert facts.topics == ["B"] and facts.atomic_facts == [["B is b.", "B is."]]
    plain = read_inputs(path, use_atomic_facts=False, n_samples=2)
    assert plain.topics == ["A", "B"] and plain.atomic_facts is None
    assert read_inputs(path, use_atomic_facts=True, n_samples=None).topics == ["B", "C"]


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"topic": "A", "output": "a"}', "--use_atomic_facts needs 'annotations'"),
        ('{"topic": "A", "output": "a", "annotations": [{"text": "a"}]}', "model-atomic-facts"),
        ("{not json", "line 1: invalid JSON"),
        ('{"output": "a", "annotations": null}', "needs 'topic' and 'output'"),
    ],
)
def test_unusable_lines_are_clear_errors(tmp_path, line, message):
    path = tmp_path / "in.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match=re.escape(message)):
        read_inputs(path, use_atomic_facts=True, n_samples=None)


def test_knowledge_source_names_an_index_by_path_or_in_data_dir(db_index, tmp_path):
    assert knowledge_source(str(db_index), tmp_path) == (db_index.name, db_index)
    (tmp_path / "enwiki-20230401").symlink_to(db_index, target_is_directory=True)
    assert knowledge_source(None, tmp_path) == ("enwiki-20230401", tmp_path / "enwiki-20230401")
    assert knowledge_source("other", tmp_path) == ("other", None)  # FActScore's .db / .jsonl
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match="a folder but not an index"):
        knowledge_source(str(tmp_path / "empty"), tmp_path)


def test_output_path_is_the_references():
    assert output_path(Path("data/x/InstructGPT.jsonl"), None) == Path(
        "data/x/InstructGPT_factscore_output.json"
    )
    assert output_path(Path("bios.txt"), None) == Path("bios.txt_factscore_output.json")
    assert output_path(Path("a.jsonl"), "out/o.json") == Path("out/o.json")


def test_an_abstaining_file_runs_to_the_summary_without_a_model(db_index, tmp_path):
    """``--abstain_detection generic`` (the README's abbreviation) on a bio that abstains:
    no fact is decomposed, so nothing loads a model; the summary has no 'w/o length penalty'
    line with --gamma 0, and the output is the reference's dictionary."""
    sorry = {"topic": "Taral Hicks", "output": "I'm sorry, I cannot say."}
    path = write_jsonl(tmp_path / "data" / "sorry.jsonl", [sorry])
    result = run("--input_path", str(path), "--abstain_detection", "generic", "--gamma", "0",
                 "--knowledge_source", str(db_index), "--cache_dir", str(tmp_path / "cache"),
                 "--lm", SMALL_LM, "--openai_key", "api.key", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert summary(result.stderr) == {"FActScore": "nan%", "Respond ratio": "0.0%",
                                      "# Atomic facts per valid response": "nan"}  # fmt: skip
    assert "note: --openai_key is ignored" in result.stderr
    out = json.loads((tmp_path / "data" / "sorry_factscore_output.json").read_text())
    assert out["decisions"] == [None] and out["respond_ratio"] == 0.0 and "init_score" not in out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--input_path", "missing.jsonl"], "error: input not found: missing.jsonl"),
        (["--knowledge_source", "nowhere"], "knowledge source 'nowhere'"),
        (["--gamma", "-1"], "error: --gamma must be 0"),
    ],
)
def test_bad_input_is_one_error_line(tmp_path, extra, message):
    path = write_jsonl(tmp_path / "in.jsonl", [{"topic": "A", "output": "a"}])
    result = run("--input_path", str(path), "--cache_dir", str(tmp_path / "c"),
                 "--data_dir", str(tmp_path), *extra, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


# --- the README's invocation, with a real model -----------------------------------------
@pytest.mark.slow
def test_the_readme_invocation_scores_two_labeled_bios(db_index, tmp_path):
    """``--model_name retrieval+llama+npm --use_atomic_facts --n_samples 2`` on a labeled
    file of three InstructGPT bios (the two with the fewest facts, cut to their first
    sentence to keep CI's time, then another): the first two are scored; the summary
    lines are the reference's, in its log format, and agree with the output file, whose
    decisions are the input's facts."""

    require_model(SMALL_LM)
    rows = [json.loads(line) for line in require(INSTRUCTGPT).open(encoding="utf-8")]
    labeled = sorted((r for r in rows if r["annotations"]), key=fact_count)
    bios = [dict(b, annotations=b["annotations"][:1]) for b in labeled[:2]] + [labeled[-1]]
    path = write_jsonl(tmp_path / "data" / "labeled" / "InstructGPT.jsonl", bios)
    result = run("--input_path", str(path), "--model_name", "retrieval+llama+npm",
                 "--use_atomic_facts", "--n_samples", "2", "--knowledge_source", str(db_index),
                 "--cache_dir", str(tmp_path / ".cache"), "--openai_key", "api.key",
                 "--print_rate_limit_error", "--lm", SMALL_LM, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    mapping = next(line for line in result.stderr.splitlines() if "--model_name" in line)
    assert mapping.startswith("note: --model_name retrieval+llama+npm runs as verifier ")
    assert f"the LM {SMALL_LM} in place of Inst-LLaMA-7B" in mapping
    assert "in place of NPM" in mapping and "the input's model-atomic-facts" in mapping
    assert "note: --print_rate_limit_error is ignored" in result.stderr

    out = json.loads((path.parent / "InstructGPT_factscore_output.json").read_text())
    assert set(out) == REFERENCE_KEYS
    facts = [[a["text"] for s in b["annotations"] for a in s["model-atomic-facts"]]
             for b in bios[:2]]  # fmt: skip
    assert [[d["atom"] for d in bio] for bio in out["decisions"]] == facts
    supported = [[d["is_supported"] for d in bio] for bio in out["decisions"]]
    assert all(isinstance(x, bool) for bio in supported for x in bio)
    init = [sum(s) / len(s) for s in supported]
    penalty = [min(1.0, math.exp(1 - 10 / len(s))) for s in supported]  # gamma 10
    penalised = [f * p for f, p in zip(init, penalty, strict=True)]
    assert out["init_score"] == pytest.approx(sum(init) / 2)
    assert out["score"] == pytest.approx(sum(penalised) / 2)
    assert out["respond_ratio"] == 1.0
    assert out["num_facts_per_response"] == (len(facts[0]) + len(facts[1])) / 2

    assert summary(result.stderr) == {
        "FActScore": f"{100 * out['score']:.1f}%",
        "FActScore w/o length penalty": f"{100 * out['init_score']:.1f}%",
        "Respond ratio": "100.0%",
        "# Atomic facts per valid response": f"{out['num_facts_per_response']:.1f}",
    }
