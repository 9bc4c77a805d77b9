"""A serving engine's own counters during a run, read from its Prometheus endpoint
(``GET /metrics`` on the server's host: vLLM's ``vllm:*``, SGLang's ``sglang:*``).

The run record keeps what moved while the run was connected: each counter's increase
(``*_total``: prompt and generated tokens, requests, preemptions, and the prefix cache's
queries and hits, from which ``prefix_cache_hit_rate``), and the most requests seen running
and waiting in the queue, sampled every second while a batch of requests is in flight
(``watching``). A server without the endpoint (llama.cpp's servers) records nothing.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading

PREFIXES = ("vllm:", "sglang:")
GAUGES = ("num_requests_running", "num_requests_waiting")
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def parse_metrics(text: str) -> dict[str, float]:
    """The engine's samples in Prometheus text, summed over their labels (e.g. over the
    model's name): ``{"vllm:prompt_tokens_total": 1234.0, ...}``."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line.strip())
        if not match or not match.group(1).startswith(PREFIXES):
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        if math.isfinite(value):
            out[match.group(1)] = out.get(match.group(1), 0.0) + value
    return out


class ServerMetrics:
    """The counters of one server over a run: a first reading when the run connects,
    ``sample()`` after each batch of requests, ``summary()`` for the run record."""

    def __init__(self, read) -> None:
        """``read()`` returns the endpoint's text, or None where the server has none."""
        self._read = read
        self.first = self._reading()
        self.last = self.first
        self.peaks: dict[str, float] = {}

    def _reading(self) -> dict[str, float] | None:
        text = self._read()
        return parse_metrics(text) if isinstance(text, str) else None

    def sample(self) -> None:
        if self.first is None:
            return
        reading = self._reading()
        if reading is None:
            return
        self.last = reading
        for name, value in reading.items():
            if name.split(":", 1)[1] in GAUGES:
                self.peaks[name] = max(self.peaks.get(name, 0.0), value)

    @contextlib.contextmanager
    def watching(self, every_s: float = 1.0):
        """Samples every ``every_s`` seconds while the block runs (requests in flight),
        and once at its end: the queue's peaks are seen while it is full."""
        if self.first is None:
            yield
            return
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(every_s):
                self.sample()

        thread = threading.Thread(target=poll, name="lm-server-metrics", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=every_s + 5)
            self.sample()

    def summary(self) -> dict | None:
        """What moved since the run connected (None: the server has no metrics)."""
        if self.first is None or self.last is None:
            return None
        moved = {name: round(value - self.first.get(name, 0.0), 3)
                 for name, value in self.last.items() if name.endswith("_total")}  # fmt: skip
        out: dict = {"counters": {k: v for k, v in moved.items() if v},
                     "peaks": {k: v for k, v in self.peaks.items()}}  # fmt: skip
        for prefix in PREFIXES:
            hits = moved.get(f"{prefix}prefix_cache_hits_total")
            queries = moved.get(f"{prefix}prefix_cache_queries_total")
            if hits is not None and queries:
                out["prefix_cache_hit_rate"] = round(hits / queries, 4)
        return out
