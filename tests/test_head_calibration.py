"""``fscore calibrate --head`` with the real 0.5B model: a head trained on the human facts'
states, the head rule fitted with it, and ``fscore eval`` weighing it, with the same head
score from a cached pass and a fresh one."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.declarations.verifiers import HEAD_RULE, get_verifier
from factscore_local.labels.calibration import read_settings
from factscore_local.pipeline.signals.state_head import StateHead
from tests.conftest import SHARED, require, require_model

pytestmark = pytest.mark.slow
DEV = SHARED / "factscore" / "labeled-dev"


def _facts(path) -> list[dict]:
    return [f for line in path.read_text("utf-8").splitlines()
            for f in json.loads(line)["decisions"]]  # fmt: skip


def test_calibrate_trains_a_head_that_eval_weighs(db_index, tmp_path):
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    # two labeled bios, each cut to its first 3 sentences (about 25 human facts: a head and
    # its rule fitted, not a good head; CI's time is the limit)
    bios = tmp_path / "bios.jsonl"
    lines = require(DEV / "InstructGPT.jsonl").read_text("utf-8").splitlines()
    picked = [json.loads(x) for x in lines if json.loads(x).get("annotations")][:2]
    for record in picked:
        record["annotations"] = record["annotations"][:3]
    bios.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked), "utf-8")
    args = ["--index", str(db_index), "--input", str(bios), "--use-atomic-facts",
            "--lm", SMALL_LM, "--verifier", HEAD_RULE, "--quiet",
            "--evidence-budget", "256"]  # short blocks: whole pages are not the point  # fmt: skip
    settings_path, head_path = tmp_path / "settings.json", tmp_path / "head.npz"
    fitted = CliRunner().invoke(
        main,
        ["calibrate", *args, "--cache", str(tmp_path / "c.db"),
         "--out", str(settings_path), "--head", str(head_path)],
    )  # fmt: skip
    assert fitted.exit_code == 0, fitted.output
    settings = read_settings(settings_path)
    assert settings["head"] == str(head_path.resolve())
    assert len(settings["rule_weights"]) == 1 + len(get_verifier(HEAD_RULE).features)
    head = StateHead.load(head_path)
    assert head.record["model"] == SMALL_LM and head.width == 896
    assert head.record["n_facts"] == settings["n_human_facts"]

    def run(cache: str, out: str, n: str) -> list[dict]:
        result = CliRunner().invoke(
            main,
            ["eval", *args, "--n-samples", n, "--settings", str(settings_path), "--gamma",
             "0", "--cache", str(tmp_path / cache), "--out", str(tmp_path / out)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        return _facts(tmp_path / out)

    cached = run("c.db", "cached.jsonl", "4")  # every state read by calibrate's pass
    assert cached and all(isinstance(f["head"], float) for f in cached)
    assert len({f["head"] for f in cached}) > len(cached) // 2  # scores, not a constant
    fresh = run("fresh.db", "fresh.jsonl", "1")  # the first bio, every state read anew
    assert [f["head"] for f in fresh] == [f["head"] for f in cached[: len(fresh)]]
