"""Using another verifier LM (docs/guide/other-lm.md): the page's commands name options that
exist and rules by their current names; ``fscore verifiers --lm`` says what eval applies,
and that no rule is fitted for a model without one; the page's calibration example, run as
written on a slice of the dev data with the real 0.5B under a name no rule is shipped for,
writes a settings file whose weights ``fscore eval --settings`` applies."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from factscore_local.cli import main as fscore
from factscore_local.config import build_config
from factscore_local.declarations.verifiers import get_verifier, list_rules
from factscore_local.model_store import SMALL_LM
from factscore_local.results import thresholds_of
from tests.conftest import SHARED, require, require_model

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "other-lm.md"
PAGES = (PAGE, ROOT / "docs" / "guide" / "validate.md")
DEV = SHARED / "factscore" / "labeled-dev"
SUBJECTS = ("InstructGPT", "ChatGPT", "PerplexityAI")


def bash_blocks(page: Path) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", page.read_text("utf-8"), re.DOTALL)


def fscore_commands(block: str) -> list[list[str]]:
    """The ``fscore`` command lines of a block (continuations joined, comments dropped),
    split as the shell splits them, with $VARIABLES left as they are."""
    joined = re.sub(r"\\\n\s*", " ", block)
    lines = [shlex.split(line, comments=True) for line in joined.splitlines()]
    return [words[1:] for words in lines if words[:1] == ["fscore"]]


def calibration_block() -> str:
    return next(b for b in bash_blocks(PAGE) if "fscore calibrate --lm" in b)


def test_the_pages_commands_parse_and_name_current_rules():
    names = {rule.name for rule in list_rules(everything=True)}
    seen = []
    for page in PAGES:
        for block in bash_blocks(page):
            for words in fscore_commands(block):
                command = fscore.get_command(click.Context(fscore), words[0])
                assert command is not None, (page.name, words)
                # every option exists and takes what it is given (click parses, no run)
                command.make_context(words[0], list(words[1:]), resilient_parsing=False)
                for at, word in enumerate(words[:-1]):
                    if word == "--verifier":
                        assert words[at + 1] in names, (page.name, words[at + 1])
                seen.append(words[0])
    assert {"calibrate", "verifiers", "eval"} <= set(seen)
    calibrate = fscore_commands(calibration_block())[0]
    assert calibrate[calibrate.index("--out") + 1] == "my-lm.json"
    assert fscore_commands(calibration_block())[-1][:1] == ["eval"]


def test_the_docs_name_rules_by_their_current_names():
    """Every ``--verifier X`` of the README and the docs' own pages is a rule's current
    name (an earlier name still works, but a reader copies what the docs show)."""
    names = {rule.name for rule in list_rules(everything=True)} | {"NAME"}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("[!b]*/*.md"))]
    found = {(page.name, m) for page in pages
             for m in re.findall(r"--verifier[ =]([\w+.-]+)", page.read_text("utf-8"))}  # fmt: skip
    assert found and {(page, name) for page, name in found if name not in names} == set()


def test_verifiers_says_no_rule_is_fitted_for_an_unknown_model(tmp_path):
    result = CliRunner().invoke(fscore, ["verifiers", "--lm", str(tmp_path / "my-lm.gguf")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    expected = build_config({"index": tmp_path, "lm": str(tmp_path / "my-lm.gguf")})
    assert expected.verifier == "retrieve-lm"  # what eval decides with: no rule fitted
    assert lines[0] == "fscore eval applies to my-lm: retrieve-lm (built-in defaults)"
    assert lines[1] == f"  margin > {expected.thresholds.margin:g}"
    assert lines[2].startswith("no rule is fitted for my-lm: ") and "fscore calibrate" in lines[2]
    assert "Using another verifier LM" in lines[2]  # the page's title:
    assert PAGE.read_text("utf-8").startswith("# Using another verifier LM\n")
    assert "retrieve-lm (what eval applies)" in result.output


def test_verifiers_names_the_shipped_rule_and_weights_eval_applies(tmp_path):
    result = CliRunner().invoke(fscore, ["verifiers", "--lm", SMALL_LM, "--json"])
    assert result.exit_code == 0, result.output
    applies = json.loads(result.output.splitlines()[0])["applies"]
    config = build_config({"index": tmp_path, "lm": SMALL_LM})
    assert applies["rule"] == config.verifier and applies["fitted"]
    assert applies["thresholds"] == json.loads(json.dumps(thresholds_of(config)))
    assert set(applies["thresholds"]["rule_weights"]) == {
        "bias",
        *get_verifier(config.verifier).features,
    }
    first_rule = json.loads(result.output.splitlines()[1])
    assert first_rule["name"] == config.verifier and first_rule["default"]


# --- the page's example, end to end (slow) ------------------------------------------


def _slice(out: Path, n_topics: int = 1, n_sentences: int = 1) -> list[str]:
    """The three labeled dev files cut to the first topics all three answered, each bio to
    its first sentences (written under FActScore's file names)."""
    files = {s: [json.loads(x) for x in require(DEV / f"{s}.jsonl").read_text("utf-8").splitlines()]
             for s in SUBJECTS}  # fmt: skip
    answered = [{r["topic"] for r in rows if r["annotations"]} for rows in files.values()]
    order = [r["topic"] for r in files["ChatGPT"]]
    topics = [t for t in order if all(t in a for a in answered)][:n_topics]
    out.mkdir()
    for subject, rows in files.items():
        kept = [r for r in rows if r["topic"] in topics]
        for row in kept:
            row["annotations"] = row["annotations"][:n_sentences]
            row["output"] = " ".join(s["text"] for s in row["annotations"])
        (out / f"{subject}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), "utf-8"
        )
    return topics


@pytest.mark.slow
def test_the_pages_calibration_example_runs_and_eval_applies_its_weights(db_index, tmp_path):
    model = require_model(SMALL_LM)
    lm = tmp_path / "my-lm.gguf"  # the real 0.5B under a name no rule is shipped for
    lm.symlink_to(model)
    topics = _slice(tmp_path / "labeled")
    chatgpt = [
        json.loads(x) for x in (tmp_path / "labeled" / "ChatGPT.jsonl").read_text().splitlines()
    ]
    (tmp_path / "bios.jsonl").write_text("".join(  # the generations to score: one sentence
        json.dumps({"topic": r["topic"], "output": r["annotations"][0]["text"]}) + "\n"
        for r in chatgpt))  # fmt: skip
    values = {"LM": str(lm), "IDX": str(db_index), "D": str(tmp_path / "labeled")}
    block = calibration_block()
    for name, value in values.items():  # the page's settings, given this test's values
        block, n = re.subn(rf"^{name}=.*$", f"{name}={shlex.quote(value)}", block, flags=re.M)
        assert n == 1, name
    # each command's stderr opens with a mark, so that what eval said can be told apart
    run = 'fscore() { echo "== fscore $1" >&2; "$PY" -m factscore_local.cli "$@"; }'
    script = f"set -euo pipefail\n{run}\n{block}"
    env = {**os.environ, "PY": sys.executable}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=3600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]

    settings = json.loads((tmp_path / "my-lm.json").read_text())
    weights = settings["rule_weights"]
    assert settings["verifier"] == "default" and settings["n_bios"] == len(topics) * 3
    assert set(weights) == {"bias", *get_verifier("default").features}
    shown = ", ".join(f"{n} {w:+.4f}" for n, w in weights.items())
    out = done.stdout
    # fscore verifiers: what eval applies with the settings file, its weights
    assert "fscore eval applies to my-lm: default (settings file)" in out
    assert f"  weights: {shown}" in out and "no rule is fitted" not in out
    # fscore eval: the summary and the run record say the weights came from the file
    assert f"thresholds: weights {shown} (settings file)" in out
    assert "rule: default, thresholds from settings file" in out
    said = dict(part.split("\n", 1) for part in done.stderr.split("== fscore ")[1:])
    assert list(said) == ["calibrate", "verifiers", "eval"]
    assert "no rule is fitted" not in said["eval"] and "warning" not in said["eval"]
    assert "no rule is fitted" not in said["calibrate"]  # fitting one: nothing to warn of
    record = json.loads((tmp_path / "scored.jsonl.record.json").read_text())
    assert record["rule"] == {"name": "default", "thresholds_from": "settings file",
                              "fitted_for": None, "weights": None}  # fmt: skip
    assert list(record["settings"]["rule_weights"]) == pytest.approx(
        list(get_verifier("default").weights_from(weights))
    )
    rows = [json.loads(x) for x in (tmp_path / "scored.jsonl").read_text().splitlines()]
    assert [r["topic"] for r in rows] == topics and all(r["decisions"] for r in rows)
