"""Progress of a run at the grain a person waits on: sentences decomposed, facts verified.

Every cached model call reports what it was asked for and each slice it finishes (cache
hits count as done at once); a bar over the bios shows the counts and the rate of the
kind computed last (sentences or facts per second), so it moves while a long bio is
being worked on.
"""

from __future__ import annotations

import time

LABELS = {"generate": "sentences", "true_false": "facts", "np": "NP", "choice": "pairs"}


class Progress:
    def __init__(self) -> None:
        self.bar = None  # a tqdm bar, or None: count silently
        self.attach(None)

    def attach(self, bar) -> None:
        self.bar = bar
        self.counts: dict[str, list[int]] = {}
        self.computed: dict[str, int] = {}  # items computed (not from the cache), per kind
        self.since: dict[str, float] = {}  # when each kind was first asked for
        self.last = ""  # the kind computed last: its rate is shown

    def expect(self, kind: str, n: int) -> None:
        self.counts.setdefault(kind, [0, 0])[1] += n
        self.since.setdefault(kind, time.perf_counter())
        self._show()

    def done(self, kind: str, n: int, computed: bool = True) -> None:
        self.counts.setdefault(kind, [0, 0])[0] += n
        if computed and n:
            self.computed[kind] = self.computed.get(kind, 0) + n
            self.last = kind
        self._show()

    def summary(self) -> str:
        parts = [
            f"{LABELS.get(kind, kind)} {done}/{total}"
            for kind, (done, total) in self.counts.items()
        ]
        if self.last:
            seconds = time.perf_counter() - self.since[self.last]
            if seconds > 0:
                rate = self.computed[self.last] / seconds
                parts.append(f"{rate:.2f} {LABELS.get(self.last, self.last)}/s")
        return ", ".join(parts)

    def _show(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(self.summary())
