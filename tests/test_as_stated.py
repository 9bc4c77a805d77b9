"""Loose values read as the page states them (issue 74): a decade, a century, a range given
as "between ... and ...", an approximation or a rounded count is judged in the form of the
page's value that lies within it, in the clause of the fact's role; spans, points and values
the role does not give are judged as written."""

from __future__ import annotations

from dataclasses import replace

import pytest

from factscore_local.pipeline.signals.as_stated import as_stated
from tests.conftest import require_model

LEAD = "Jo Cox (26 November 1942 – 3 May 1999) was an English drummer."
CAREER = "He began his career in 1978 as a session drummer. He retired in 1995."

READ = [
    ("He was born in the 1940s.", "He was born in 1942."),  # years, not the day: a year
    ("Jo Cox was born in the early 1940s.", "Jo Cox was born in 1942."),
    ("He died in the late 20th century.", "He died in 1999."),
    ("He died around 1999.", "He died in 1999."),
    ("He died around May 1999.", "He died in 1999."),  # "around" widens it to years
    ("He began his career in the late 1970s.", "He began his career in 1978."),
    ("He began his career between 1977 and 1980.", "He began his career in 1978."),
    ("He began his career circa 1978.", "He began his career in 1978."),
    ("He retired in the mid-1990s.", "He retired in 1995."),
]
KEPT = [
    "He began his career in the 1960s.",  # the role's year lies outside
    "He began his career in 1978.",  # a point: given or not, nothing to read
    "He drummed from 1978 to 1995.",  # a span is a period, not a time within it
    "His brother was born in the 1940s.",  # the birth of his kin, not his own
    "He toured over two seasons.",  # "over" before a number word opens a phrase
    "He toured throughout the 1970s.",  # the whole decade: no year within it holds it
]


@pytest.mark.parametrize(("fact", "read"), READ)
def test_a_loose_value_is_read_as_the_role_s_value_within_it(fact, read):
    assert as_stated(fact, "Jo Cox", [LEAD, CAREER]) == read


@pytest.mark.parametrize("fact", KEPT)
def test_spans_points_and_values_outside_the_role_are_read_as_written(fact):
    assert as_stated(fact, "Jo Cox", [LEAD, CAREER]) == fact


def test_a_named_work_s_year_and_a_disambiguated_lead_s_dates_are_witnesses():
    """A work named in the fact is read in its year, not a later year of its clause; a
    title's "(politician)" is no parenthesis of life dates."""
    page = ['He made his debut in "City of God" (2002), re-released in 2020 by the studio.']
    fact = "City of God was released in the early 21st century."
    assert as_stated(fact, "Jon Haag", page) == "City of God was released in 2002."
    lead = "Tony Diaz (politician) Antonio Magsaysay Diaz (1927–2011) was a lawyer."
    fact = "Antonio Magsaysay Diaz died between 2009 and 2013."
    read = as_stated(fact, "Tony Diaz (politician)", [lead])
    assert read == "Antonio Magsaysay Diaz died in 2011."


def test_a_witness_shares_the_fact_s_event_and_is_the_one_year_its_clauses_give():
    """A clause that shares the names but not the event ("appointed" for "ceased") is no
    witness; nor are clauses that give a decade two years, where the page does not say
    which. "Around" names a centre: the year nearest it is read."""
    page = ["In late 2003, Howard appointed Letwin as Shadow Chancellor of the Exchequer."]
    fact = "Letwin ceased to be Shadow Chancellor of the Exchequer in the 2000s."
    assert as_stated(fact, "Oliver Letwin", page) == fact
    page = ["On 5 August 2010, Rami was called up.", "Rami was called up again in 2016."]
    assert as_stated("He was called up in the 2010s.", "Adil Rami", page) == (
        "He was called up in the 2010s."
    )
    assert as_stated("He was called up around 2011.", "Adil Rami", page) == (
        "He was called up in 2010."
    )
    assert as_stated(
        "In the 2000s, she made her debut.", "Ann Lee", ["She made her debut in 2008."]
    ) == ("In 2008, she made her debut.")


def test_a_rounded_count_is_read_as_the_page_s_count():
    page = ["She wrote 63 novels and 12 plays."]
    assert as_stated("She wrote more than 60 novels.", "Ann Lee", page) == "She wrote 63 novels."
    assert as_stated("She wrote about 60 novels.", "Ann Lee", page) == "She wrote 63 novels."
    assert as_stated("She wrote over 70 novels.", "Ann Lee", page) == "She wrote over 70 novels."


def test_a_loose_value_without_a_witness_is_one_word_of_the_coverage():
    """Found where its passages state a value that meets it, as a year's word is found
    wherever they write it, and never as its own words ("early", "2010s")."""
    from factscore_local.pipeline.signals.as_stated import loose_values_stated
    from factscore_local.pipeline.signals.lexical import coverage
    from factscore_local.pipeline.signals.slots import read_passages

    read = read_passages(["She won the award in 2012.", "She moved to Rome in 1995."])
    words = {"won", "award", "moved", "rome", "2012", "1995"}
    kept, counted = loose_values_stated("She won the award in the early 2010s.", read)
    assert counted == (1, 0) and coverage(kept, "Ann Lee", words, counted) == 1.0
    kept, counted = loose_values_stated("She won the award in the 1990s.", read)
    assert counted == (1, 0)  # 1995, though the page gives it the move: the slot check's role
    kept, counted = loose_values_stated("She won the award in the 1980s.", read)
    assert counted == (0, 1) and coverage(kept, "Ann Lee", words, counted) == pytest.approx(2 / 3)
    assert coverage("She won the award in the early 2010s.", "Ann Lee", words) == 0.5


# A short page (one evidence block, a prefill of seconds, not a whole article's minutes).
SHORT_PAGE = [
    "Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical physicist.",
    "He is best known for the theory of relativity. In 1905 he published four papers that "
    "changed physics, and in 1921 he received the Nobel Prize in Physics.",
    "He left Germany in 1933 and settled in Princeton, New Jersey, where he died.",
]


@pytest.mark.slow
def test_the_lm_judges_the_stated_form_and_the_row_keeps_the_fact(tmp_path):
    """With the small LM on a short page: the decade fact is judged exactly as the fact in
    the page's form would be (same margin and NP), its row keeps the decade and records
    the form read; with ``values_as_stated`` off it is judged as written."""
    import json

    from factscore_local.config import EvalConfig
    from factscore_local.index.builder import BuildOptions, build_index
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.estimator import Estimator

    require_model(SMALL_LM)
    topic, fact = "Albert Einstein", "Albert Einstein was born in the 1870s."
    pages = tmp_path / "pages.jsonl"
    pages.write_text(json.dumps({"title": topic, "text": " ".join(SHORT_PAGE)}) + "\n")
    build_index(BuildOptions(source=pages, out=tmp_path / "index", dense=None, progress=False))
    config = EvalConfig(index=tmp_path / "index", lm=SMALL_LM, verifier="retrieve-lm+np",
                        evidence="page", cache=tmp_path / "c.db")  # fmt: skip
    (loose,) = Estimator(config).verify([(topic, topic, fact)])
    assert loose.atom == fact and loose.read_as == "Albert Einstein was born in 1879."
    assert loose.to_json()["read_as"] == loose.read_as
    as_written = Estimator(replace(config, values_as_stated=False))
    stated, plain = as_written.verify([(topic, topic, loose.read_as), (topic, topic, fact)])
    assert (loose.margin, loose.np) == (stated.margin, stated.np)
    assert plain.read_as is None and plain.margin != loose.margin
