"""The run record of ``fscore eval`` and ``fscore rerun``: what a record holds, a re-run
that reproduces the summary, and the refusals when the index, the LM or an input differs.

LM-free runs (trivial verifiers, --use-atomic-facts) on the real dev index; the LM's
fingerprint is checked on the small embedded GGUF where it is installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.model_store import SMALL_LM, installed_path
from factscore_local.pipeline.records.run_record import (
    RecordError,
    file_sha256,
    lm_fingerprint,
    read_record,
)
from factscore_local.runtime.cache import ResultCache
from tests.conftest import SHARED, require, require_model

LABELED = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"


def run_eval(index: Path, tmp_path: Path, source: Path, *extra: str, name="out") -> Path:
    out = tmp_path / f"{name}.jsonl"
    args = ["eval", "--index", str(index), "--input", str(source), "--use-atomic-facts",
            "--verifier", "random", "--n-samples", "4", "--cache", str(tmp_path / "c.db"),
            "--out", str(out), "--quiet", *extra]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


def test_record_names_everything_that_decides_the_numbers(db_index, tmp_path):
    source = require(LABELED)
    out = run_eval(db_index, tmp_path, source)
    record = read_record(out.with_name("out.jsonl.record.json"))
    manifest = db_index / "manifest.json"
    assert record["index"]["manifest_sha256"] == file_sha256(manifest)
    assert record["index"]["counts"] == {"pages": 98, "passages": 1036}
    assert record["inputs"] == [
        {"path": str(source.resolve()), "given": str(source), "sha256": file_sha256(source)}
    ]
    assert record["settings"]["verifier"] == "random"
    assert record["settings"]["seed"] == 0 and record["settings"]["k"] == 5
    assert record["run_options"] == {"n_samples": 4, "topic_half": None}
    assert set(record["prompts"]) == {"retrieve_lm", "no_context", "causal_np", "decompose"}
    assert all(len(h) == 64 for h in record["prompts"].values())
    assert len(record["demos_sha256"]) == 64
    assert record["lm"] is None  # the random verifier loads no LM
    assert record["cache"] == {"hits": 0, "misses": 0, "hit_ratio": None}  # nothing cached
    lines = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert record["summary"]["n_bios"] == len(lines) == 4


def test_record_gives_the_cache_hit_ratio(db_index, tmp_path):
    """A second run of the same bios finds every model result in the cache."""
    extra = ("--verifier", "np", "--np-model", "minilm", "--n-samples", "1", "--no-validate")
    first = read_record(run_eval(db_index, tmp_path, require(LABELED), *extra, name="a")
                        .with_name("a.jsonl.record.json"))  # fmt: skip
    second = read_record(run_eval(db_index, tmp_path, require(LABELED), *extra, name="b")
                         .with_name("b.jsonl.record.json"))  # fmt: skip
    assert first["cache"]["hits"] == 0 and first["cache"]["misses"] > 0
    assert second["cache"] == {"hits": first["cache"]["misses"], "misses": 0, "hit_ratio": 1.0}
    assert first["settings"]["np_model"] == "minilm"


def test_rerun_reproduces_the_summary_from_a_fresh_cache(db_index, tmp_path):
    out = run_eval(db_index, tmp_path, require(LABELED))
    record = out.with_name("out.jsonl.record.json")
    again = tmp_path / "again.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "rerun",
            str(record),
            "--out",
            str(again),
            "--cache",
            str(tmp_path / "new.db"),
            "--json",
            "--quiet",
        ],  # fmt: skip
    )
    assert result.exit_code == 0, result.output
    assert "re-run reproduces the recorded summary" in result.output
    assert out.read_text("utf-8") == again.read_text("utf-8")  # the same decisions, line by line


def test_rerun_keeps_the_input_path_as_given(db_index, tmp_path, monkeypatch):
    """A run given a relative path through a symlink: the re-run's rows name the input as
    the original's did, so the lines are identical (the record also holds the resolved
    path, used when the given one no longer names the same file)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "bios.jsonl").symlink_to(require(LABELED))
    monkeypatch.chdir(tmp_path)
    out = run_eval(db_index, tmp_path, Path("data/bios.jsonl"))
    record = out.with_name("out.jsonl.record.json")
    assert read_record(record)["inputs"][0]["given"] == "data/bios.jsonl"
    again = tmp_path / "again.jsonl"
    args = ["rerun", str(record), "--out", str(again), "--cache", str(tmp_path / "new.db"),
            "--quiet"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert out.read_text("utf-8") == again.read_text("utf-8")
    assert '"source": "data/bios.jsonl"' in again.read_text("utf-8")


def test_rerun_refuses_another_index_or_input(db_index, tmp_path):
    source = tmp_path / "bios.jsonl"
    shutil.copy(require(LABELED), source)
    index = tmp_path / "index"
    shutil.copytree(db_index, index)
    out = run_eval(index, tmp_path, source)
    record = out.with_name("out.jsonl.record.json")
    # Another index: a manifest that differs.
    manifest = json.loads((index / "manifest.json").read_text("utf-8"))
    manifest["counts"]["passages"] += 1
    (index / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    with source.open("a", encoding="utf-8") as f:
        f.write("\n")
    result = CliRunner().invoke(main, ["rerun", str(record), "--quiet"])
    assert result.exit_code != 0
    assert "cannot re-run this record here" in result.output
    assert "differs from the recorded one" in result.output
    assert "has changed since the recorded run" in result.output


def test_rerun_refuses_another_lm(db_index, tmp_path):
    out = run_eval(db_index, tmp_path, require(LABELED))
    record_file = out.with_name("out.jsonl.record.json")
    record = json.loads(record_file.read_text("utf-8"))
    record["lm"] = {"name": "some.gguf", "path": "x", "size": 1, "sha256": "0" * 64,
                    "backend": "llama.cpp"}  # fmt: skip
    if installed_path(SMALL_LM) is None:
        record["settings"]["lm"] = str(tmp_path / "missing.gguf")
        expected = "is not here"
    else:
        record["settings"]["lm"] = SMALL_LM
        expected = "differs from the recorded some.gguf"
    record_file.write_text(json.dumps(record), "utf-8")
    result = CliRunner().invoke(main, ["rerun", str(record_file), "--quiet"])
    assert result.exit_code != 0
    assert expected in result.output


def test_lm_digest_is_the_files_sha256_and_computed_once(tmp_path):
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"not really a model" * 1000)
    cache = ResultCache(tmp_path / "c.db")
    first = lm_fingerprint(model, "llama.cpp", cache)
    assert first["sha256"] == file_sha256(model) and first["size"] == model.stat().st_size
    assert cache.misses == 1
    again = lm_fingerprint(model, "llama.cpp", ResultCache(tmp_path / "c.db"))
    assert again == first


def test_bad_records_are_refused_clearly(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", "utf-8")
    with pytest.raises(RecordError, match="not a run record"):
        read_record(bad)
    bad.write_text(json.dumps({"format": 1, "settings": {}}), "utf-8")
    with pytest.raises(RecordError, match="not a complete run record"):
        read_record(bad)
    result = CliRunner().invoke(main, ["rerun", str(tmp_path / "nothing.json")])
    assert result.exit_code != 0 and "no run record" in result.output


def test_exported_results_serve_a_copied_model_on_another_cache(db_index, tmp_path):
    """Results keyed by the model's content: exported, imported into a fresh cache and read
    back for a copy of the model file (another path and mtime) without one model call."""
    small = require_model(SMALL_LM)
    extra = ("--verifier", "retrieve-lm", "--n-samples", "1", "--no-validate")
    first = run_eval(db_index, tmp_path, require(LABELED), *extra, "--lm", SMALL_LM, name="a")
    assert read_record(first.with_name("a.jsonl.record.json"))["cache"]["misses"] > 0
    export = tmp_path / "results.jsonl.gz"
    runner = CliRunner()
    out = runner.invoke(main, ["cache", "export", "--cache", str(tmp_path / "c.db"),
                               "--out", str(export)])  # fmt: skip
    assert out.exit_code == 0, out.output
    (tmp_path / "c.db").unlink()
    copy = tmp_path / "elsewhere" / small.name
    copy.parent.mkdir()
    shutil.copyfile(small, copy)
    out = runner.invoke(main, ["cache", "import", str(export), "--cache", str(tmp_path / "c.db")])
    assert out.exit_code == 0 and "results added" in out.output, out.output
    second = run_eval(db_index, tmp_path, require(LABELED), *extra, "--lm", str(copy), name="b")
    record = read_record(second.with_name("b.jsonl.record.json"))
    # One miss: the copy's digest, computed once for its new path; no model result.
    assert record["cache"]["misses"] == 1 and record["cache"]["hits"] > 0
    assert first.read_text("utf-8") == second.read_text("utf-8")
