"""The README stays a two-minute read whose headline table is the generated one (the
documentation site itself: tests/test_docs_site.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docs import generate
from docs.generate import pages as docs
from docs.generate import readme_headline
from scripts.common import RESULTS, SUBJECTS, read_results
from tests.test_doctests import module_names, run_examples

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_LINES = 150  # the README stays well under it (issue 49: <= 130)
SETUP_LINES = (
    "bash scripts/setup.sh   # set up .venv + embedded models, then the demo: build an index,"
    " score demo bios",
    "bash scripts/test.sh    # set up if needed, ruff, then the test suite (what CI runs)",
)


def test_readme_is_short_and_opens_with_the_two_commands() -> None:
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"
    assert lines[2:6] == ["```bash", *SETUP_LINES, "```"]
    text = "\n".join(lines)
    assert "<!-- api-quickstart -->" in text and "<!-- /api-quickstart -->" in text


def test_readme_links_resolve() -> None:
    """Every relative link of the README names a file of the checkout."""
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text("utf-8"))
    missing = [link for link in links if "://" not in link and not (ROOT / link).exists()]
    assert links and not missing, f"README.md links to missing files: {missing}"


def test_readme_headline_is_the_generated_table() -> None:
    """The README's block is the table ``python -m docs.generate`` makes from the results
    file now (not only the headline page last written)."""
    record = read_results(RESULTS / f"{docs.HEADLINE}.json")
    block = readme_headline.readme_block(README.read_text("utf-8"))
    assert block == docs.headline(record), (
        "README.md's headline block is stale: run `python -m docs.generate` "
        "(or `bash scripts/docs_build.sh --update`)"
    )
    assert block == readme_headline.HEADLINE.read_text("utf-8")


def test_readme_contradiction_table_is_the_generated_one() -> None:
    """The README's probe table is the one ``python -m docs.generate`` makes from the
    counterfactual probe's results file, with the default rule's and the previous one's."""
    record = read_results(RESULTS / f"{docs.PROBE}.json")
    block = readme_headline.readme_block(README.read_text("utf-8"), "contradictions")
    assert block == docs.contradictions(record), (
        "README.md's contradictions block is stale: run `python -m docs.generate`"
    )
    assert "| year |" in block and "rejected, default" in block
    assert "rejected, before the slot check" in block


def test_readme_run_time_line_is_generated_from_the_speed_records() -> None:
    """The README's run-time line is what ``python -m docs.generate`` makes from the speed
    results files (no figure typed by hand), and the README stays short."""
    record = read_results(RESULTS / f"{docs.SPEED}.json")
    text = README.read_text("utf-8")
    block = readme_headline.readme_block(text, "run-time")
    assert block == docs.run_time(record), (
        "README.md's run-time block is stale: run `python -m docs.generate`"
    )
    f = record["figures"]
    per_bio = f.get("batched/seconds_per_bio", f.get("end_to_end/seconds_per_bio"))
    assert f"{per_bio:.0f} s a bio" in block
    assert len(text.splitlines()) <= 130


def test_splice_replaces_only_the_block() -> None:
    readme = "# x\n\n<!-- headline -->\nold\n<!-- /headline -->\n\nrest\n"
    assert readme_headline.splice(readme, "| a |") == (
        "# x\n\n<!-- headline -->\n| a |\n<!-- /headline -->\n\nrest\n"
    )
    with pytest.raises(ValueError, match="headline"):
        readme_headline.splice("# no markers\n", "| a |")


def test_raw_text_table_sets_both_estimates_side_by_side() -> None:
    """The README's raw-text table reads, per subject, the run's two settings (atomic facts
    and raw text); once ``raw-text-98`` is a results file, the README holds it as generated."""
    figures = {}
    for i, subject in enumerate(SUBJECTS):
        for setting, er in (("model atomic facts", 1.0 + i), ("raw text", 2.5 + i)):
            figures |= {f"{setting}/{subject}/human": 50.0, f"{setting}/{subject}/er": er,
                        f"{setting}/{subject}/estimated": 50.0 + er,
                        f"{setting}/{subject}/bio_mae": 9.0, f"{setting}/{subject}/bios": 98,
                        f"{setting}/{subject}/facts_per_response": 30.0}  # fmt: skip
    record = {"name": "raw-text-x", "figures": figures, "data": {"topics": 98}}
    table = docs.raw_text(record)
    assert "| ChatGPT | 50.0 | 52.0 | 2.0 | 53.5 | 3.5 | 9.0 | 30.0 |" in table
    assert "98 / 98 / 98 bios with a human score on 98 labeled dev topics" in table
    # The calibrated estimate takes the raw-text columns only where its shift won.
    calibrated = {k.replace("raw text/", "raw text, calibrated/"): v + 1 if k.endswith("/er") else v
                  for k, v in figures.items() if k.startswith("raw text/")}  # fmt: skip
    lost = {**figures, **calibrated,
            "raw text, calibrated/wins on both halves for every subject": 0}  # fmt: skip
    table = docs.raw_text({**record, "figures": lost})
    assert "| ChatGPT | 50.0 | 52.0 | 2.0 | 53.5 | 3.5 |" in table and "is not shipped" in table
    won = {**lost, "raw text, calibrated/wins on both halves for every subject": 1}
    table = docs.raw_text({**record, "figures": won})
    assert "| ChatGPT | 50.0 | 52.0 | 2.0 | 53.5 | 4.5 |" in table and "is shifted" in table
    path = RESULTS / f"{docs.RAW_TEXT}.json"
    readme = README.read_text("utf-8")
    if path.exists():
        block = readme_headline.readme_block(readme, "raw-text")
        assert block == docs.raw_text(read_results(path))
    else:
        assert "<!-- raw-text -->" not in readme


def test_every_record_page_is_titled_in_words() -> None:
    """Each results record names its page in words (not its file name), and the page opens
    with that heading: the site takes a page's title from a leading heading only, else it
    makes one of the file name ("Np standins 4")."""
    records = [read_results(p) for p in sorted(RESULTS.glob("*.json"))]
    untitled = [r["name"] for r in records if not r.get("title")]
    assert untitled == [], f"records without a title: {untitled}"
    for record in records:
        title, name = record["title"], record["name"]
        assert " " in title and title.lower() != name.replace("-", " ").lower(), name
        assert docs.page(record).startswith(f"# {title}\n"), name
    with pytest.raises(ValueError, match="x.json has no 'title'"):
        docs.page({**records[0], "name": "x", "title": ""})


def test_every_readme_table_page_is_titled_in_words_by_the_nav() -> None:
    """The README's tables are pages too (copied into the README as they are, so without a
    heading): the site's navigation names each in words, else its title would be its file
    name ("Run time")."""
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    for _, _, page_name, _ in docs.README_TABLES:
        named = re.search(rf"^\s*- ([^:\n]+): benchmarks/{re.escape(page_name)}$", nav, re.M)
        assert named and " " in named.group(1), page_name


@pytest.mark.parametrize("name", module_names(generate))
def test_the_generators_docstring_examples_run(name: str) -> None:
    """The docs' generators (``docs/generate/``) keep their docstring examples true."""
    run_examples(name)
