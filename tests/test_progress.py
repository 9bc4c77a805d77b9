"""The progress line: counts per kind, and the rate of the kind computed last (cache hits
are counted as done but not in the rate)."""

from __future__ import annotations

from factscore_local.runtime.progress import Progress


class Bar:
    def __init__(self) -> None:
        self.postfix = ""

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text


def test_counts_and_the_rate_of_the_kind_computed_last():
    progress, bar = Progress(), Bar()
    progress.attach(bar)
    progress.expect("generate", 10)
    progress.done("generate", 4, computed=False)  # from the cache
    assert bar.postfix == "sentences 4/10"  # nothing computed: no rate yet
    progress.done("generate", 6)
    assert bar.postfix.startswith("sentences 10/10, ") and bar.postfix.endswith(" sentences/s")
    progress.expect("true_false", 3)
    progress.done("true_false", 3)
    assert bar.postfix.startswith("sentences 10/10, facts 3/3, ")
    assert bar.postfix.endswith(" facts/s")
    progress.attach(None)  # a new run starts from nothing
    assert progress.summary() == ""
