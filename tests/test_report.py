"""``fscore report``: the numbers behind its figures (hand-computed cases), its inputs
(eval outputs, category files, bad files), and the HTML it writes from a real LM-free run
on the dev bios of two subjects."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.pipeline.records.rows import BioRow, FactResult, HumanSide
from factscore_local.report.data import (
    ReportInputError,
    load_subjects,
    read_categories,
    score_by_category,
    support_by_position,
)
from tests.conftest import SHARED, require, require_model

LABELED = SHARED / "factscore" / "labeled-dev"


def bio(topic: str, flags: list[bool], category: str | None = None, labels=None) -> BioRow:
    decisions = tuple(FactResult(f"fact {i}", s) for i, s in enumerate(flags))
    human = None
    if labels is not None:
        facts = tuple(FactResult(f"h {i}", True, label=x) for i, x in enumerate(labels))
        human = HumanSide(sum(x == "S" for x in labels) / len(labels), len(labels), facts)
    score = sum(flags) / len(flags) if flags else None
    return BioRow(1, topic, "x/ChatGPT.jsonl", title=topic, responded=bool(flags),
                  n_facts=len(flags), init_score=score, score=score, decisions=decisions,
                  human=human, category=category)  # fmt: skip


def test_score_by_category_means_responding_bios_per_class():
    rows = [
        bio("a", [True, False], "rare", ["S", "NS"]),
        bio("b", [True, True], "rare", ["S", "S", "S", "IR"]),
        bio("c", [], "rare"),  # did not respond: left out
        bio("d", [False, False, True, True], "very rare"),
    ]
    out = score_by_category(rows)
    assert list(out) == ["very rare", "rare"]  # FActScore's order, rarest first
    assert out["rare"] == {"estimated": 75.0, "human": 62.5, "n": 2}
    assert out["very rare"] == {"estimated": 50.0, "human": None, "n": 1}
    # A mapping file wins over the rows' own classes.
    assert list(score_by_category(rows, {"a": "freq", "b": "freq"})) == ["very rare", "freq"]


def test_support_by_position_places_each_fact_in_its_decile():
    rows = [bio("a", [True] * 5 + [False] * 5), bio("b", [True, False])]
    out = support_by_position(rows, bins=10)
    # Bio a: one fact per decile; bio b: facts at 25% (decile 2) and 75% (decile 7).
    expected = [100, 100, 100, 100, 100, 0, 0, 0, 0, 0]
    expected[2], expected[7] = 100, 0
    assert out["estimated"] == expected and out["n_facts"] == 12
    assert out["human"] is None
    two = support_by_position([bio("a", [True, False, False, True])], bins=2)["estimated"]
    assert two == [50.0, 50.0]


def test_categories_from_json_or_from_the_input_file(tmp_path):
    mapping = tmp_path / "c.json"
    mapping.write_text(json.dumps({"Kang Ji-hwan": "rare"}), "utf-8")
    assert read_categories(mapping) == {"Kang Ji-hwan": "rare"}
    source = require(LABELED / "ChatGPT.jsonl")
    classes = read_categories(source)
    assert len(classes) == 98 and set(classes.values()) == {
        "very rare", "rare", "medium", "freq", "very freq"}  # fmt: skip
    empty = tmp_path / "e.jsonl"
    empty.write_text('{"x": 1}\n', "utf-8")
    with pytest.raises(ReportInputError, match="maps no topic"):
        read_categories(empty)


def test_bad_outputs_are_refused_with_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"line": 1, "topic": "a", "source": "s", "error": "x"}\n{"oops": 1}\n')
    with pytest.raises(ReportInputError, match="bad.jsonl:2"):
        load_subjects([bad])
    result = CliRunner().invoke(main, ["report", str(tmp_path / "none.jsonl"), "--html",
                                       str(tmp_path / "r.html")])  # fmt: skip
    assert result.exit_code != 0 and "no eval output" in result.output


@pytest.fixture(scope="module")
def report_file(db_index, tmp_path_factory) -> Path:
    """A report of a real LM-free run: the seeded random verifier on 6 labeled bios of
    two subjects, with the human atomic facts verified."""
    folder = tmp_path_factory.mktemp("report")
    out = folder / "eval.jsonl"
    args = ["eval", "--index", str(db_index), "--use-atomic-facts", "--verifier", "random",
            "--n-samples", "6", "--cache", str(folder / "c.db"), "--out", str(out), "--quiet",
            "--input", str(require(LABELED / "ChatGPT.jsonl")),
            "--input", str(require(LABELED / "PerplexityAI.jsonl"))]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    html = folder / "report.html"
    numbers = folder / "numbers.json"
    result = CliRunner().invoke(main, ["report", str(out), "--html", str(html),
                                       "--numbers", str(numbers)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 subject(s), 12 bios, with passage texts" in result.output  # index from the record
    return html


def test_numbers_file_holds_what_the_figures_draw(report_file):
    numbers = json.loads((report_file.parent / "numbers.json").read_text("utf-8"))
    subjects = {s.name: s.rows for s in load_subjects([report_file.parent / "eval.jsonl"])}
    assert set(numbers["summary"]) == set(subjects) == {"ChatGPT", "PerplexityAI"}
    for name, rows in subjects.items():
        assert numbers["support_by_position"][name] == support_by_position(rows)
        assert numbers["score_by_category"][name] == score_by_category(rows)
        assert numbers["summary"][name]["n_bios"] == len(rows) == 6
        assert "error_rate" in numbers["summary"][name]["validation"]


def test_report_is_self_contained_with_figures_bios_and_records(report_file):
    html = report_file.read_text("utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing from the network
    assert html.count("<svg") == 2  # FActScore by frequency, support by position
    assert "id='fig-frequency'" in html and "id='fig-position'" in html
    rows = json.loads(
        "["
        + ",".join(line for line in (report_file.parent / "eval.jsonl").read_text().splitlines())
        + "]"
    )
    assert html.count("<details class=bio") == len(rows) == 12
    n_facts = sum(len(r["decisions"]) + len(r["human"]["facts"]) for r in rows)
    assert html.count("<tr class='fact") == n_facts
    disagreements = sum(f["is_supported"] != (f["label"] == "S")
                        for r in rows for f in r["human"]["facts"])  # fmt: skip
    assert html.count("data-d='1'") == disagreements > 0
    assert "<td>ChatGPT</td>" in html and "<td>PerplexityAI</td>" in html
    assert "Run records" in html and "random with no LM on index" in html


def test_text_from_the_rows_is_escaped_by_the_template():
    """The page comes from a jinja2 template with autoescaping: topics, facts, errors and
    run records are text, never markup; only our own SVG, style and script are not escaped."""
    from factscore_local.report.build import build_report, environment
    from factscore_local.report.data import Subject

    evil = "<script>alert(1)</script>"
    row = bio(f"Ann {evil}", [True, False], "rare", ["S", "NS"])
    fact = FactResult(f"She wrote {evil} & 'more'.", True)
    row = dataclasses.replace(row, decisions=(fact, *row.decisions[1:]),
                              set_aside=((f"It was {evil}.", "dangling"),))  # fmt: skip
    failed = BioRow(2, "Bob <b>", "x/ChatGPT.jsonl", error=f"bad {evil}")
    html = build_report([Subject(f"LM {evil}", [row, failed])], categories={"x": "rare"})
    assert environment().autoescape("report.html.j2") is True
    assert evil not in html and "<b>" not in html
    shown = "&lt;script&gt;alert(1)&lt;/script&gt;"
    places = (
        f"<td>LM {shown}</td>",
        f"<option>LM {shown}</option>",
        f"data-subject='LM {shown}' data-topic='Ann {shown}'",
        f"<summary>Ann {shown} · LM {shown} · rare",
        f"She wrote {shown} &amp; &#39;more",
        f"<li>It was {shown}. <span class=muted>(dangling)</span></li>",
        "set aside: 1</summary>",
        f"<summary>Bob &lt;b&gt; · LM {shown} · error: bad {shown}</summary>",
    )
    for place in places:
        assert place in html, place
    assert html.count("<script") == 2  # the passages' JSON and the page's own script
    assert html.count("<svg") == 2
    assert html.count("<details class=bio") == 2 and html.count("<tr class='fact") == 4


# --- in a real browser -------------------------------------------------------------------
def visible_facts(page) -> int:
    return page.locator("tr.fact:not([hidden])").count()


def test_report_renders_in_chromium_and_filters(report_file, browser_page, tmp_path):
    page = browser_page
    page.goto(report_file.as_uri())
    html = report_file.read_text("utf-8")
    n_facts = html.count("<tr class='fact")
    assert page.locator("#shown").text_content() == f"12 bios, {n_facts} facts shown"
    for figure in ("#fig-frequency svg", "#fig-position svg"):
        box = page.locator(figure).bounding_box()
        assert box and box["width"] > 200 and box["height"] > 150
    page.select_option("#decision", "disagree")
    assert visible_facts(page) == html.count("data-d='1'")
    page.select_option("#decision", "NS")
    assert visible_facts(page) == html.count("data-s='0'")
    page.select_option("#decision", "all")
    page.select_option("#subject", "ChatGPT")
    assert page.locator("details.bio:not([hidden])").count() == 6
    page.fill("#query", "no fact says this 1234")
    page.wait_for_function("document.getElementById('shown').textContent.startsWith('0 bios')")
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    assert page.errors == []


@pytest.mark.slow
def test_evidence_passages_open_from_a_real_lm_run(db_index, browser_page, tmp_path):
    """The small embedded LM verifies one labeled bio; clicking a fact's evidence in the
    report shows that passage's text from the index."""
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    out = tmp_path / "eval.jsonl"
    source = require(LABELED / "ChatGPT.jsonl")
    args = ["eval", "--index", str(db_index), "--use-atomic-facts", "--lm", SMALL_LM,
            "--n-samples", "1", "--no-validate", "--cache", str(tmp_path / "c.db"),
            "--out", str(out), "--quiet", "--input", str(source)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    html = tmp_path / "report.html"
    assert CliRunner().invoke(main, ["report", str(out), "--html", str(html)]).exit_code == 0
    row = json.loads(out.read_text("utf-8").splitlines()[0])
    first = row["decisions"][0]["evidence"][0]
    page = browser_page
    page.goto(html.as_uri())
    page.locator("details.bio > summary").first.click()
    page.locator(f"button.ev[data-p='{first['passage_id']}']").first.click()
    text = KnowledgeSource(db_index).passage(first["passage_id"]).clean_text
    assert page.locator("#passage > div").text_content() == text
    assert first["title"] in page.locator("#passage > h3").text_content()
    assert page.errors == []
