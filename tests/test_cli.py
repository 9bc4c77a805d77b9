"""The fscore command line on a small source."""

from __future__ import annotations

import html
import json
import re

import click
import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.index.demo_data import EXCERPT, find_dump
from tests.conftest import ROOT, require_model


def test_build_lookup_search(tmp_path):
    src = tmp_path / "pages.jsonl"
    src.write_text(
        json.dumps(
            {
                "title": "Grace Hopper",
                "text": [
                    "Grace Hopper Grace Brewster Hopper was an American computer scientist "
                    "and US Navy rear admiral.",
                    "Career. She led the team that created the first compiler.",
                ],
            }
        )
        + "\n"
        + json.dumps({"title": "Grace Hopper", "text": "duplicate"})
        + "\n"
    )
    out = tmp_path / "idx"
    runner = CliRunner()
    result = runner.invoke(
        main,
        ["build-index", "--source", str(src), "--out", str(out), "--dense", "none", "--quiet",
         "--device", "cpu"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 pages" in result.output and "duplicate title" in result.output
    result = runner.invoke(main, ["lookup", "--index", str(out), "grace hopper", "--json"])
    page = json.loads(result.output)
    assert page["title"] == "Grace Hopper" and page["via"] == "case-insensitive"
    assert page["passages"][0].startswith("<s>Grace Hopper Grace Brewster Hopper")
    result = runner.invoke(main, ["search", "--index", str(out), "first compiler"])
    assert result.exit_code == 0 and "Grace Hopper" in result.output
    result = runner.invoke(main, ["lookup", "--index", str(out), "Grase Hoper"])
    assert result.exit_code == 2 and "Did you mean: Grace Hopper" in result.output
    result = runner.invoke(main, ["lookup", "--index", str(tmp_path / "none"), "X"])
    assert result.exit_code == 2 and "not an index directory" in result.output


def test_demo_data_found():
    try:
        path = find_dump(download=False)
    except FileNotFoundError:
        pytest.skip("no shared/data and no cached excerpt on this machine")
    assert path.name == EXCERPT and path.stat().st_size > 1_000_000


@pytest.mark.slow
@pytest.mark.heavy  # minutes (an index with dense leads, two bios decomposed and judged)
def test_demo_runs_end_to_end_with_the_small_model(tmp_path):
    """``fscore demo`` with the 0.5B model: the index, the lookup, the dense search and every
    demo bio scored, each fact printed with its decision and margin."""
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    try:
        find_dump(download=False)
    except FileNotFoundError:
        pytest.skip("no shared/data and no cached excerpt on this machine")
    out = tmp_path / "demo-index"
    result = CliRunner().invoke(main, ["demo", "--out", str(out), "--lm", SMALL_LM])
    assert result.exit_code == 0, result.output
    assert "lookup 'albert einstein' -> Albert Einstein" in result.output
    assert "dense search over the pages' leads ->" in result.output
    for topic in ("Albert Einstein", "Abraham Lincoln"):
        assert f"  {topic}: " in result.output
    assert re.search(r"demo: 2 bios, \d+ facts scored in [\d.]+s", result.output)
    decided = [line for line in result.output.splitlines() if line.startswith("     [")]
    assert decided and all("(margin " in line for line in decided)
    rows = [json.loads(x) for x in (out / "demo_bios.scored.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r.get("n_facts") for r in rows)


PLANTED = ("in 1885", "in Literature", "British", "in Ohio")  # data/README.md


def planted_errors(atom: str) -> set[str]:
    """The planted errors a fact states."""
    return {p for p in PLANTED if p.lower() in atom.lower()}


@pytest.mark.slow
def test_the_demo_rejects_its_planted_statements_with_the_default(xml_index, tmp_path):
    """The demo's bios with the embedded 1.5B model and its default rule, replayed from the
    model results of a recorded demo run (``scripts/cache/demo-1.5b.jsonl.gz``; a prompt
    that changed is computed afresh): every fact that states a planted error is rejected,
    and every other fact is accepted."""
    from factscore_local.api import evaluate
    from factscore_local.data import data_file
    from factscore_local.model_store import DEFAULT_LM
    from factscore_local.runtime.cache import ResultCache

    require_model(DEFAULT_LM)
    cache = tmp_path / "demo-cache.db"
    ResultCache(cache).import_file(ROOT / "scripts" / "cache" / "demo-1.5b.jsonl.gz")
    result = evaluate(data_file("demo_bios.jsonl"), xml_index, cache=cache)
    decisions = [d for row in result.rows for d in row.decisions]
    assert len(result.rows) == 2 and all(row.ok for row in result.rows)
    planted = [d for d in decisions if planted_errors(d.atom)]
    assert set().union(*(planted_errors(d.atom) for d in planted)) == set(PLANTED)
    assert not any(d.is_supported for d in planted), [d.atom for d in planted]
    rejected = [d.atom for d in decisions if d not in planted and not d.is_supported]
    assert not rejected, rejected
    # Every rejected fact says why; the place veto names the conflicting values.
    assert all(d.reason for d in planted)
    ohio = next(d for d in planted if "in Ohio" in d.atom)
    assert ohio.reason.startswith("vetoed: its place") and "Illinois" in ohio.reason
    # The demo's printout and its HTML report show the reasons and the source sentences.
    from factscore_local.cli.demo import print_rows, write_demo_report

    printed = CliRunner().invoke(click.command()(lambda: print_rows(result.rows)), [])
    lines = printed.output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("     [x]"):
            assert lines[i + 1].startswith("         why: "), lines[i : i + 2]
    scored = tmp_path / "demo_bios.scored.jsonl"
    scored.write_text("".join(json.dumps(r.to_json()) + "\n" for r in result.rows), "utf-8")
    page = write_demo_report(scored, xml_index).read_text("utf-8")
    assert "vetoed: its place conflicts" in page and "from: " in page
    assert html.escape(ohio.sentence, quote=False) in page
