"""True facts in other forms (``labels/true_forms.py``): each form restates the page's own
value so that the fact still holds, and the slot check lets it through."""

from __future__ import annotations

import pytest

from factscore_local.labels.counterfactual import SourceFact
from factscore_local.labels.true_forms import FORMS, make_true_forms
from factscore_local.pipeline.signals.slot_values import times
from factscore_local.pipeline.signals.slots import slot_flags

PAGE = ("Ann Lee (born 26 November 1942) is an English singer. Ann Lee was born in "
        "Leeds on 26 November 1942. In 1969 she made her first film. She appeared in 63 "
        "films.")  # fmt: skip
FACTS = [SourceFact("Ann Lee", "Ann Lee was born in 1942."),
         SourceFact("Ann Lee", "In 1969, she made her first film."),
         SourceFact("Ann Lee", "She appeared in 63 films.")]  # fmt: skip


def forms() -> dict[tuple[str, str], str]:
    return {(p.fact.text, p.kind): p.changed for p in make_true_forms(FACTS, {"Ann Lee": PAGE})}


def test_each_form_restates_the_value_so_that_it_still_holds():
    made = forms()
    born = "Ann Lee was born in 1942."
    assert made[(born, "full date")] == "Ann Lee was born on November 26, 1942."
    assert made[(born, "century")] in ("Ann Lee was born in the 20th century.",
                                       "Ann Lee was born in the early 20th century.")  # fmt: skip
    assert made[("She appeared in 63 films.", "rounded number")] == (
        "She appeared in more than 60 films."
    )
    film = "In 1969, she made her first film."
    assert made[(film, "decade")].startswith("In the ") and "1960s" in made[(film, "decade")]
    assert (film, "full date") not in made  # the page gives no day of 1969
    for (fact, form), changed in made.items():
        if form == "rounded number":
            continue
        (new,) = [v for v in times(changed)]
        year = next(int(w) for w in fact.replace(",", "").replace(".", "").split() if w.isdigit())
        assert new.meets(times(f"in {year}")[0]), (form, changed)


def test_the_slot_check_lets_every_form_through():
    for (_, form), changed in forms().items():
        flags = slot_flags(changed, [PAGE], "Ann Lee")
        assert not any(flags[k] for k in ("number", "year", "place", "other")), (form, flags)


def test_the_draw_is_seeded_and_an_unknown_form_is_a_clear_error():
    assert forms() == forms()
    with pytest.raises(ValueError, match="unknown true form 'era'"):
        make_true_forms(FACTS, {"Ann Lee": PAGE}, forms=("era",))
    assert set(FORMS) >= {p.kind for p in make_true_forms(FACTS, {"Ann Lee": PAGE})}
