"""The counterfactual probe on real facts: the labeled dev bios' S facts and their pages in the
dev index (skipped where the shared data or the index is absent)."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

from factscore_local.labels.counterfactual import (
    KINDS,
    Pools,
    SourceFact,
    build_pools,
    make_counterfactuals,
    occurs,
    page_texts,
    sample,
    supported_facts,
)
from factscore_local.pipeline.records.inputs import read_bios
from factscore_local.pipeline.signals.slots import slot_check

ROOT = Path(__file__).resolve().parents[1]
LABELED = ROOT.parent / "shared" / "data" / "factscore" / "labeled-dev"
INDEX = ROOT / "dev-index"
N_TOPICS = 30  # enough facts for every kind, a few seconds of spaCy


@pytest.fixture(scope="module")
def probe():
    if not (LABELED / "ChatGPT.jsonl").is_file() or not (INDEX / "manifest.json").is_file():
        pytest.skip("needs ../shared/data/factscore/labeled-dev and dev-index/ (build-index)")
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.pipeline.decomposition.decompose import load_spacy

    facts = []
    for subject in ("ChatGPT", "PerplexityAI", "InstructGPT"):
        bios = [b for b in read_bios(LABELED / f"{subject}.jsonl") if b.annotations]
        facts += supported_facts(bios[:N_TOPICS], subject)
    pages = page_texts(KnowledgeSource(INDEX), [f.topic for f in facts])
    nlp = load_spacy()
    pools = build_pools(pages.values(), nlp)
    return facts, pages, nlp, pools, make_counterfactuals(facts, pages, nlp, pools, seed=0)


def test_every_kind_changes_one_slot_to_a_value_the_page_lacks(probe):
    facts, pages, _, _, pairs = probe
    kinds = collections.Counter(p.kind for p in pairs)
    assert set(kinds) == set(KINDS), kinds
    for p in pairs:
        assert p.changed != p.original
        # exactly one slot: the same text before and after it
        assert p.original[: p.start] == p.changed[: p.start]
        tail = len(p.original) - p.end
        assert p.original[p.end :] == p.changed[len(p.changed) - tail :]
        assert p.changed[p.start : len(p.changed) - tail] == p.new
        assert p.original[p.start : p.end] == p.old
        core = p.new.split(" ", 1)[1] if p.new.split(" ")[0] in ("a", "an", "A", "An") else p.new
        assert not occurs(core, pages[p.fact.topic]), (p.kind, p.new, p.fact.topic)


def test_years_move_by_four_to_seven(probe):
    pairs = [p for p in probe[4] if p.kind == "year"]
    assert pairs
    assert all(4 <= abs(int(p.new) - int(p.old)) <= 7 for p in pairs)


def test_the_draw_is_seeded(probe):
    facts, pages, nlp, pools, pairs = probe
    again = make_counterfactuals(facts[:200], pages, nlp, pools, seed=0)
    first = [p for p in pairs if p.fact in set(facts[:200])]
    assert [p.to_json() for p in again] == [p.to_json() for p in first]
    assert sample(pairs, 10, seed=3) == sample(pairs, 10, seed=3)
    other = make_counterfactuals(facts[:200], pages, nlp, pools, seed=1)
    assert [p.new for p in other] != [p.new for p in first]


def test_unknown_kind_is_a_clear_error(probe):
    _, pages, nlp, _, _ = probe
    fact = SourceFact(next(iter(pages)), "He was born in 1950.")
    with pytest.raises(ValueError, match="unknown counterfactual kind 'colour'"):
        make_counterfactuals([fact], pages, nlp, Pools(), kinds=("colour",))


def test_slot_check_sees_a_changed_year():
    page = ["Mitzi Gaynor (born September 4, 1931) is an American actress and singer."]
    assert slot_check("Mitzi Gaynor was born on September 4, 1931.", page) == "confirmed"
    assert slot_check("Mitzi Gaynor was born on September 4, 1925.", page) == "conflict"
    assert slot_check("Mitzi Gaynor is a Canadian actress.", page) == "conflict"
    assert slot_check("Mitzi Gaynor starred in films.", page) == "unknown"


def test_stated_replacements_come_from_the_page_in_another_role(probe):
    """The harder probe: each replacement is a value its page states (a year, a number, a
    demonym, a place or a name the page's entities hold), not the slot's own
    value and nowhere in the fact; the slots are the same as the default probe's."""
    from factscore_local.labels.stated import stated_values

    facts, pages, nlp, pools, absent = probe
    topics = sorted(pages)
    docs = nlp.pipe([pages[t] for t in topics])
    stated = {t: stated_values(pages[t], doc, set(pools.places))
              for t, doc in zip(topics, docs, strict=True)}  # fmt: skip
    pairs = make_counterfactuals(facts, pages, nlp, pools, seed=0, stated=stated)
    kinds = collections.Counter(p.kind for p in pairs)
    assert set(kinds) == set(KINDS) - {"occupation"}, kinds  # a job stated is mostly theirs
    same_slot = {(p.fact, p.kind): (p.start, p.end) for p in absent}
    for p in pairs:
        value = re.sub(r"^an?\s+", "", p.new, flags=re.IGNORECASE)  # "a French" -> "French"
        if p.kind == "year":  # as the slot check reads years: "2011References" holds one
            assert value in pages[p.fact.topic], p
        elif p.kind != "number":
            assert occurs(value, pages[p.fact.topic]), p
        assert p.new.lower() != p.old.lower() and not occurs(p.new, p.original), p
        assert same_slot.get((p.fact, p.kind), (p.start, p.end)) == (p.start, p.end)
    numbers = [p for p in pairs if p.kind == "number"]
    assert numbers and all(p.new.replace(",", "") in pages[p.fact.topic].replace(",", "")
                           or p.new.isalpha() for p in numbers)  # fmt: skip


def test_stated_values_read_a_page():
    import random

    from factscore_local.labels.stated import stated_replacement, stated_values
    from factscore_local.pipeline.decomposition.decompose import load_spacy

    page = ("Andre Agassi is an American tennis player. He won the Canadian Open in 1992 and "
            "1995, and 8 Grand Slam titles. He married Steffi Graf in Las Vegas.")  # fmt: skip
    values = stated_values(page, load_spacy()(page))
    assert values.years == ["1992", "1995"] and 8 in values.numbers
    assert values.nationalities == ["American", "Canadian"]  # "the Canadian Open" too
    assert "Steffi Graf" in values.people
    rng = random.Random(0)
    fact = "Andre Agassi is an American tennis player."
    assert stated_replacement("nationality", "American", values, fact, {"agassi"}, rng) == (
        "Canadian"
    )
    assert stated_replacement("year", "1992", values, "He won in 1992.", set(), rng) == "1995"
    assert stated_replacement("work", "Open", values, fact, set(), rng) is None  # none there


def test_stated_names_are_whole_names_the_page_tags_alike():
    """A name is swapped only for one of its kind that the page tags as such, a title only
    for another quoted title, and a place not for the one it is written beside."""
    import random

    from factscore_local.labels.stated import stated_replacement, stated_values
    from factscore_local.pipeline.decomposition.decompose import load_spacy

    page = ('Kyra Sedgwick was born in Manhattan, New York. She starred in "Singles" and '
            '"Phenomenon" with John Travolta, and married Kevin Bacon in Chicago.')  # fmt: skip
    values = stated_values(page, load_spacy()(page))
    assert values.works == ["Phenomenon", "Singles"]  # quoted titles
    rng = random.Random(0)
    swap = stated_replacement  # (kind, old, values, fact, topic tokens, rng)
    assert swap("work", "Singles", values, "She starred in Singles.", set(), rng) == "Phenomenon"
    assert swap("person", "Kevin Bacon", values, "She married Kevin Bacon.", {"sedgwick"},
                rng) == "John Travolta"  # fmt: skip
    # A piece of a longer name is no slot; nor is a place swapped for the one beside it.
    assert swap("person", "Kevin Bacon", values, "She met Kevin Bacon Jr.", set(), rng) is None
    assert "New York" in values.places
    fact = "She was born in Manhattan."
    picks = {swap("place", "Manhattan", values, fact, set(), random.Random(i)) for i in range(9)}
    assert picks == {"Chicago"}
    from factscore_local.pipeline.signals.rivals import country_key

    assert country_key("the U.S.") == country_key("United States") != country_key("UK")
