"""Progress of a run at the grain a person waits on: sentences decomposed, facts verified.

Every cached model call reports what it was asked for and each slice it finishes (cache
hits count as done at once); a bar over the bios shows the counts and the rate of the
kind computed last (sentences or facts per second), so it moves while a long bio is
being worked on.

A batched run verifies the facts of many bios in one call, so no bio's row is written
before the batch ends. The bar still counts bios as their facts are verified: the run says
how many facts each bio of the batch has (:meth:`Progress.start_bios`), and the bar shows
as done the bios whose facts, taken in that order, the verified share covers. The facts
are verified grouped by their page, so a bio's facts finish together; when the batch's
rows are written (:meth:`Progress.end_bios`) the bar counts them exactly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

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
        self.bios_written = 0  # bios of the batches ended so far
        self.bios_shown = 0  # bios the bar counts (those written, and the batch's estimate)
        self._batch: tuple[str, list[int], int, int] | None = None  # kind, ends, done, total

    def start_bios(self, facts: Sequence[int], kind: str = "true_false") -> None:
        """A batch's bios are about to be verified: ``facts`` holds each one's number of
        facts (model and human facts; 0 for a bio with none), in the order they are
        verified. From here the bar counts as done the bios whose facts are covered by
        the share of ``kind``'s items verified since."""
        ends, total = [], 0
        for n in facts:
            total += max(0, n)
            ends.append(total)
        done, expected = self.counts.get(kind, [0, 0])
        self._batch = (kind, ends, done, expected)
        self._count_bios()

    def end_bios(self, n: int) -> None:
        """A batch of ``n`` bios is written: the bar counts exactly the bios written."""
        self.bios_written += n
        self._batch = None
        self._move_bar(self.bios_written)

    def expect(self, kind: str, n: int) -> None:
        self.counts.setdefault(kind, [0, 0])[1] += n
        self.since.setdefault(kind, time.perf_counter())
        self._show()

    def done(self, kind: str, n: int, computed: bool = True) -> None:
        self.counts.setdefault(kind, [0, 0])[0] += n
        if computed and n:
            self.computed[kind] = self.computed.get(kind, 0) + n
            self.last = kind
        if self._batch is not None and kind == self._batch[0]:
            self._count_bios()
        self._show()

    def _count_bios(self) -> None:
        """The bar at the bios of the batch whose facts the verified share covers (never
        back: a later call of the same kind adds items to verify)."""
        kind, ends, done0, expected0 = self._batch
        done, expected = self.counts.get(kind, [0, 0])
        share = (done - done0) / (expected - expected0) if expected > expected0 else 0.0
        covered = share * (ends[-1] if ends else 0)
        finished = sum(1 for end in ends if end <= covered)
        self._move_bar(max(self.bios_shown, self.bios_written + finished))

    def _move_bar(self, n: int) -> None:
        if n != self.bios_shown and self.bar is not None:
            self.bar.update(n - self.bios_shown)
        self.bios_shown = n

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
