"""The LM as a protocol with declared capabilities, and the run's plan built from the rule's
signal providers (``lm/protocol.py``, ``pipeline/plan.py``)."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from factscore_local.config import EvalConfig
from factscore_local.lm.protocol import (
    GENERATION,
    HIDDEN_STATES,
    IN_PROCESS,
    LM,
    NEXT_TOKEN,
    PROMPT_LOGPROBS,
    STREAMED_GENERATION,
)
from factscore_local.pipeline.plan import PlanError, RunPlan, plan_for, plan_run

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = ("factscore_local", "npm", "index")
# What code once asked an LM object (or an NP scorer) whether it had: now declared.
PROBED = {"streams_generation", "default_dtype", "check_run", "cache_identity", "fingerprint",
          "probabilities", "prompt_logprobs", "device", "backend", "capabilities", "url",
          "keep_prefix_states", "dtype"}  # fmt: skip


def probes(path: Path, root: Path = ROOT) -> list[str]:
    """hasattr/getattr calls of a source file that ask for one of the LM's members."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr") and len(node.args) >= 2):  # fmt: skip
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in PROBED:
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.func.id} {name.value}")
    return found


def test_no_capability_probe_on_an_lm_is_left_in_the_package():
    found = [hit for folder in PACKAGE_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             for hit in probes(path)]  # fmt: skip
    assert found == []


def test_the_probe_finder_finds_a_probe(tmp_path):
    source = tmp_path / "x.py"
    source.write_text("def f(lm):\n    return getattr(lm, 'device', 'cpu')\n")
    assert probes(source, tmp_path) == ["x.py:2 getattr device"]


def test_the_server_implements_the_protocol_not_the_in_process_base():
    from factscore_local.lm.base import LocalLM
    from factscore_local.lm.hf_backend import HFCausalLM
    from factscore_local.lm.llama_backend import LlamaCppLM
    from factscore_local.lm.server_backend import ServerLM

    assert not issubclass(ServerLM, LocalLM)
    assert issubclass(LlamaCppLM, LocalLM) and issubclass(HFCausalLM, LocalLM)
    for cls in (ServerLM, LlamaCppLM, HFCausalLM):
        missing = [m for m in protocol_members() if not hasattr(cls, m)
                   and m not in _SET_IN_INIT]  # fmt: skip
        assert missing == [], cls
    assert LlamaCppLM.capabilities == IN_PROCESS | {STREAMED_GENERATION, "stored prefix states"}
    assert HFCausalLM.capabilities == IN_PROCESS


def protocol_members() -> list[str]:
    """The names the ``LM`` protocol declares: its methods and its annotated attributes."""
    methods = [n for n, v in vars(LM).items() if callable(v) and not n.startswith("_")]
    return [*methods, *LM.__annotations__]


# Protocol members the classes set per instance (in __init__), not as class attributes.
_SET_IN_INIT = {"name", "stats", "read_states", "last_states", "capabilities", "model_name",
                "path"}  # fmt: skip


def labeled(**settings) -> EvalConfig:
    return EvalConfig(index=Path("."), use_atomic_facts=True, **settings)


def test_the_plan_names_each_pass_and_what_it_needs_of_the_lm():
    plan = plan_run(labeled(verifier="default"))
    assert plan.rule == "default" and not plan.generates
    assert set(plan.passes) == {"judged_margins", "statement_p", "own_passages"}
    assert plan.needs == {NEXT_TOKEN: ("judged_margins",), PROMPT_LOGPROBS: ("statement_p",)}
    # raw text adds the generation; a head rule the hidden states; rivals their margins
    assert plan_run(replace(labeled(), use_atomic_facts=False)).generates
    assert HIDDEN_STATES in plan_for("default+head").capabilities
    assert plan_for("default+head").head and not plan.head
    assert plan_for("default+rivals").needs[NEXT_TOKEN] == ("judged_margins", "rivals")
    # the causal NP scorer reads prompt log-probabilities; the MiniLM scorer no LM at all
    assert plan_run(labeled(verifier="np", np_model="lm")).capabilities == {PROMPT_LOGPROBS}
    assert not plan_run(labeled(verifier="np", np_model="minilm")).loads_lm
    assert not plan_for("always-supported").loads_lm
    assert plan_run(labeled(read_states=True, verifier="retrieve-lm")).needs[HIDDEN_STATES] == (
        "read_states",
    )


class _Server:
    """An LM that declares what a server without prompt log-probabilities gives."""

    capabilities = frozenset({GENERATION, NEXT_TOKEN})
    model_name = "some-model"

    def describe(self) -> str:
        return "the LM server at http://127.0.0.1:9/v1 (some-model)"


def test_the_plan_check_names_what_is_missing_and_the_rules_that_would_run():
    plan = plan_for("default")
    with pytest.raises(PlanError) as caught:
        plan.check(_Server())
    message = str(caught.value)
    assert message.startswith("the rule default needs what the LM server at http://127.0.0.1:9")
    assert "prompt log-probabilities (for NP read from the verification pass)" in message
    assert "rules it can run: retrieve-lm, no-context-lm" in message
    assert "default+head" not in message.split("rules it can run")[1]
    plan_for("retrieve-lm").check(_Server())  # nothing missing: no error
    assert RunPlan("x", (), ()).missing(frozenset()) == []


def test_the_run_says_which_fitted_rule_it_applies_and_why(tmp_path):
    """The record's rule entry: the model a rule was fitted for, and whether the LM's
    weights are that model's by sha256 (a server's only where it names them here)."""
    from factscore_local.cli.output import rule_line
    from factscore_local.config import build_config
    from factscore_local.fitted_defaults import rule_entry
    from factscore_local.model_store import EMBEDDED_MODELS, SMALL_LM

    config = build_config({"index": tmp_path, "lm": SMALL_LM})
    sha = EMBEDDED_MODELS[SMALL_LM].sha256
    same = rule_entry(config, {"sha256": sha + "0" * (64 - len(sha))})
    assert (same["name"], same["fitted_for"], same["weights"]) == ("default", SMALL_LM, "same")
    assert rule_line(same) == f"default, fitted for {SMALL_LM} (the same weights, by sha256)"
    assert rule_entry(config, {"sha256": "f" * 64})["weights"] == "other"
    # a server under the embedded name, serving weights this machine cannot see
    served = {"sha256": sha, "served_sha256": None, "backend": "server"}
    assert rule_entry(config, served)["weights"] == "not checked"
    assert "could not be checked" in rule_line(rule_entry(config, served))
    mine = build_config({"index": tmp_path, "lm": str(tmp_path / "my-model.gguf")})
    entry = rule_entry(mine, {"sha256": "f" * 64})
    assert entry["fitted_for"] is None and entry["name"] == "retrieve-lm"
    assert rule_line(entry) == "retrieve-lm, thresholds from built-in defaults"


class _Served:
    model_name = "qwen2.5-coder-0.5b-instruct-q4_k_m"

    def __init__(self, served_sha256: str | None) -> None:
        self.served = served_sha256

    def describe(self) -> str:
        return "the LM server at http://127.0.0.1:9/v1 (qwen)"

    def fingerprint(self, cache) -> dict:
        return {"sha256": None, "served_sha256": self.served, "backend": "server"}


def test_a_run_warns_in_one_line_when_its_rule_is_not_its_lms(tmp_path, capsys):
    from factscore_local.config import build_config
    from factscore_local.declarations.verifiers import get_verifier
    from factscore_local.pipeline.plan import warn_unfitted

    def said(config, lm) -> str:
        warn_unfitted(config, get_verifier(config.verifier), lm, None)
        return capsys.readouterr().err

    unfitted = build_config({"index": tmp_path, "lm": "http://127.0.0.1:9/v1",
                             "lm_model": "my-own-model"})  # fmt: skip
    line = said(unfitted, _Served(None))
    assert line.startswith("warning: no rule is fitted for qwen") and line.count("\n") == 1
    assert "fscore calibrate --lm http://127.0.0.1:9/v1" in line and "margin 0" in line
    fitted = build_config({"index": tmp_path, "lm": "http://127.0.0.1:9/v1",
                           "lm_model": "qwen2.5-coder-0.5b-instruct-q4_k_m"})  # fmt: skip
    assert said(fitted, _Served(None)).startswith("note: the rule default fitted for qwen")
    assert said(fitted, _Served("f" * 64)).startswith("warning: the LM server at")
    from factscore_local.model_store import EMBEDDED_MODELS

    assert said(fitted, _Served(EMBEDDED_MODELS[_Served.model_name].sha256)) == ""
    given = build_config({"index": tmp_path, "lm": "http://127.0.0.1:9/v1",
                          "lm_model": "my-own-model", "margin": 0.5})  # fmt: skip
    assert said(given, _Served(None)) == ""  # a threshold given: the user's choice
