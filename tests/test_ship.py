"""``fscore ship-rule`` and ``fscore ship-head``: what earns a place in the shipped defaults
(a rule that won on both topic halves for every subject, a raw-text shift that did, a head
of the model it ships for), written into a copy of the defaults, never the package's."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from factscore_local.cli import main, ship
from factscore_local.model_store import DEFAULT_LM
from factscore_local.pipeline.signals.state_head import StateHead

SUBJECTS = ship.SUBJECTS
RULE = "retrieve-lm+np+coverage-fitted"  # a fitted rule every release knows by this name


def heads_record(wins: bool = True) -> dict:
    better = {s: {"er": 1.0 + i, "f1": 80.0 + i} for i, s in enumerate(SUBJECTS)}
    worse = {s: {"er": 9.0, "f1": 40.0} for s in SUBJECTS}
    return {"name": "heads-98-x", "levers": {
        "default": {"verifier": "retrieve-lm", "subjects": worse},
        "rule without head": {"verifier": RULE, "subjects": better, "wins_everywhere": wins},
        "head rule (mlp)": {"verifier": "x+head-fitted", "subjects": {}, "wins_everywhere": True},
        "auc": {"margin": 0.7}}}  # fmt: skip


def tables_record() -> dict:
    figures = {}
    for i, s in enumerate(SUBJECTS):
        figures |= {f"{RULE}/cross-fitted/{s}/er": 1.234 + i,
                    f"{RULE}/cross-fitted/{s}/f1": 70.0,
                    f"retrieve-lm/default/{s}/er": 5.06,
                    f"retrieve-lm/default/{s}/f1": 60.0}  # fmt: skip
    return {"name": "tables-98", "figures": figures}


def settings(weights=None) -> dict:
    weights = {"bias": 0.5, "margin": 1.0} if weights is None else weights
    return {"verifier": RULE, "rule_weights": weights, "margin": 0.0, "np_threshold": 0.3,
            "fit": {"error_rate": 2.0, "f1_micro": 75.0}}  # fmt: skip


@pytest.fixture
def defaults(tmp_path):
    path = tmp_path / "model-defaults.json"
    model = {"default_rule": "retrieve-lm", "rules": {"retrieve-lm": {"margin": -1.0}}}
    path.write_text(json.dumps({"schema": ship.SCHEMA, "models": {DEFAULT_LM: model}}))
    return path


def test_a_rule_ships_with_its_cross_fitted_figures_and_the_margin_at_0s(defaults):
    rule = ship.ship_rule(settings(), tables_record(), "why", "fscore calibrate ...",
                          default=True, defaults_file=defaults)  # fmt: skip
    model = json.loads(defaults.read_text())["models"][DEFAULT_LM]
    entry = model["rules"][rule]
    assert model["default_rule"] == rule and entry["weights"] == {"bias": 0.5, "margin": 1.0}
    assert entry["provenance"]["cross_fitted"]["error_rate"] == [1.23, 2.23, 3.23]
    assert entry["provenance"]["at_margin_0"]["error_rate"] == [5.1] * 3
    assert model["rules"]["retrieve-lm"] == {"margin": -1.0}  # the others are kept


def test_a_rule_without_head_ships_with_the_default_it_replaces(defaults):
    entry = ship.rule_entry(settings(), heads_record(), "why", "fscore calibrate ...")
    assert entry["provenance"]["cross_fitted"]["f1_micro"] == [80.0, 81.0, 82.0]
    assert entry["provenance"]["replaces"]["f1_micro"] == [40.0] * 3
    assert entry["provenance"]["replaces"]["from"] == "heads-98-x (default)"
    with pytest.raises(ship.NotShipped, match="does not win"):
        ship.rule_entry(settings(), heads_record(wins=False), "why", "...")
    with pytest.raises(ship.NotShipped, match="measured no"):
        ship.heads_cross_fitted(heads_record(), "retrieve-lm+np-fitted")


def test_weights_by_position_or_another_schema_are_refused(defaults, tmp_path):
    with pytest.raises(ship.NotShipped, match="by position"):
        ship.rule_entry(settings([0.5, 1.0]), tables_record(), "why", "...")
    old = tmp_path / "old.json"
    old.write_text(json.dumps({DEFAULT_LM: {"verifier": "retrieve-lm"}}))
    with pytest.raises(ship.NotShipped, match="schema"):
        ship.ship_rule(settings(), tables_record(), "why", "...", defaults_file=old)


def test_a_raw_text_shift_ships_only_when_it_wins_everywhere(defaults):
    record = {"name": "raw-text-98", "command": "python -m scripts.bench_raw_text",
              "commit": "abc", "data": {"rule": "retrieve-lm"}, "figures": {
                  f"raw text, calibrated/{ship.WINS}": 1,
                  "raw text, calibrated/shift for the shipped weights": 0.4}}  # fmt: skip
    assert ship.ship_raw_text_shift(record, defaults_file=defaults) == ("retrieve-lm", 0.4)
    entry = json.loads(defaults.read_text())["models"][DEFAULT_LM]["rules"]["retrieve-lm"]
    assert entry["raw_text_shift"] == 0.4 and "abc" in entry["provenance"]["raw_text_fitted_with"]
    record["figures"][f"raw text, calibrated/{ship.WINS}"] = 0
    with pytest.raises(ship.NotShipped, match="does not win"):
        ship.raw_text_shift(record)


def a_head(record: dict, outputs: int = 1) -> StateHead:
    layers = ((np.zeros((4, outputs), np.float32), np.zeros(outputs, np.float32)),)
    return StateHead("logistic", np.zeros(4, np.float32), np.ones(4, np.float32), layers, record)


def test_a_head_ships_only_for_the_model_and_kind_it_was_trained_as(tmp_path):
    out = ship.ship_head(a_head({"model": DEFAULT_LM}), DEFAULT_LM, out=tmp_path / "h.npz")
    assert StateHead.load(out).record["model"] == DEFAULT_LM
    with pytest.raises(ship.NotShipped, match="trained on"):
        ship.ship_head(a_head({"model": "another-model"}), DEFAULT_LM, out=tmp_path / "x.npz")
    stance = a_head({"model": DEFAULT_LM, "labels": ["a", "b"]}, outputs=2)
    with pytest.raises(ship.NotShipped, match="not a fact head"):
        ship.ship_head(stance, DEFAULT_LM, out=tmp_path / "x.npz")
    assert ship.ship_head(stance, DEFAULT_LM, stance=True, out=tmp_path / "s.npz").exists()


def test_the_commands_write_the_defaults_file_given(defaults, tmp_path):
    (tmp_path / "s.json").write_text(json.dumps(settings()))
    (tmp_path / "t.json").write_text(json.dumps(tables_record()))
    args = ["ship-rule", "--settings", str(tmp_path / "s.json"), "--measured",
            str(tmp_path / "t.json"), "--why", "w", "--fitted-with", "f", "--default",
            "--defaults-file", str(defaults)]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    assert "shipped as the default" in done.output
    done = CliRunner().invoke(main, ["ship-rule", "--settings", str(tmp_path / "s.json")])
    assert done.exit_code == 2 and "needs --settings, --measured" in done.output


def test_a_refresh_rereads_the_figures_and_keeps_the_weights(defaults, tmp_path):
    rule = ship.ship_rule(settings(), tables_record(), "why", "fscore calibrate ...",
                          default=True, defaults_file=defaults)  # fmt: skip
    moved = tables_record()
    moved["figures"][f"{RULE}/cross-fitted/ChatGPT/er"] = 0.5
    assert ship.refresh_rule(moved, defaults_file=defaults) == rule
    entry = json.loads(defaults.read_text())["models"][DEFAULT_LM]["rules"][rule]
    assert entry["provenance"]["cross_fitted"]["error_rate"] == [1.23, 0.5, 3.23]
    assert entry["weights"] == {"bias": 0.5, "margin": 1.0}
    assert entry["provenance"]["why"] == "why" and entry["provenance"]["fit"]["f1_micro"] == 75.0
    with pytest.raises(ship.NotShipped, match="ships no"):
        ship.refresh_rule(moved, rule="paper-fitted", defaults_file=defaults)
    (tmp_path / "t.json").write_text(json.dumps(moved))
    args = ["ship-rule", "--refresh", "--defaults-file", str(defaults)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 2 and "give --measured" in done.output
    done = CliRunner().invoke(main, [*args, "--measured", str(tmp_path / "t.json")])
    assert done.exit_code == 0 and "refreshed" in done.output, done.output
    done = CliRunner().invoke(main, [*args, "--measured", str(tmp_path / "t.json"), "--rule", "x"])
    assert done.exit_code == 2 and "unknown verifier 'x'" in done.output, done.output


# (model, results record, rule: None for the model's default)
SHIPPED = [("qwen2.5-coder-1.5b-instruct-q4_k_m", "tables-98", None),
           ("qwen2.5-coder-1.5b-instruct-q4_k_m", "tables-98-candidates", "default+candidates"),
           ("qwen2.5-coder-0.5b-instruct-q4_k_m", "heads-98-0.5b-before-74", None)]  # fmt: skip


@pytest.mark.parametrize(("lm", "record", "rule"), SHIPPED)
def test_the_shipped_rules_rebuild_from_their_records(lm, record, rule, tmp_path):
    """Each model's shipped default (and a rule shipped beside it) carries the held-out
    figures of the results record that measured it: refreshed from that record
    (``fscore ship-rule --refresh``), the shipped defaults stay as they are, byte for byte.
    After a record is re-recorded, that command brings them up to date."""
    from pathlib import Path

    from factscore_local.fitted_defaults import MODEL_DEFAULTS_PATH

    results = Path(__file__).resolve().parents[1] / "scripts" / "results" / f"{record}.json"
    copy = tmp_path / "model-defaults.json"
    copy.write_bytes(MODEL_DEFAULTS_PATH.read_bytes())
    ship.refresh_rule(json.loads(results.read_text("utf-8")), lm, rule, copy)
    assert copy.read_text("utf-8") == MODEL_DEFAULTS_PATH.read_text("utf-8")
