"""``fscore report``: the numbers behind its figures (hand-computed cases), its inputs
(eval outputs, category files, generations, bad files), its words for the score and the
conflicting values, and the page in headless Chromium at 1280 and 800 px: a labeled run
(LM-free, on the dev bios of two subjects) and an unlabeled one (the demo bios, judged by
the embedded 1.5B from a recorded cache), where a reader finds the score explained, each
bio's generation and "k of n supported", the signals' hover text, no figure line of fewer
than 5 points, one passage numbering and the passage viewer beside, not over, the
evidence."""

from __future__ import annotations

import dataclasses
import json
import math
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
from factscore_local.runtime.files import file_sha256
from tests.conftest import ROOT, SHARED, require, require_model

LABELED = SHARED / "factscore" / "labeled-dev"
LABELED_BIOS = 10  # of each subject: lines of 10 slices by position, too few classes
DEMO_BIOS = ROOT / "data" / "demo_bios.jsonl"


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
    assert out["totals"] == [1, 1, 2, 1, 1, 1, 1, 2, 1, 1] and out["n_bios"] == 2
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


def scored(topic: str, flags: list[bool], line: int = 1, source: str = "x/ChatGPT.jsonl"):
    """A row scored as ``fscore eval`` scores it (FActScore's length penalty, gamma 10)."""
    from factscore_local.pipeline.decision.scoring import score_bio

    s = score_bio(flags, 10)
    decisions = tuple(FactResult(f"fact {i}", f) for i, f in enumerate(flags))
    return BioRow(line, topic, source, title=topic, responded=s.responded, n_facts=s.n_facts,
                  init_score=s.init_score, score=s.score, decisions=decisions)  # fmt: skip


def test_a_bio_says_k_of_n_and_its_length_penalty():
    from factscore_local.report.data import Subject
    from factscore_local.report.views import penalty_of, score_words

    short = scored("Ann", [True] * 5 + [False] * 3)  # the bio: 5 of 8 shows 48.7
    said = (
        "62.5% × length penalty 0.78 (8 facts, fewer than γ = 10: exp(1 − 10/8)) = FActScore 48.7"
    )
    assert score_words(short, 10) == ("5 of 8 supported", said)
    long = scored("Bob", [True] * 9 + [False] * 3)
    assert score_words(long, 10) == ("9 of 12 supported", "75.0%; no length penalty (12 facts, "
                                     "not fewer than γ = 10): FActScore 75.0")  # fmt: skip
    assert score_words(scored("Cy", []), 10)[0] == "did not respond"
    none = scored("Di", [False] * 4)  # share 0: the penalty from gamma
    assert penalty_of(none, 10) == pytest.approx(math.exp(1 - 10 / 4))
    # Without a run record the gamma is read back from a penalized row.
    assert Subject("s", [long, short]).gamma == pytest.approx(10)
    assert Subject("s", [long]).gamma is None


def test_generations_are_read_back_from_the_recorded_input(tmp_path):
    from factscore_local.report.generations import generation_texts

    source = tmp_path / "in.jsonl"
    source.write_text('{"topic": "Ann", "output": "Ann was a poet."}\n\n'
                      '{"topic": "Bob", "output": "Bob ran."}\n', "utf-8")  # fmt: skip
    rows = [scored("Ann", [True], 1, str(source)), scored("Bob", [True], 3, str(source))]
    record = {"inputs": [{"path": str(source), "given": str(source),
                          "sha256": file_sha256(source)}]}  # fmt: skip
    texts, notes = generation_texts(rows, [record])
    assert texts == {(str(source), 1): "Ann was a poet.", (str(source), 3): "Bob ran."}
    assert notes == []
    # A wrong topic on the line is never shown under the row.
    texts, notes = generation_texts([scored("Cy", [True], 1, str(source))], [record])
    assert texts == {} and "do not hold their row's topic" in notes[0]
    source.write_text('{"topic": "Ann", "output": "changed"}\n', "utf-8")
    texts, notes = generation_texts(rows, [record])
    assert texts == {} and notes == [f"{source} has changed since the run"]
    moved = tmp_path / "elsewhere" / "in.jsonl"
    moved.parent.mkdir()
    moved.write_text('{"topic": "Ann", "output": "Ann was a poet."}\n', "utf-8")
    gone = [scored("Ann", [True], 1, "old/place/in.jsonl")]
    assert generation_texts(gone, [])[1] == ["no input file at old/place/in.jsonl (give it "
                                             "with --input)"]  # fmt: skip
    assert generation_texts(gone, [], [moved])[0] == {("old/place/in.jsonl", 1): "Ann was a poet."}


def test_report_input_option_finds_a_moved_input(tmp_path):
    moved = tmp_path / "moved.jsonl"
    moved.write_text('{"topic": "Ann", "output": "Ann was a <poet>."}\n', "utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps(scored("Ann", [True], 1, "gone/moved.jsonl").to_json()) + "\n")
    html = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(out), "--html", str(html)])
    assert result.exit_code == 0, result.output
    page = html.read_text("utf-8")
    assert "generations not shown: no input file at gone/moved.jsonl" in page
    result = CliRunner().invoke(main, ["report", str(out), "--html", str(html), "--input",
                                       str(moved)])  # fmt: skip
    assert result.exit_code == 0, result.output
    page = html.read_text("utf-8")
    assert "<blockquote class=generation>Ann was a &lt;poet&gt;.</blockquote>" in page


def test_a_veto_reason_names_its_passage_values_and_sentence():
    from factscore_local.report.conflicts import Conflict, cited_conflict, conflict_marks

    place = ("vetoed: its place conflicts with its passages ('lawyer in Ohio', where "
             "\"Abraham Lincoln\" #209 gives 'lawyer in Illinois': \"Largely self-educated, "
             "he became a lawyer in Illinois, a Whig Party leader, and a mem…\")")  # fmt: skip
    year = ('vetoed: its year conflicts with its passages (1885, where "Albert Einstein" '
            '#1995 gives the birth as 14 March 1879: "Albert Einstein (14 March 1879 – 18 '
            'April 1955) was a German-born theoretical physicist.")')  # fmt: skip
    assert cited_conflict(place) == Conflict("209", ("lawyer in Illinois",), "Largely self-"
        "educated, he became a lawyer in Illinois, a Whig Party leader, and a mem")  # fmt: skip
    assert cited_conflict(year).values == ("14 March 1879",)
    assert cited_conflict("fitted score -1.40, not above 0: low margin (-2.22)") is None
    text = (
        "Lincoln was born in Kentucky.\nLargely self-educated, he became a lawyer in\n"
        "Illinois, a Whig Party leader, and a member of the House."
    )
    marks = conflict_marks(cited_conflict(place), text)
    assert [(text[a:b], kind) for a, b, kind in marks] == [
        ("Largely self-educated, he became a ", "sentence"),
        ("lawyer in\nIllinois", "value"),
        (", a Whig Party leader, and a mem", "sentence"),
    ]


def series_points(svg: str) -> dict[str, int]:
    """The points (markers) of each drawn line of a figure's SVG."""
    groups = re.findall(r'<g id="(\w+-series-\d+)">(.*?)\n   </g>', svg, re.S)
    return {gid: body.count("<use ") for gid, body in groups}


def test_a_line_of_fewer_than_five_points_is_not_drawn():
    from factscore_local.report import plots

    # Two bios of 8 facts: 1 or 2 facts a slice, no point of 5 facts: nothing drawn.
    two = support_by_position([scored("a", [True] * 8), scored("b", [False] * 8)])
    figure = plots.support_by_position_figure({"LM": two})
    assert figure.svg is None and not figure.drawn
    assert "Not drawn: no line has 5 slices of at least 5 facts" in figure.caption
    assert "LM, estimated: 16 facts of 2 bios, 0 such" in figure.caption
    # Ten bios of 10 facts: 10 facts a slice; a human-labeled subject too few to draw.
    many = support_by_position([scored(str(i), [i % 2 == 0] * 10) for i in range(10)])
    labeled = support_by_position([bio("h", [True] * 3, labels=["S", "NS", "S"])])
    figure = plots.support_by_position_figure({"A": many, "B": labeled})
    assert series_points(figure.svg) == {"position-series-0": 10}
    assert [s.label for s in figure.drawn] == ["A, estimated"]
    assert "Solid: the estimate." in figure.caption and "dashed" not in figure.caption
    assert "Not drawn, with fewer than 5 slices" in figure.caption
    # Five classes of 3 bios: drawn, each point with its count; a human line where labeled.
    classes = ("very rare", "rare", "medium", "freq", "very freq")
    rows = [bio(f"{c}{i}", [True, i > 0], c, ["S", "NS"]) for c in classes for i in range(3)]
    figure = plots.score_by_category_figure({"A": score_by_category(rows)})
    assert series_points(figure.svg) == {"frequency-series-0": 5, "frequency-series-1": 5}
    assert figure.svg.count("n=3") == 10
    assert "Solid: the estimate; dashed: the human labels' score" in figure.caption
    figure = plots.score_by_category_figure({"A": score_by_category(rows[:12])})
    assert figure.svg is None and "A, estimated: 12 bios, 4 such" in figure.caption


def test_bad_outputs_are_refused_with_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"line": 1, "topic": "a", "source": "s", "error": "x"}\n{"oops": 1}\n')
    with pytest.raises(ReportInputError, match="bad.jsonl:2"):
        load_subjects([bad])
    result = CliRunner().invoke(main, ["report", str(tmp_path / "none.jsonl"), "--html",
                                       str(tmp_path / "r.html")])  # fmt: skip
    assert result.exit_code != 0 and "no eval output" in result.output


@pytest.fixture(scope="module")
def labeled_report(db_index, tmp_path_factory) -> Path:
    """A report of a real LM-free run: the seeded random verifier on the first 10 labeled
    bios of two subjects, with the human atomic facts verified."""
    folder = tmp_path_factory.mktemp("report")
    out = folder / "eval.jsonl"
    args = ["eval", "--index", str(db_index), "--use-atomic-facts", "--verifier", "random",
            "--n-samples", str(LABELED_BIOS), "--cache", str(folder / "c.db"), "--out",
            str(out), "--quiet", "--input", str(require(LABELED / "ChatGPT.jsonl")),
            "--input", str(require(LABELED / "PerplexityAI.jsonl"))]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    html = folder / "report.html"
    numbers = folder / "numbers.json"
    result = CliRunner().invoke(main, ["report", str(out), "--html", str(html),
                                       "--numbers", str(numbers)])  # fmt: skip
    assert result.exit_code == 0, result.output
    n = 2 * LABELED_BIOS
    assert f"2 subject(s), {n} bios, with passage texts" in result.output  # index from the record
    return html


@pytest.fixture(scope="module")
def demo_report(xml_index, tmp_path_factory) -> Path:
    """A report of an unlabeled run with real signals and vetoes: the demo bios judged by
    the embedded 1.5B with its default rule, replayed from a recorded demo run's cache
    (``scripts/cache/demo-1.5b.jsonl.gz``; a prompt that changed since is computed)."""
    from factscore_local.model_store import DEFAULT_LM
    from factscore_local.runtime.cache import ResultCache

    require_model(DEFAULT_LM)
    folder = tmp_path_factory.mktemp("demo-report")
    cache = folder / "c.db"
    ResultCache(cache).import_file(ROOT / "scripts" / "cache" / "demo-1.5b.jsonl.gz")
    out = folder / "scored.jsonl"
    args = ["eval", "--index", str(xml_index), "--input", str(DEMO_BIOS), "--cache",
            str(cache), "--out", str(out), "--quiet"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    html = folder / "report.html"
    result = CliRunner().invoke(main, ["report", str(out), "--html", str(html)])
    assert result.exit_code == 0, result.output
    return html


def rows_of(report: Path) -> list[dict]:
    """The rows a report was made from (the one eval output beside it)."""
    (out,) = report.parent.glob("*.jsonl")
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def test_numbers_file_holds_what_the_figures_draw(labeled_report):
    numbers = json.loads((labeled_report.parent / "numbers.json").read_text("utf-8"))
    subjects = {s.name: s.rows for s in load_subjects([labeled_report.parent / "eval.jsonl"])}
    assert set(numbers["summary"]) == set(subjects) == {"ChatGPT", "PerplexityAI"}
    for name, rows in subjects.items():
        assert numbers["support_by_position"][name] == support_by_position(rows)
        assert numbers["score_by_category"][name] == score_by_category(rows)
        assert numbers["summary"][name]["n_bios"] == len(rows) == LABELED_BIOS
        assert "error_rate" in numbers["summary"][name]["validation"]


def test_report_is_self_contained_with_figures_bios_and_records(labeled_report):
    html = labeled_report.read_text("utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing from the network
    # Support by position is drawn; FActScore by frequency class is not (ChatGPT's first 10
    # bios are of 2 classes), and its caption says so.
    assert html.count("<svg") == 1 and "<figure id='fig-position' class='drawn'>" in html
    assert "<figure id='fig-frequency' class='not-drawn'>" in html
    rows = rows_of(labeled_report)
    assert html.count("<details class=bio") == len(rows) == 2 * LABELED_BIOS
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
    subjects = [Subject(f"LM {evil}", [row, failed]), Subject("other", [bio("Cy", [True])])]
    html = build_report(subjects, categories={"x": "rare"})
    assert environment().autoescape("report.html.j2") is True
    assert evil not in html and "<b>" not in html
    shown = "&lt;script&gt;alert(1)&lt;/script&gt;"
    places = (
        f"<td>LM {shown}</td>",
        f"<option>LM {shown}</option>",
        f"data-subject='LM {shown}' data-topic='Ann {shown}'",
        f"<summary>Ann {shown} · LM {shown} · rare · 1 of 2 supported",
        f"She wrote {shown} &amp; &#39;more",
        f"<li>It was {shown}. <span class=muted>(dangling)</span></li>",
        "set aside: 1</summary>",
        f"<summary>Bob &lt;b&gt; · LM {shown} · error: bad {shown}</summary>",
    )
    for place in places:
        assert place in html, place
    assert html.count("<script") == 2  # the passages' JSON and the page's own script
    assert html.count("<svg") == 0  # three bios: too few points for any line
    assert html.count("<details class=bio") == 3 and html.count("<tr class='fact") == 5


# --- in a real browser -------------------------------------------------------------------
WIDTHS = (1280, 800)


def visible_facts(page) -> int:
    return page.locator("tr.fact:not([hidden])").count()


def overlaps(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])  # fmt: skip


def check_reads_without_the_docs(page, report: Path, width: int, labeled: bool) -> None:
    """What a reader needs on the page, at this width: no horizontal scroll; the score and
    its length penalty explained; per bio its generation, "k of n supported" and its
    score in words; hover text on the signals; figure lines of 5 points or more, captioned
    as drawn; the labeled-only parts exactly where there are labels."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(report.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    how = page.locator("#how-to-read").text_content()
    assert "length penalty, min(1, exp(1 − γ/n))" in how and "γ = 10" in how
    assert ("ER is |estimated − human|" in how) is labeled
    rows = rows_of(report)
    generations = {}
    for row in rows:
        for number, line in enumerate(Path(row["source"]).read_text("utf-8").splitlines(), 1):
            if number == row["line"]:
                generations[(row["source"], row["line"])] = json.loads(line)["output"]
    bios = page.locator("details.bio")
    assert bios.count() == len(rows)
    for i, row in enumerate(rows):
        k, n = sum(d["is_supported"] for d in row["decisions"]), len(row["decisions"])
        summary = bios.nth(i).locator("summary").text_content()
        assert f"· {k} of {n} supported · FActScore {100 * row['score']:.1f}" in summary
        said = bios.nth(i).locator("p.score").text_content()
        assert said.startswith(f"{k} of {n} supported: {100 * row['init_score']:.1f}%")
        assert ("length penalty" in said) and (("× length penalty" in said) is (n < 10))
        generation = bios.nth(i).locator("blockquote.generation").text_content()
        assert generation == generations[(row["source"], row["line"])]
    for th in page.locator("th.sig").all():  # each signal's column head says what it is
        assert len(th.get_attribute("title")) > 40
    assert page.locator("#legend dt").count() == page.locator("th.sig").count() // max(
        1, page.locator("table.facts").count()) + 1  # fmt: skip
    for figure in page.locator("figure").all():
        caption = figure.locator("figcaption").text_content()
        series = figure.locator("svg g[id*='-series-']")
        if figure.get_attribute("class") == "not-drawn":
            assert series.count() == 0 and "Not drawn: no line has 5" in caption
            continue
        assert series.count() > 0
        for line in series.all():
            assert line.locator("use").count() >= 5
        box = figure.locator("svg").bounding_box()
        assert box and box["width"] > 200 and box["height"] > 150
        assert ("dashed:" in caption) is labeled and ("Solid: the estimate" in caption)
    assert (page.locator("#decision option[value=disagree]").count() == 1) is labeled


@pytest.mark.parametrize("width", WIDTHS)
def test_labeled_report_reads_without_the_docs(labeled_report, browser_page, width):
    page = browser_page
    check_reads_without_the_docs(page, labeled_report, width, labeled=True)
    assert page.locator("figure.drawn").count() == 1  # by position; too few classes
    caption = page.locator("#fig-frequency figcaption").text_content()
    assert "Not drawn: no line has 5 classes of at least 3 responding bios" in caption
    assert "human" in page.locator("#summary").text_content()
    assert page.errors == []


def test_report_renders_in_chromium_and_filters(labeled_report, browser_page, tmp_path):
    page = browser_page
    page.goto(labeled_report.as_uri())
    html = labeled_report.read_text("utf-8")
    n_facts = html.count("<tr class='fact")
    n_bios = 2 * LABELED_BIOS
    assert page.locator("#shown").text_content() == f"{n_bios} bios, {n_facts} facts shown"
    page.select_option("#decision", "disagree")
    assert visible_facts(page) == html.count("data-d='1'")
    page.select_option("#decision", "NS")
    assert visible_facts(page) == html.count("data-s='0'")
    page.select_option("#decision", "all")
    page.select_option("#subject", "ChatGPT")
    assert page.locator("details.bio:not([hidden])").count() == LABELED_BIOS
    page.fill("#query", "no fact says this 1234")
    page.wait_for_function("document.getElementById('shown').textContent.startsWith('0 bios')")
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    assert page.errors == []


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_unlabeled_report_reads_without_the_docs(demo_report, xml_index, browser_page, width):
    """The demo bios with the 1.5B: no labeled-only part, no figure (two bios), the issue's
    "5 of 8 supported" bio explained; a veto's passage opens under its fact, beside the
    evidence column, with the same number as the reason and the conflicting value marked."""
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.report.conflicts import cited_conflict

    page = browser_page
    check_reads_without_the_docs(page, demo_report, width, labeled=False)
    shown = page.locator("body").inner_text().lower()  # (not the passages' JSON)
    assert page.locator("figure.drawn").count() == 0 and "human" not in shown
    rows = rows_of(demo_report)
    vetoed = [(i, d) for i, r in enumerate(rows) for d in r["decisions"]
              if cited_conflict(d.get("reason"))]  # fmt: skip
    assert vetoed, "the demo's planted errors are vetoed with the values in conflict"
    i, fact = vetoed[0]
    conflict = cited_conflict(fact["reason"])
    bio = page.locator("details.bio").nth(i)
    bio.locator("summary").click()
    row = bio.locator("tr.fact", has_text=fact["atom"]).first
    button = row.locator(f"button.ev.cited[data-p='{conflict.passage_id}']")
    label = button.text_content()
    assert (
        label.endswith(f"#{conflict.passage_id}") and f'" #{conflict.passage_id}' in fact["reason"]
    )
    button.click()
    viewer = page.locator("#passage")
    assert viewer.is_visible()
    assert viewer.locator("h3").text_content() == label  # one numbering: page and id
    text = KnowledgeSource(xml_index).passage(int(conflict.passage_id)).clean_text
    assert viewer.locator("div").text_content() == text
    marked = " ".join(viewer.locator("mark.value").first.text_content().split())
    assert marked in conflict.values or any(marked in v for v in conflict.values)
    assert conflict.quote[:40] in " ".join(viewer.locator("div").text_content().split())
    box = viewer.bounding_box()
    for cell in bio.locator("td.ev").all():
        assert not overlaps(box, cell.bounding_box())
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.locator("#close-passage").click()
    assert not viewer.is_visible()
    assert page.errors == []
