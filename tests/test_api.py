"""The Python API: the README's quick start run exactly as written (marker: slow), and the
API giving what ``fscore eval`` gives, without a language model."""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, fields
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import factscore_local
from factscore_local.api import build_index, evaluate, read_generations, validate
from factscore_local.cli import main
from factscore_local.config import SETTING_FIELDS, EvalConfig
from factscore_local.data import data_file
from tests.conftest import EXCERPT, ROOT, SHARED, require, require_model

LABELED = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
LM_FREE = ["--use-atomic-facts", "--verifier", "random", "--seed", "3", "--n-samples", "4"]


def quickstart() -> str:
    """The fenced Python block between the README's api-quickstart markers."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(
        r"<!-- api-quickstart -->\s*```python\n(.*?)```\s*<!-- /api-quickstart -->", readme, re.S
    )
    assert found, "README.md has no ```python block between the api-quickstart markers"
    return found.group(1)


@pytest.mark.heavy  # a minute (a whole page read by the 0.5B); the API's other tests run in CI
def test_readme_quickstart_runs_as_written(tmp_path, monkeypatch, capsys):
    """Build a tiny index from the real dump excerpt as my-index, write a one-bio
    bios.jsonl, then run the README's snippet there as written (the embedded default LM,
    the one the README's first command installs)."""
    from factscore_local.model_store import DEFAULT_LM

    code = quickstart()
    require_model(DEFAULT_LM)
    build_index(require(EXCERPT), tmp_path / "my-index", dense=None, bm25=False, progress=False)
    bio = data_file("demo_bios.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "bios.jsonl").write_text(bio + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md:api-quickstart", "exec"), {"__name__": "__readme__"})
    printed = capsys.readouterr().out
    score = re.search(r"FActScore: ([\d.]+)%", printed)
    assert score, printed
    assert 0.0 <= float(score.group(1)) <= 100.0
    assert (tmp_path / "my-index" / "eval-cache.db").is_file()  # the CLI's default cache


@pytest.fixture
def no_language_model(monkeypatch):
    """Fail loudly if anything here tries to load an LM."""
    import factscore_local.lm as lm_module

    def refuse(*args, **kwargs):
        raise AssertionError("a language model was loaded in an LM-free test")

    monkeypatch.setattr(lm_module, "load_lm", refuse)


def test_evaluate_gives_what_fscore_eval_gives(db_index, tmp_path, no_language_model):
    """Same input and settings: the API's summary is the CLI's --json line, and its rows
    are the CLI's --out lines; dicts give the same scores as their file."""
    src = require(LABELED)
    args = ["eval", "--index", str(db_index), "--input", str(src), "--json", "--quiet"]
    args += [*LM_FREE, "--cache", str(tmp_path / "c.db"), "--out", str(tmp_path / "cli.jsonl")]
    cli = CliRunner().invoke(main, args)
    assert cli.exit_code == 0, cli.output
    result = evaluate(
        src, db_index, out=tmp_path / "api.jsonl", cache=tmp_path / "c.db", n_samples=4,
        use_atomic_facts=True, verifier="random", seed=3,
    )  # fmt: skip
    assert result.to_json() == json.loads(cli.stdout)
    assert result.validation is not None and "error_rate" in result.validation["pooled"]
    assert [r.to_json() for r in result.rows] == [
        json.loads(line) for line in (tmp_path / "cli.jsonl").read_text().splitlines()
    ]
    assert result.record and (tmp_path / "api.jsonl.record.json").is_file()
    assert result.score == result.summary["score"] and result.facts_per_response > 0

    lines = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines()[:4]]
    from_dicts = evaluate(lines, db_index, cache=tmp_path / "c.db", use_atomic_facts=True,
                          verifier="random", seed=3)  # fmt: skip
    assert from_dicts.summary == result.summary
    figures = validate(lines, db_index, cache=tmp_path / "c.db", use_atomic_facts=True,
                       verifier="random", seed=3)  # fmt: skip
    assert figures["pooled"] == result.validation["pooled"]


def test_bad_calls_say_what_is_wrong(tmp_path):
    pages = tmp_path / "pages.jsonl"
    pages.write_text(json.dumps({"title": "A", "text": "A is a letter."}) + "\n")
    index = tmp_path / "idx"
    manifest = build_index(pages, index, dense="none", bm25=False, progress=False)
    assert manifest["counts"]["pages"] == 1
    with pytest.raises(FileNotFoundError, match="not an index directory"):
        evaluate([{"topic": "A", "output": "B."}], tmp_path)
    with pytest.raises(ValueError, match="unknown setting"):
        evaluate([{"topic": "A", "output": "B."}], index, colour="blue")
    with pytest.raises(ValueError, match="evidence must be one of"):
        evaluate([{"topic": "A", "output": "B."}], index, evidence="everything")
    with pytest.raises(TypeError, match="generations"):
        read_generations(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown build option"):
        build_index(pages, tmp_path / "other", colour="blue")
    bios, paths = read_generations([{"topic": "Ada Lovelace"}, {"topic": "X", "output": "Y."}])
    assert paths == [] and "missing" in bios[0].error and bios[1].output == "Y."


def test_api_is_exported_lazily():
    for name in ("evaluate", "build_index", "validate", "calibrate", "EvalResult"):
        assert name in factscore_local.__all__ and callable(getattr(factscore_local, name))
    with pytest.raises(AttributeError):
        _ = factscore_local.no_such_name


CLI_EXTENDS = ("lm", "verifier")


def test_each_setting_help_is_written_once():
    """Every setting offered by fscore eval takes its help, default and choices from
    EvalConfig's declaration."""
    command = main.commands["eval"]
    ctx = click.Context(command)
    params = {p.name: p for p in command.params}
    for field in fields(EvalConfig):
        meta = SETTING_FIELDS[field.name].metadata
        if meta.get("cli") is False:
            assert field.name not in params
            continue
        param = params[field.name]
        if field.name in CLI_EXTENDS:  # the CLI adds the embedded names, the rule list
            assert meta["help"] in param.help, field.name
        elif not meta["help"]:  # the few settings without one get the CLI's (every option has)
            assert param.help, field.name
        elif field.name != "margin":  # (its CLI help says what a cut means for a fitted rule)
            assert param.help == meta["help"], field.name
        if field.default is MISSING:
            assert param.required, field.name
        else:
            assert param.get_default(ctx) == field.default, field.name
        if "choices" in meta:
            assert isinstance(param.type, click.Choice), field.name
    assert params["device"].default == "auto" and "--device" in params["device"].opts
    assert "--device" in [o for p in main.commands["build-index"].params for o in p.opts]


def test_python_m_runs_the_cli():
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "factscore_local.cli", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "build-index" in proc.stdout
    assert Path(factscore_local.__file__).parent.joinpath("cli", "__main__.py").is_file()
