"""A fact as the signal passes take it: its page, topic, text and where it was decided
(``compute.py``, ``context.py`` and ``passes.py`` all read it; it imports none of them)."""

from __future__ import annotations

from typing import NamedTuple


class FactQuery(NamedTuple):
    title: str  # the topic's page in the index; "": evidence from the whole index
    topic: str  # as the input names it
    atom: str
    group: str = ""  # facts of one group share blocks in the shared-evidence mode
    tier: int = 0  # 1: uses its group's blocks without growing them (a labeled bio's human facts)
    sentence: str = ""  # the sentence the fact was taken from ("" when unknown)
    # The facts decided together (a chunk of bios): in the auto evidence mode each unit
    # chooses a page's kind of block by its own facts, so that verifying many units in one
    # call decides each of them as a call of its own would.
    unit: str = ""
