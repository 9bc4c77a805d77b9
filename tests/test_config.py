"""Settings declared once: build_config validates, settings files fill what was not given,
and the estimator never changes its config."""

from __future__ import annotations

import dataclasses

import pytest

from factscore_local.config import DEFAULTS, EvalConfig, build_config
from factscore_local.npm.defaults import default_np_threshold


def test_defaults_come_from_one_place(tmp_path):
    config = build_config({"index": tmp_path, "lm": "/models/a-model-without-defaults.gguf"})
    for name, value in DEFAULTS.items():
        assert getattr(config, name) == value or name == "lm"
    assert config.thresholds.np == default_np_threshold(None)


def test_the_default_model_brings_its_fitted_rule(tmp_path):
    """The embedded 1.5B model decides with the rule fitted for it, unless a verifier is
    asked for; a cut given with the fitted rule is refused, not a silent switch."""
    from factscore_local.declarations.verifiers import get_verifier
    from factscore_local.fitted_defaults import default_rule, model_defaults, shipped_rule

    config = build_config({"index": tmp_path})
    assert default_rule(None) == "default" and config.verifier == "default"
    shipped = model_defaults(None)["rules"]["default"]["weights"]
    rule = get_verifier("default")
    assert list(shipped) == ["bias", *rule.features]  # keyed by feature name
    assert config.rule_weights == tuple(shipped.values())
    assert "fitted defaults" in config.thresholds_from
    # Every rule shipped for the model brings its own weights, by any of its names.
    for name in model_defaults(None)["rules"]:
        weights = shipped_rule(None, name).settings["rule_weights"]
        assert build_config({"index": tmp_path, "verifier": name}).rule_weights == weights
        for alias in get_verifier(name).aliases:
            assert build_config({"index": tmp_path, "verifier": alias}).rule_weights == weights
    with pytest.raises(ValueError, match="--margin cut a threshold rule.*'default'"):
        build_config({"index": tmp_path, "margin": 0.5})
    margin = build_config({"index": tmp_path, "margin": 0.5, "verifier": "retrieve-lm"})
    assert margin.thresholds.margin == 0.5
    chosen = build_config({"index": tmp_path, "verifier": "retrieve-lm+np"})
    assert get_verifier(chosen.verifier).name == "paper" and chosen.rule_weights is None
    # The CLI passes its option defaults too; only those on the command line are choices.
    cli = build_config({"index": tmp_path, "verifier": "retrieve-lm", "margin": 0.0},
                       explicit=set())  # fmt: skip
    assert cli.verifier == "default"


def test_shipped_weights_are_checked_by_feature_name():
    """A shipped rule whose weights name a feature the rule does not read (renamed in code,
    say) fails on load, naming the rule and the features; so does another schema."""
    import copy
    import json

    from factscore_local.fitted_defaults import MODEL_DEFAULTS_PATH, check_defaults

    table = json.loads(MODEL_DEFAULTS_PATH.read_text("utf-8"))
    check_defaults(table)  # the shipped file loads
    renamed = copy.deepcopy(table)
    rule = renamed["models"]["qwen2.5-coder-1.5b-instruct-q4_k_m"]["rules"]["default"]
    rule["weights"]["slot conflict"] = rule["weights"].pop("slot_conflict")
    with pytest.raises(ValueError, match="default.*slot conflict.*slot_conflict"):
        check_defaults(renamed)
    with pytest.raises(ValueError, match="schema"):
        check_defaults({**table, "schema": 1})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"passage_order": "random"}, "passage_order must be one of"),
        ({"decompose_prompt": "theirs"}, "decompose_prompt must be one of"),
        ({"retrieval": "tfidf"}, "retrieval must be one of"),
        ({"abstain": "sometimes"}, "abstain must be one of"),
        ({"k": 0}, "k must be at least 1"),
        ({"gamma": -1}, "gamma"),
        ({"verifier": "oracle"}, "unknown verifier"),
        ({"colour": "blue"}, "unknown setting"),
    ],
)
def test_unknown_values_are_errors(tmp_path, options, message):
    with pytest.raises(ValueError, match=message):
        build_config({"index": tmp_path, **options})


def test_settings_fill_what_was_not_given_explicitly(tmp_path):
    settings = {"verifier": "retrieve-lm+np", "margin": 1.5, "np_threshold": 0.2}
    config = build_config({"index": tmp_path, "margin": 0.0}, settings, explicit=set())
    assert (config.verifier, config.margin, config.np_threshold) == ("retrieve-lm+np", 1.5, 0.2)
    given = build_config({"index": tmp_path, "margin": 0.7}, settings, explicit={"margin"})
    assert given.margin == 0.7 and given.np_threshold == 0.2


def test_config_is_frozen(tmp_path):
    config = EvalConfig(index=tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.np_threshold = 0.5  # type: ignore[misc]


def test_an_embedded_model_brings_its_fitted_thresholds(tmp_path):
    """The 0.5B model decides with the 1.5B's default rule, weighted for it; asked for
    ``retrieve-lm``, its margins (which sit below 0) get their fitted margin; an explicit
    option or a settings file still wins."""
    from factscore_local.fitted_defaults import model_defaults, shipped_rule
    from factscore_local.model_store import DEFAULT_LM, SMALL_LM

    small = shipped_rule(SMALL_LM, "retrieve-lm").settings["margin"]
    assert small < 0
    assert shipped_rule(DEFAULT_LM, "retrieve-lm") is None  # margin 0 measured there
    assert model_defaults(None) == model_defaults(DEFAULT_LM)
    weights = shipped_rule(SMALL_LM, "default").settings["rule_weights"]
    assert weights != shipped_rule(DEFAULT_LM, "default").settings["rule_weights"]
    config = build_config({"index": tmp_path, "lm": SMALL_LM})
    assert config.verifier == "default"
    assert config.rule_weights == weights and "fitted defaults" in config.thresholds_from
    path_spec = build_config({"index": tmp_path, "lm": f"/models/{SMALL_LM}.gguf"})
    assert path_spec.rule_weights == weights  # a local copy of the same file
    margin = build_config({"index": tmp_path, "lm": SMALL_LM, "verifier": "retrieve-lm"})
    assert margin.margin == small and "fitted defaults" in margin.thresholds_from
    explicit = build_config({"index": tmp_path, "lm": SMALL_LM, "verifier": "retrieve-lm",
                             "margin": 0.5})  # fmt: skip
    assert explicit.margin == 0.5 and explicit.thresholds_from == "options"
    settings = {"verifier": "retrieve-lm", "margin": 0.25, "np_threshold": 0.3}
    from_file = build_config({"index": tmp_path, "lm": SMALL_LM}, settings, explicit=set())
    assert from_file.margin == 0.25 and from_file.thresholds_from == "settings file"
    other = build_config({"index": tmp_path, "lm": SMALL_LM, "verifier": "no-context-lm"})
    assert other.margin == 0.0  # fitted for the retrieved-evidence margin only


def test_np_stopwords_only_for_a_masked_lm(tmp_path):
    from factscore_local.config import EvalConfig

    ids = tmp_path / "stop.txt"
    ids.write_text("4\n6\n", "utf-8")
    assert EvalConfig(index=tmp_path, np_model="minilm", np_stopwords=ids).np_stopwords == ids
    with pytest.raises(ValueError, match="masked LM"):
        EvalConfig(index=tmp_path, np_stopwords=ids)  # the default NP scorer is the causal LM


def test_each_setting_declares_its_help_and_choices(tmp_path):
    """The help of every setting lives in its field (the CLI options are built from it), and
    a field's declared choices are what EvalConfig accepts."""
    from factscore_local.config import SETTING_FIELDS, setting_choices

    offered_without_help = {"backend", "retrieval", "abstain"}  # as before: choices say it
    for name, field in SETTING_FIELDS.items():
        assert field.metadata["help"] or name in offered_without_help, name
    assert setting_choices("evidence") == ("per-fact", "shared", "page", "auto")
    assert "retrieve-lm" in setting_choices("verifier")
    assert setting_choices("k") is None
    with pytest.raises(ValueError, match="verify_format must be one of chat, plain"):
        EvalConfig(index=tmp_path, verify_format="markdown")


def test_a_shipped_raw_text_shift_moves_the_bias_of_own_facts_only(tmp_path, monkeypatch):
    """A model's raw-text shift is added to its shipped rule's bias when the facts come from
    the own decomposition, not with --use-atomic-facts, and not to weights given otherwise."""
    import copy

    from factscore_local import fitted_defaults

    models = copy.deepcopy(fitted_defaults._models())
    rule = models["qwen2.5-coder-1.5b-instruct-q4_k_m"]["rules"]["default"]
    rule["raw_text_shift"] = 0.25
    monkeypatch.setattr(fitted_defaults, "_models", lambda: models)
    bias, *rest = rule["weights"].values()
    raw = build_config({"index": tmp_path})
    assert raw.raw_text_shift == 0.25
    assert raw.thresholds.weights == pytest.approx((bias + 0.25, *rest))
    labeled = build_config({"index": tmp_path, "use_atomic_facts": True})
    assert labeled.thresholds.weights == pytest.approx((bias, *rest))
    own_weights = tuple(w + 1 for w in rule["weights"].values())
    given = build_config({"index": tmp_path}, {"rule_weights": list(own_weights)})
    assert given.raw_text_shift == 0 and given.thresholds.weights == own_weights


def test_each_settings_choices_are_what_its_stage_implements():
    """The choices are declared apart from the stages (``factscore_local.declarations``; the
    settings load no stage): the stages read the same values."""
    from factscore_local.config import setting_choices
    from factscore_local.pipeline.decomposition import abstain
    from factscore_local.pipeline.evidence import blocks
    from factscore_local.pipeline.signals import verify_prompt

    assert setting_choices("abstain") == abstain.ABSTAIN_RULES
    for rule in abstain.ABSTAIN_RULES:
        abstain.is_abstained("A bio.", rule)
    assert setting_choices("evidence") == blocks.EVIDENCE_MODES
    assert setting_choices("verify_question") == tuple(verify_prompt.QUESTIONS)
    for question in verify_prompt.QUESTIONS:
        assert verify_prompt.statement_line("A fact.", question=question)
