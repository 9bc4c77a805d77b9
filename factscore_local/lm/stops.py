"""Where a generation ends: at a stop string, or at a greedy loop."""

from __future__ import annotations


def cut_at_stop(text: str, stop: list[str]) -> str:
    """The text before its first stop string, and up to the end of a greedy loop (see
    ``loop_end``): what every backend's ``generate`` returns."""
    cut = len(text)
    for s in stop:
        i = text.find(s)
        if i >= 0:
            cut = min(cut, i)
    return cut_loop(text[:cut])


# A line written for the third time: a greedy LM that repeats itself this far does not
# come back (a small LM's decomposition repeats "Diaz was a political leader in Zambales."
# until the token limit), so generation stops there.
LOOP_REPEATS = 3


def loop_end(text: str) -> int | None:
    """The index of the newline that ends the first line written for the LOOP_REPEATS-th
    time (only lines ended by a newline count); None if there is none."""
    seen: dict[str, int] = {}
    start = 0
    while (newline := text.find("\n", start)) >= 0:
        key = text[start:newline].strip()
        if key:
            seen[key] = seen.get(key, 0) + 1
            if seen[key] >= LOOP_REPEATS:
                return newline
        start = newline + 1
    return None


def cut_loop(text: str) -> str:
    """The text up to the end of a greedy loop's LOOP_REPEATS-th line (its newline and all
    after it dropped). It reads only the text before the cut, so a generation stopped at
    the loop and one that ran on to the token limit give the same output (a cached long
    output is cut the same way)."""
    end = loop_end(text)
    return text if end is None else text[:end]
