"""Generation stops at a greedy loop: a line written for the third time ends the output."""

from __future__ import annotations

from factscore_local.lm.base import cut_at_stop, cut_loop, loop_end
from factscore_local.pipeline.components import CachedLM
from factscore_local.runtime.cache import ResultCache, key_of

LOOP = (
    "- A is B.\n- A is B in 1990.\n- A is B in 1990.\n- A is B in 1990.\n- A is B in 1990.\n- A i"
)


def test_loop_end_is_the_newline_of_the_third_copy() -> None:
    assert cut_loop(LOOP) == "- A is B.\n- A is B in 1990.\n- A is B in 1990.\n- A is B in 1990."
    assert loop_end("x\nx\nx") is None  # the third copy is not finished yet
    assert loop_end("x\n\n \nx\n x \n") == 10  # blank lines do not count; spaces are trimmed
    assert cut_loop("- A.\n- B.\n- A.\n- C.") == "- A.\n- B.\n- A.\n- C."  # twice is not a loop


def test_cut_reads_only_what_comes_before_it() -> None:
    # A generation stopped at the loop (a few characters past the newline, as tokens
    # fall) and one that ran on to the token limit give the same output.
    end = loop_end(LOOP)
    assert end is not None
    for stopped_at in range(end + 1, len(LOOP) + 1):
        assert cut_at_stop(LOOP[:stopped_at], ["\n\n"]) == cut_at_stop(LOOP, ["\n\n"])
    # A stop string before the loop still wins.
    assert cut_at_stop("- A.\n\n- A.\n- A.\n- A.\n", ["\n\n"]) == "- A."


class _NoLM:
    capabilities = frozenset()  # nothing: every output is read from the cache

    def generate(self, prompts, max_new_tokens, stop):
        raise AssertionError("every output is cached")


def test_a_long_output_cached_before_the_loop_stop_is_cut_the_same_way() -> None:
    cache = ResultCache(None)
    key = key_of("gen", "m", "prompt", 256, ["\n\n"])
    cache.put_many("generate", {key: LOOP})
    lm = CachedLM(_NoLM(), cache, "m")
    assert lm.generate(["prompt"], 256, ["\n\n"]) == [cut_at_stop(LOOP, ["\n\n"])]
