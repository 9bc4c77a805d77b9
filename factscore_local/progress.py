"""Progress of a run at the grain a person waits on: sentences decomposed, facts verified.

Every cached model call reports what it was asked for and each slice it finishes (cache
hits count as done at once); a bar over the bios shows the counts and the verification
rate, so it moves while a long bio is being worked on.
"""

from __future__ import annotations

import time

LABELS = {"generate": "sentences", "true_false": "facts", "np": "NP", "choice": "pairs"}
RATED = ("true_false", "choice")  # kinds whose computed items give the rate


class Progress:
    def __init__(self) -> None:
        self.bar = None  # a tqdm bar, or None: count silently
        self.counts: dict[str, list[int]] = {}
        self.started = time.perf_counter()
        self.computed_facts = 0
        self.rate_unit = "facts"

    def attach(self, bar) -> None:
        self.bar, self.counts, self.started = bar, {}, time.perf_counter()
        self.computed_facts = 0

    def expect(self, kind: str, n: int) -> None:
        self.counts.setdefault(kind, [0, 0])[1] += n
        self._show()

    def done(self, kind: str, n: int, computed: bool = True) -> None:
        self.counts.setdefault(kind, [0, 0])[0] += n
        if computed and kind in RATED:
            self.computed_facts += n
            self.rate_unit = LABELS[kind]
        self._show()

    def summary(self) -> str:
        parts = [
            f"{LABELS.get(kind, kind)} {done}/{total}"
            for kind, (done, total) in self.counts.items()
        ]
        seconds = time.perf_counter() - self.started
        if self.computed_facts and seconds > 0:
            parts.append(f"{self.computed_facts / seconds:.2f} {self.rate_unit}/s")
        return ", ".join(parts)

    def _show(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(self.summary())
