"""A value judged in its role and its form (issue 74): decades, centuries, ranges,
approximations and full dates hold against the passages that give the value, while a value
the page gives to something else conflicts, and the reason names the role it was read in."""

from __future__ import annotations

import numpy as np
import pytest

from factscore_local.declarations.verifiers import Thresholds, get_verifier
from factscore_local.fitted_defaults import shipped_rule
from factscore_local.model_store import DEFAULT_LM
from factscore_local.pipeline.decision.reasons import reasons
from factscore_local.pipeline.signals.slot_details import conflict_detail
from factscore_local.pipeline.signals.slots import slot_conflicts, slot_flags
from tests.conftest import require

VETOED = ("number", "year", "place")  # the default's vetoes

# (fact, its passages, topic): true facts in the forms modern LMs write.
TRUE_FORMS = [
    ("She moved to film in the late 1960s.",
     ["Lee began on the stage. She made her first film, Rain, in 1969."], "Ann Lee"),
    ("He rose to fame in the 1930s.",
     ["Bo Ek was a singer. His breakthrough came in 1935 with a radio show."], "Bo Ek"),
    ("Grease is a 1970s film.",
     ['She starred in "Grease" (1978), a musical film.'], "Olivia Newton-John"),
    ("He began his career in the late 1970s.",
     ["He began his career in 1978 as a session drummer."], "Jo Cox"),
    ("He was born on November 26, 1942.",
     ["Jo Cox (born 26 November 1942) is an English drummer. He had 2 sons."], "Jo Cox"),
    ("Jo Cox was born in the 20th century.",
     ["Jo Cox (born 26 November 1942) is an English drummer."], "Jo Cox"),
    ("He was born in the early 1940s.",
     ["Jo Cox (born 26 November 1942) is an English drummer."], "Jo Cox"),
    ("He served as governor from 1954 to 1957.",
     ["He was elected governor in 1954 and served as governor until 1957."], "Al Roe"),
    ("He served as governor from 1954 to 1957.",
     ["He was governor (1954–1957) of the state."], "Al Roe"),
    ("He was governor between 1955 and 1957.",
     ["He was governor from 1954 until 1957."], "Al Roe"),
    ("She recorded the album around 1971.",
     ["She recorded the album in 1972 in London."], "Ann Lee"),
    ("She wrote about 60 novels.", ["She wrote 63 novels and 12 plays."], "Ann Lee"),
    ("She wrote more than 60 novels.", ["She wrote 63 novels and 12 plays."], "Ann Lee"),
    ("He is 6 ft 2 in tall.", ["Standing 1.88 m tall, he played as a centre."], "Al Roe"),
    ("The album sold 2.5 million copies.",
     ["The album sold 2,500,000 copies in 1990."], "Ann Lee"),
]  # fmt: skip


@pytest.mark.parametrize(("fact", "passages", "topic"), TRUE_FORMS)
def test_true_facts_in_other_forms_meet_their_passages(fact, passages, topic):
    verdicts = slot_conflicts(fact, passages, topic)
    assert verdicts and all(v in ("confirmed", "unknown") for v in verdicts.values()), verdicts
    flags = slot_flags(fact, passages, topic)
    assert not any(flags[k] for k in (*VETOED, "nationality", "other")), flags


def test_a_date_s_day_is_no_number():
    page = ["Jo Cox (born 26 November 1942) is an English drummer. He had 2 sons."]
    assert "number" not in slot_conflicts("He was born on November 26, 1942.", page, "Jo Cox")
    assert slot_conflicts("He was born on November 2, 1942.", page, "Jo Cox") == {
        "year": "contradicted"  # the day is part of the birth date, and it is another
    }


def default_rule():
    """The default rule for the embedded 1.5B model, with its shipped weights."""
    shipped = shipped_rule(DEFAULT_LM, "default")
    return get_verifier("default"), Thresholds(weights=shipped.settings["rule_weights"])


def decide(
    fact: str, passages: list[str], topic: str, margin: float = 3.0
) -> tuple[bool, str | None]:
    """The default's decision and reason for a fact whose LM signals say true (by default a
    high margin, NP and coverage: the LM believes the swapped value), with its slot flags."""
    flags = slot_flags(fact, passages, topic)
    values = {"margin": np.array([margin]), "np": np.array([0.9]), "coverage": np.array([1.0]),
              **{f"slot_{k}": np.array([v]) for k, v in flags.items()}}  # fmt: skip
    verifier, thresholds = default_rule()
    supported = verifier.decide(values, thresholds, 1)
    labelled = [(f"p{i}", text) for i, text in enumerate(passages)]
    why = reasons(verifier, values, thresholds, supported,
                  lambda i, kind: conflict_detail(fact, kind, labelled, topic))  # fmt: skip
    return bool(supported[0]), why[0]


LEAD = ("Ann Lee (born 12 May 1950) is an American actress. She starred in the Canadian "
        "film Rain (1975) with John Smith. Her first husband was the actor Tom Hardy, whom "
        "she married in 1971.")  # fmt: skip


def test_a_swapped_year_the_page_gives_elsewhere_is_vetoed_naming_the_role():
    supported, why = decide("Ann Lee was born in 1975.", [LEAD], "Ann Lee")
    assert not supported
    assert why.startswith("vetoed: its year conflicts") and "the birth as 12 May 1950" in why
    supported, why = decide("She married Tom Hardy in 1950.", [LEAD], "Ann Lee")
    assert not supported and "the birth" not in why  # 1950 is her birth's, not the marriage's


def test_a_swapped_nationality_conflicts_with_the_lead_s():
    fact = "Ann Lee is a Canadian actress."  # the page's film is Canadian, not she
    assert slot_conflicts(fact, [LEAD], "Ann Lee")["nationality"] == "contradicted"
    assert slot_flags(fact, [LEAD], "Ann Lee")["nationality"] == 1.0
    detail = conflict_detail(fact, "nationality", [("p0", LEAD)], "Ann Lee")
    assert detail.startswith("canadian, where p0 gives its lead's nationality as american")


def test_a_swapped_person_the_page_names_elsewhere_is_rejected_naming_the_role():
    """John Smith is on the page, as her co-star; her husband is Tom Hardy. No flag weighs
    a person (``person_roles.py``): the LM's doubt rejects the fact, and its reason says
    whom the page gives the role."""
    supported, why = decide("She married John Smith.", [LEAD], "Ann Lee", margin=-3.0)
    assert not supported
    assert "spouse John Smith, where p0 gives the spouse as Tom Hardy" in why, why
    _, why = decide("She married Tom Hardy in 1971.", [LEAD], "Ann Lee", margin=-3.0)
    assert "spouse" not in why, why  # the page gives her him: nothing to name
    assert slot_flags("She married John Smith.", [LEAD], "Ann Lee") == slot_flags(
        "She married Tom Hardy.", [LEAD], "Ann Lee"
    )


@pytest.mark.parametrize(
    ("fact", "role"),
    [("His mother was Ada Byron.", "mother Ada Byron"),
     ("Ada Byron was his mother.", "mother Ada Byron"),
     ("His father, Carl Weiss, was a banker.", "father Carl Weiss"),
     ("He married Ada Byron.", "spouse Ada Byron")],
)  # fmt: skip
def test_a_parent_or_spouse_of_another_name_is_named_in_the_reason(fact, role):
    page = ("Max Holt (1901–1970) was a German chemist. His mother, Ida Holt, raised him "
            "alone. His father was Otto Holt. He married Lena Marx in 1930. He met Ada Byron and "
            "Carl Weiss in Berlin.")  # fmt: skip
    detail = conflict_detail(fact, "person", [("p0", page)], "Max Holt")
    assert detail.startswith(role), detail


@pytest.mark.parametrize(
    "fact",
    ["His daughter married Ada Byron.",  # a relative's spouse, not his
     "He married Lena Marx.",  # the page's own
     "His wife is German.",  # a nationality, no person
     "He worked with Ada Byron.",  # no role the check reads
     "He lived in Berlin, his wife with him."],  # a place before ", his wife"
)  # fmt: skip
def test_roles_of_others_and_the_page_s_own_persons_are_not_named(fact):
    page = "Max Holt was a chemist. He married Lena Marx in 1930. He met Ada Byron in Berlin."
    assert conflict_detail(fact, "person", [("p0", page)], "Max Holt") == ""


def test_the_demo_s_birth_year_is_vetoed_citing_the_lead_s_birth_date(xml_index):
    """The demo's "He was born in Ulm in 1885" against Einstein's own passages: the reason
    quotes his birth date, not the 1905 papers."""
    from factscore_local.index.reader import KnowledgeSource

    page = KnowledgeSource(require(xml_index)).get_page("Albert Einstein")
    passages = [(f'"{p.title}" #{p.passage_id}', p.clean_text) for p in page.passages[:8]]
    texts = [t for _, t in passages]
    fact = "He was born in Ulm in 1885."
    assert slot_flags(fact, texts, "Albert Einstein")["year"] == 1.0
    detail = conflict_detail(fact, "year", passages)  # the topic from the labels' title
    assert "gives the birth as 14 March 1879" in detail and "1905" not in detail


@pytest.mark.slow
def test_the_demo_vetoes_its_birth_year_quoting_the_birth_date(xml_index, tmp_path):
    """The demo's bios with the default, replayed from a recorded demo run's model results
    (``scripts/cache/demo-1.5b.jsonl.gz``): the fact of the birth in 1885 is vetoed, and its
    reason quotes the birth date the page gives, not the 1905 papers."""
    from factscore_local.api import evaluate
    from factscore_local.data import data_file
    from factscore_local.model_store import installed_path
    from factscore_local.runtime.cache import ResultCache
    from tests.conftest import ROOT

    if installed_path(DEFAULT_LM) is None:
        pytest.skip(f"{DEFAULT_LM} not installed (fscore models install)")
    cache = tmp_path / "demo-cache.db"
    ResultCache(cache).import_file(ROOT / "scripts" / "cache" / "demo-1.5b.jsonl.gz")
    result = evaluate(data_file("demo_bios.jsonl"), xml_index, cache=cache)
    born = [d for row in result.rows for d in row.decisions if "1885" in d.atom]
    assert born and not any(d.is_supported for d in born)
    for d in born:
        assert d.reason.startswith("vetoed: its year conflicts"), d.reason
        assert "14 March 1879" in d.reason and "1905" not in d.reason, d.reason


def test_a_birth_stated_in_a_sentence_is_the_topic_s_only_when_it_names_the_topic():
    """Without the lead's parenthesis, the page's sentence "Ann Lee was born ... in 1950"
    gives her birth; "The boy was born ... in 2002" on her page gives someone else's."""
    page = ["Ann Lee was born in Leeds on 12 May 1950. She starred in Rain (1975)."]
    assert slot_conflicts("Ann Lee was born in 1975.", page, "Ann Lee")["year"] == "contradicted"
    supported, why = decide("Ann Lee was born in 1975.", page, "Ann Lee")
    assert not supported and "the birth as 12 May 1950" in why
    other = ["Ann Lee met Tom Hardy in 2000. The boy was born in 2002 in Leeds."]
    verdicts = slot_conflicts("Ann Lee was born in 1950.", other, "Ann Lee")
    assert verdicts.get("year") != "contradicted"


@pytest.mark.parametrize(
    ("topic", "lead", "false_year", "true_year"),
    [
        ("Darrius Heyward-Bey", "Darrius Heyward-Bey Darrius Ramar Heyward-Bey (born February "
         "26, 1987) is a former American football wide receiver.",
         "Darrius Ramar Heyward-Bey was born on February 26, 2017.",
         "Darrius Ramar Heyward-Bey was born on February 26, 1987."),
        ("Paul O'Neill (racing driver)", "Paul O'Neill (born 31 December 1979) is a British "
         "racing driver.", "Paul O'Neill was born in 2008.", "Paul O'Neill was born in 1979."),
        ("Baltasar Corrada del Río", "Baltasar Corrada del Río (April 10, 1935 – March 25, "
         "2018) was a Puerto Rican politician.", "Baltasar Corrada del Río died in 2007.",
         "Baltasar Corrada del Río died in 2018."),
    ],
)  # fmt: skip
def test_a_name_with_a_hyphen_an_apostrophe_or_an_accent_is_the_topic_s(
    topic, lead, false_year, true_year
):
    """The name's pieces are its words ("Heyward-Bey" is "heyward" and "bey"; a passage
    opens with the page's title, as the index stores it): the fact speaks of the topic, so
    the lead's life dates contradict its year, and the true year is confirmed by them."""
    assert slot_conflicts(false_year, [lead], topic)["year"] == "contradicted"
    assert slot_conflicts(true_year, [lead], topic)["year"] == "confirmed"


SEASON = ["Cy Dee had his best season in 1981, when he threw for 3,195 yards and 21 "
          "touchdowns. He retired after the 1982 season."]  # fmt: skip


CAREER = ["He threw for over 27,000 yards.", "He threw for 183 touchdowns."]


@pytest.mark.parametrize("fact", CAREER)
def test_a_career_total_is_weighed_not_vetoed_against_one_season_s_count(fact):
    assert slot_conflicts(fact, SEASON, "Cy Dee") == {"number": "weak conflict"}
    assert not slot_flags(fact, SEASON, "Cy Dee")["number"]


def test_a_count_given_for_the_season_the_page_gives_it_for_still_conflicts():
    flags = slot_flags("He threw for 4,000 yards in 1981.", SEASON, "Cy Dee")
    assert flags["number"] == 1.0


def test_a_death_the_passages_do_not_date_is_no_conflict_with_their_other_years():
    page = ["Ken Ono was born on 17 March 1907 in Tokushima. In 1937 he was elected to the "
            "Diet. He became prime minister in 1974."]  # fmt: skip
    assert slot_conflicts("Ken Ono died in 1988.", page, "Ken Ono") == {"year": "unknown"}
    undated = ["Ken Ono is a Japanese politician. In 1937 he was elected to the Diet."]
    # a birth the passages miss is mostly an invented one: its year still conflicts
    assert slot_conflicts("Ken Ono was born in 1911.", undated, "Ken Ono") == {"year": "conflict"}
    assert slot_conflicts("Ken Ono was born in 1910.", page, "Ken Ono") == {"year": "contradicted"}
    assert slot_conflicts("He was elected to the Diet in 1940.", page, "Ken Ono") == {
        "year": "conflict"  # an event the page dates otherwise still conflicts
    }


def test_a_score_is_no_count_to_conflict_with():
    page = ["In the 1960 World Series he batted .310 and hit a solo home run in the deciding 2–1 "
            "seventh game victory."]  # fmt: skip
    assert slot_conflicts("He hit 240 home runs.", page, "Bo Ek") == {"number": "unknown"}
    assert slot_conflicts("He hit 3 home runs in the World Series.", [
        "He hit 2 home runs in the World Series."], "Bo Ek") == {"number": "conflict"}  # fmt: skip


def test_a_total_below_one_season_s_count_still_conflicts():
    assert slot_flags("He threw for 12 touchdowns.", SEASON, "Cy Dee")["number"] == 1.0


def test_a_count_near_one_season_s_is_that_season_s_own():
    page = ["In 2011 he caught 45 passes for 694 yards."]
    assert slot_flags("He caught 45 passes for 1,249 yards.", page, "Bo Ek")["number"] == 1.0
    assert not slot_flags("He caught 451 passes for 6,940 yards.", page, "Bo Ek")["number"]
