"""``fscore eval`` end to end without a language model.

The trivial verifiers (always-supported, always-not-supported, random) with
``--use-atomic-facts`` on FActScore's labeled ChatGPT bios, against the index of the dev DB
(the real pages of those topics). Checks the summary, the --out rows, the seeded random
verifier, resuming from a cache, and that bad input lines are reported without losing
the good ones.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from tests.conftest import SHARED, require

LABELED = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
SUMMARY_KEYS = {
    "score",
    "init_score",
    "respond_ratio",
    "num_facts_per_response",
    "n_bios",
    "n_facts",
    "n_errors",
    "thresholds",
}
VALIDATION_KEYS = {
    "human_score",
    "error_rate",
    "f1_micro",
    "f1_micro_ir_excluded",
    "precision",
    "recall",
    "bio_mae",
    "subjects",
    "ranking_kept",
}


@pytest.fixture(autouse=True)
def no_language_model(monkeypatch):
    """Fail loudly if anything here tries to load an LM."""
    import factscore_local.lm as lm_module

    def refuse(*args, **kwargs):
        raise AssertionError("a language model was loaded in an LM-free test")

    monkeypatch.setattr(lm_module, "load_lm", refuse)


@pytest.fixture(scope="module")
def labeled() -> list[dict]:
    lines = require(LABELED).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:8]]


def n_atoms(record: dict) -> int:
    return sum(len(s.get("model-atomic-facts") or []) for s in record["annotations"] or [])


def atoms(record: dict) -> list[str]:
    return [
        atom["text"]
        for sent in record["annotations"] or []
        for atom in sent.get("model-atomic-facts") or []
    ]


def write_jsonl(path: Path, lines: list) -> Path:
    """Dicts are dumped as JSON; strings are written as they are (for malformed lines)."""
    with path.open("w", encoding="utf-8") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return path


def run_eval(index: Path, tmp_path: Path, inputs, *extra: str, cache: Path | None = None):
    args = ["eval", "--index", str(index), "--quiet"]
    for path in [inputs] if isinstance(inputs, Path) else inputs:
        args += ["--input", str(path)]
    args += ["--cache", str(cache or tmp_path / "cache.db"), *extra]
    return CliRunner().invoke(main, args)


def summary_of(result) -> dict:
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, result.stdout
    return json.loads(lines[0])


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_always_supported_and_not_supported(db_index, tmp_path, labeled):
    expected_facts = sum(n_atoms(r) for r in labeled[:5])
    src = require(LABELED)
    common = ["--use-atomic-facts", "--n-samples", "5", "--json"]

    yes = summary_of(
        run_eval(db_index, tmp_path, src, *common, "--verifier", "always-supported", "--gamma", "0")
    )
    assert set(yes) == SUMMARY_KEYS | VALIDATION_KEYS  # labeled input: validated too
    assert yes["error_rate"] == pytest.approx(100 - yes["human_score"], abs=0.01)
    assert yes["f1_micro"] == 0.0 and yes["recall"] == 0.0
    assert yes["score"] == 1.0 and yes["init_score"] == 1.0
    assert yes["respond_ratio"] == 1.0
    assert yes["n_bios"] == 5 and yes["n_errors"] == 0
    assert yes["n_facts"] == expected_facts
    assert yes["num_facts_per_response"] == pytest.approx(expected_facts / 5)

    no = summary_of(
        run_eval(db_index, tmp_path, src, *common, "--verifier", "always-not-supported")
    )
    assert no["score"] == 0.0 and no["init_score"] == 0.0
    assert no["n_facts"] == expected_facts and no["respond_ratio"] == 1.0


def test_length_penalty_on_and_off(db_index, tmp_path, labeled):
    # All five real bios have more than 10 facts, so gamma 10 changes nothing for them;
    # two short copies (3 and 7 facts) are penalized.
    short = []
    for record, keep in ((labeled[0], 3), (labeled[1], 7)):
        rec = copy.deepcopy(record)
        left = keep
        for sent in rec["annotations"]:
            facts = sent.get("model-atomic-facts") or []
            sent["model-atomic-facts"] = facts[:left]
            left -= len(sent["model-atomic-facts"])
        assert n_atoms(rec) == keep
        short.append(rec)
    assert all(n_atoms(r) > 10 for r in labeled[:5])
    src = write_jsonl(tmp_path / "in.jsonl", labeled[:5] + short)
    base = ["--use-atomic-facts", "--json", "--verifier", "random", "--seed", "3"]

    on = summary_of(run_eval(db_index, tmp_path, src, *base, "--out", str(tmp_path / "on.jsonl")))
    off = summary_of(
        run_eval(db_index, tmp_path, src, *base, "--gamma", "0", "--out", str(tmp_path / "off"))
    )
    assert on["init_score"] == pytest.approx(off["init_score"])
    assert off["score"] == pytest.approx(off["init_score"])
    assert on["score"] < off["score"]
    rows_on, rows_off = rows_of(tmp_path / "on.jsonl"), rows_of(tmp_path / "off")
    for row_on, row_off in zip(rows_on, rows_off, strict=True):
        n = row_on["n_facts"]
        penalty = 1.0 if n >= 10 else math.exp(1 - 10 / n)
        assert row_on["init_score"] == pytest.approx(row_off["init_score"])
        assert row_on["score"] == pytest.approx(row_off["init_score"] * penalty)
    assert [r["n_facts"] for r in rows_on][-2:] == [3, 7]
    assert on["score"] == pytest.approx(sum(r["score"] for r in rows_on) / len(rows_on))


def test_out_rows_carry_decisions(db_index, tmp_path, labeled):
    out = tmp_path / "scored.jsonl"
    result = run_eval(
        db_index,
        tmp_path,
        require(LABELED),
        "--use-atomic-facts",
        "--n-samples",
        "5",
        "--verifier",
        "always-supported",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert "FActScore (always-supported)" in result.stdout
    rows = rows_of(out)
    assert len(rows) == 5
    for row, record in zip(rows, labeled[:5], strict=True):
        assert row["topic"] == record["topic"] and row["responded"] is True
        assert "error" not in row and row["title"]
        assert row["n_facts"] == n_atoms(record) == len(row["decisions"])
        assert [d["atom"] for d in row["decisions"]] == atoms(record)
        assert all(d["is_supported"] is True for d in row["decisions"])
    assert [row["line"] for row in rows] == [1, 2, 3, 4, 5]


def test_random_verifier_is_seeded(db_index, tmp_path, labeled):
    src = require(LABELED)

    def decisions(seed: int, name: str) -> list[bool]:
        out = tmp_path / name
        result = run_eval(
            db_index,
            tmp_path,
            src,
            "--use-atomic-facts",
            "--n-samples",
            "5",
            "--verifier",
            "random",
            "--seed",
            str(seed),
            "--out",
            str(out),
        )
        assert result.exit_code == 0, result.output
        return [d["is_supported"] for row in rows_of(out) for d in row["decisions"]]

    first, again, other = decisions(7, "a"), decisions(7, "b"), decisions(8, "c")
    assert len(first) == sum(n_atoms(r) for r in labeled[:5])
    assert first == again
    assert first != other
    for values in (first, other):
        assert 0.35 < sum(values) / len(values) < 0.65


def test_resumed_run_is_identical(db_index, tmp_path):
    cache = tmp_path / "shared-cache.db"
    args = ["--use-atomic-facts", "--n-samples", "5", "--verifier", "random", "--json"]
    first = run_eval(
        db_index, tmp_path, require(LABELED), *args, "--out", str(tmp_path / "1"), cache=cache
    )
    second = run_eval(
        db_index, tmp_path, require(LABELED), *args, "--out", str(tmp_path / "2"), cache=cache
    )
    assert summary_of(first) == summary_of(second)
    assert (tmp_path / "1").read_text() == (tmp_path / "2").read_text()
    assert cache.exists()


def test_bad_lines_are_reported_and_good_ones_kept(db_index, tmp_path, labeled):
    good = labeled[:3]
    no_output = copy.deepcopy(labeled[3])
    del no_output["output"]
    empty = copy.deepcopy(labeled[4])
    empty["output"], empty["annotations"] = "", None  # how the labeled data marks abstention
    unknown = copy.deepcopy(labeled[5])
    unknown["topic"] = good[0]["topic"] + "xq"  # a near miss of a real title
    lines = [
        good[0],
        '{"topic": "Broken", "output": "no closing brace"',
        good[1],
        no_output,
        empty,
        "",  # blank lines are skipped
        unknown,
        good[2],
    ]
    src = write_jsonl(tmp_path / "bad.jsonl", lines)
    out = tmp_path / "scored.jsonl"
    summary = summary_of(
        run_eval(
            db_index,
            tmp_path,
            src,
            "--use-atomic-facts",
            "--verifier",
            "always-supported",
            "--gamma",
            "0",
            "--json",
            "--out",
            str(out),
        )
    )
    rows = rows_of(out)
    assert [r["line"] for r in rows] == [1, 2, 3, 4, 5, 7, 8]
    by_line = {r["line"]: r for r in rows}
    assert "invalid JSON" in by_line[2]["error"]
    assert "output" in by_line[4]["error"] and by_line[4]["topic"] == no_output["topic"]
    assert "unknown topic" in by_line[7]["error"]
    assert "did you mean" in by_line[7]["error"] and good[0]["topic"] in by_line[7]["error"]
    assert by_line[5]["responded"] is False and "error" not in by_line[5]
    for line, record in ((1, good[0]), (3, good[1]), (8, good[2])):
        assert "error" not in by_line[line]
        assert by_line[line]["n_facts"] == n_atoms(record)
        assert by_line[line]["score"] == 1.0

    assert summary["n_errors"] == 3
    assert summary["n_bios"] == 4  # three good bios and the empty one
    assert summary["respond_ratio"] == pytest.approx(3 / 4)
    assert summary["n_facts"] == sum(n_atoms(r) for r in good)
    assert summary["score"] == 1.0


def test_plain_text_summary_mentions_errors(db_index, tmp_path, labeled):
    src = write_jsonl(tmp_path / "in.jsonl", [labeled[0], "not json at all"])
    result = run_eval(db_index, tmp_path, src, "--use-atomic-facts", "--verifier", "random")
    assert result.exit_code == 0, result.output
    assert "1 bio(s) could not be evaluated" in result.stdout


def test_use_atomic_facts_needs_annotations(db_index, tmp_path, labeled):
    bare = {"topic": labeled[1]["topic"], "output": labeled[1]["output"]}
    src = write_jsonl(tmp_path / "in.jsonl", [labeled[0], bare])
    out = tmp_path / "scored.jsonl"
    summary = summary_of(
        run_eval(
            db_index,
            tmp_path,
            src,
            "--use-atomic-facts",
            "--verifier",
            "always-supported",
            "--json",
            "--out",
            str(out),
        )
    )
    first, second = rows_of(out)
    assert "error" not in first and first["n_facts"] == n_atoms(labeled[0])
    assert "--use-atomic-facts" in second["error"] and "annotations" in second["error"]
    assert summary["n_errors"] == 1 and summary["n_bios"] == 1


def test_empty_and_abstained_outputs_need_no_model(db_index, tmp_path, labeled):
    # Without --use-atomic-facts, empty and abstaining outputs are settled before any LM.
    lines = [
        {"topic": labeled[0]["topic"], "output": ""},
        {"topic": labeled[1]["topic"], "output": "   "},
        {"topic": labeled[2]["topic"], "output": "I'm sorry, I have no information on this."},
    ]
    src = write_jsonl(tmp_path / "in.jsonl", lines)
    out = tmp_path / "scored.jsonl"
    summary = summary_of(
        run_eval(
            db_index, tmp_path, src, "--verifier", "always-supported", "--json", "--out", str(out)
        )
    )
    assert summary["respond_ratio"] == 0.0 and summary["n_bios"] == 3
    assert summary["score"] is None and summary["n_facts"] == 0
    assert all(r["responded"] is False and r["decisions"] == [] for r in rows_of(out))


def test_two_input_files_keep_their_bios_apart(db_index, tmp_path, labeled):
    first = write_jsonl(tmp_path / "a.jsonl", labeled[:2])
    second = write_jsonl(tmp_path / "b.jsonl", labeled[2:4])
    out = tmp_path / "scored.jsonl"
    summary = summary_of(
        run_eval(
            db_index,
            tmp_path,
            [first, second],
            "--use-atomic-facts",
            "--verifier",
            "always-supported",
            "--json",
            "--out",
            str(out),
        )
    )
    rows = rows_of(out)
    assert [(Path(r["source"]).name, r["line"]) for r in rows] == [
        ("a.jsonl", 1),
        ("a.jsonl", 2),
        ("b.jsonl", 1),
        ("b.jsonl", 2),
    ]
    for row, record in zip(rows, labeled[:4], strict=True):
        assert [d["atom"] for d in row["decisions"]] == atoms(record)
    assert summary["n_facts"] == sum(n_atoms(r) for r in labeled[:4])


@pytest.mark.parametrize(
    "annotations",
    ["not a list", ["not a dict"], [{"text": "s", "model-atomic-facts": [{"no-text": 1}]}]],
)
def test_malformed_annotations_fail_only_their_bio(db_index, tmp_path, labeled, annotations):
    broken = copy.deepcopy(labeled[1])
    broken["annotations"] = annotations
    src = write_jsonl(tmp_path / "in.jsonl", [labeled[0], broken])
    out = tmp_path / "scored.jsonl"
    result = run_eval(
        db_index, tmp_path, src, "--use-atomic-facts", "--verifier", "random", "--out", str(out)
    )
    assert result.exit_code == 0, repr(result.exception)
    good, bad = rows_of(out)
    assert "error" not in good and good["n_facts"] == n_atoms(labeled[0])
    assert "annotations" in bad["error"]


def test_missing_input_file(db_index, tmp_path):
    out = tmp_path / "scored.jsonl"
    missing = tmp_path / "nope.jsonl"
    result = run_eval(db_index, tmp_path, missing, "--verifier", "random", "--out", str(out))
    assert result.exit_code == 2
    assert "input not found" in result.output and str(missing) in result.output
    assert not out.exists()


def test_index_dir_that_is_not_an_index(tmp_path, labeled):
    not_index = tmp_path / "just-a-dir"
    not_index.mkdir()
    (not_index / "something.txt").write_text("hello")
    src = write_jsonl(tmp_path / "in.jsonl", labeled[:1])
    for index in (not_index, tmp_path / "does-not-exist"):
        result = run_eval(index, tmp_path, src, "--use-atomic-facts", "--verifier", "random")
        assert result.exit_code == 2
        assert "not an index directory" in result.output


def test_reference_decomposition_prompt(db_index):
    """--decompose-prompt reference with FActScore's demos gives its exact prompt layout."""
    from factscore_local.config import EvalConfig
    from factscore_local.pipeline.components import CachedLM, build_components
    from factscore_local.runtime.cache import ResultCache

    def decomposer(config: EvalConfig):
        # Building prompts needs no model: an LM that is never called.
        no_model = CachedLM(None, ResultCache(None), "no model")
        return build_components(config, lm=no_model).decomposer.get()

    demons = require(SHARED / "factscore" / "demos" / "demons.json")
    reference = decomposer(EvalConfig(index=db_index, decompose_prompt="reference", demos=demons))
    prompt = reference.prompt("He was born in 1950.")
    assert prompt.startswith("Please breakdown the following sentence into independent facts: ")
    assert prompt.endswith("independent facts: He was born in 1950.")
    assert prompt.count("Please breakdown the following sentence") == 9
    from factscore_local.pipeline.decomposition.decompose import parse_facts, parse_facts_reference

    assert reference.parser is parse_facts_reference  # its parser too
    ours = decomposer(EvalConfig(index=db_index))
    assert ours.prompt("He was born in 1950.").endswith("He was born in 1950.\n-")
    assert ours.parser is parse_facts


def test_np_threshold_defaults_per_scorer(db_index):
    """NPM's 0.3 for a masked-LM directory; the stand-ins' own fitted defaults; an explicit
    threshold always wins."""
    from factscore_local.config import (
        NPM_THRESHOLD,
        STANDIN_NP_THRESHOLDS,
        EvalConfig,
        default_np_threshold,
    )

    assert default_np_threshold("some/npm-single") == NPM_THRESHOLD == 0.3
    assert default_np_threshold(None) == STANDIN_NP_THRESHOLDS["lm-joint"]  # the default
    assert default_np_threshold("minilm") == STANDIN_NP_THRESHOLDS["minilm"] < 0.01
    config = EvalConfig(index=db_index)
    assert config.thresholds.np == STANDIN_NP_THRESHOLDS["lm-joint"]
    assert config.np_threshold is None  # resolved, never written back
    minilm = EvalConfig(index=db_index, np_model="minilm").thresholds.np
    assert minilm == STANDIN_NP_THRESHOLDS["minilm"]
    given = EvalConfig(index=db_index, np_threshold=0.5).thresholds.np
    assert given == 0.5


def test_np_stopwords_file_changes_what_np_skips(db_index, tmp_path):
    """--np-stopwords gives a masked-LM NP scorer its skipped ids (here MiniLM's ids of
    'the' and 'is', far fewer than its derived list): NP values change, and the two runs
    do not share cache entries."""
    from transformers import AutoTokenizer

    from factscore_local.index.models import minilm_path

    tok = AutoTokenizer.from_pretrained(str(minilm_path()))
    stop = tmp_path / "stop.txt"
    stop.write_text("\n".join(str(tok.convert_tokens_to_ids(w)) for w in ("the", "is")), "utf-8")
    source = require(LABELED)
    common = ("--verifier", "np", "--np-model", "minilm", "--n-samples", "1", "--no-validate",
              "--use-atomic-facts")  # fmt: skip
    out_a, out_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run_eval(db_index, tmp_path, source, *common, "--out", str(out_a)).exit_code == 0
    result = run_eval(db_index, tmp_path, source, *common, "--np-stopwords", str(stop),
                      "--out", str(out_b))  # fmt: skip
    assert result.exit_code == 0, result.output
    a = [d["np"] for d in json.loads(out_a.read_text())["decisions"]]
    b = [d["np"] for d in json.loads(out_b.read_text())["decisions"]]
    assert len(a) == len(b) > 5 and a != b
