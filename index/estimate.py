"""How long a build's dense stage would take on this device, before it starts.

``build-index`` embeds every passage by default (``--dense minilm``); on a full Wikipedia
(~21M passages) at the ~19 passages/s of two CPU cores that is about two weeks. Before
building, :func:`plan_dense` estimates the passages to embed from the source (a FActScore
DB's rows, a JSONL file's lines, an XML dump's bytes), measures the encoder's speed on a
few passages on the build's device, and prints the estimate. Over the limit
(:data:`DEFAULT_MAX_HOURS`, or ``$FSCORE_DENSE_MAX_HOURS``) and with ``--dense`` not given,
the build goes without a global dense index: BM25 and per-page dense scores (each page
embedded on first use) still work.

Example:
    >>> from pathlib import Path
    >>> est = estimate_passages(Path("enwiki-20230401.db"), "db")  # doctest: +SKIP
    >>> est.pages, est.passages  # doctest: +SKIP
    (6600000, 21000000)
"""

from __future__ import annotations

import math
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from factscore_local.index.sources import SEPARATOR

DEFAULT_MAX_HOURS = 2.0
MAX_HOURS_ENV = "FSCORE_DENSE_MAX_HOURS"  # the limit, in hours
RATE_ENV = "FSCORE_DENSE_RATE"  # passages/s: taken as given instead of measured
SAMPLE_ROWS = 1000
# A passage is a window of 256 RoBERTa tokens: ~1,100 characters of English text (the dev
# DB's real passages: 1.15M characters in 1,036 passages).
CHARS_PER_PASSAGE = 1100
# MediaWiki XML per passage the builder cuts from it, measured on the 206-page enwiki excerpt
# of the shared data (6.1 MB of XML, 1.7 MB as bz2, 2,496 passages); rough, for long
# articles heavy in markup.
XML_BYTES_PER_PASSAGE = 2440
BZ2_BYTES_PER_PASSAGE = 680
# Below this many passages no measurement is needed: even at 1 passage/s the stage ends
# within the limit.
SLOWEST_RATE = 1.0


@dataclass
class PassageEstimate:
    """What a source holds: pages and passages (estimated), and how they were counted."""

    pages: int | None
    passages: int
    how: str


def _db(path: Path) -> PassageEstimate:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        top = int(conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM documents").fetchone()[0])
        # point lookups spread over the table (a scan would read all of a 20 GB file)
        ids = sorted({1 + i * top // SAMPLE_ROWS for i in range(SAMPLE_ROWS)}) if top else []
        marks = ",".join("?" * len(ids))
        rows = conn.execute(f"SELECT text FROM documents WHERE rowid IN ({marks})", ids)
        rows = rows.fetchall()
    finally:
        conn.close()
    texts = [t for (t,) in rows if isinstance(t, str)]
    per_page = sum(t.count(SEPARATOR) + 1 for t in texts) / len(texts) if texts else 0.0
    return PassageEstimate(top, round(top * per_page), f"{len(texts)} of {top} rows sampled")


def _jsonl(path: Path) -> PassageEstimate:
    import json

    size, lines, read, passages = path.stat().st_size, 0, 0, 0
    with path.open("rb") as f:
        for raw in f:
            read += len(raw)
            lines += 1
            try:
                text = json.loads(raw).get("text", "")
            except (ValueError, AttributeError):
                continue
            chars = sum(map(len, text)) if isinstance(text, list) else len(str(text))
            passages += math.ceil(chars / CHARS_PER_PASSAGE)
            if lines >= SAMPLE_ROWS:
                break
    scale = size / read if read else 0.0
    how = f"first {lines} lines of {size / 1e9:.2f} GB"
    return PassageEstimate(round(lines * scale), round(passages * scale), how)


def estimate_passages(source: Path, fmt: str) -> PassageEstimate | None:
    """The passages (and pages) a source will give, without reading all of it.

    Args:
        source: the build's source.
        fmt: its format (:func:`factscore_local.index.sources.detect_format`).

    Returns:
        The estimate; None for a format this cannot tell (the summaries formats).
    """
    if fmt == "db":
        return _db(source)
    if fmt == "jsonl":
        return _jsonl(source)
    if fmt in ("xml", "xml.bz2"):
        size = source.stat().st_size
        per = BZ2_BYTES_PER_PASSAGE if fmt == "xml.bz2" else XML_BYTES_PER_PASSAGE
        return PassageEstimate(None, round(size / per), f"{size / 1e9:.2f} GB of {fmt}, rough")
    return None


def _sample_texts(n: int) -> list[str]:
    """``n`` passage-sized English texts (the encoder's speed depends on their length)."""
    sentence = (
        "The city was founded in the early century and grew into a centre of trade "
        "and learning, with a university, a cathedral and a port on the river. "
    )
    text = (sentence * (CHARS_PER_PASSAGE // len(sentence) + 1))[:CHARS_PER_PASSAGE]
    return [f"Page {i} {text}" for i in range(n)]


def measure_rate(dense: str, device: str, n: int = 64) -> float | None:
    """Passages/s of the dense encoder on ``device`` (``$FSCORE_DENSE_RATE`` when set);
    None when the encoder cannot be loaded (the build then reports why)."""
    if os.environ.get(RATE_ENV):
        return float(os.environ[RATE_ENV])
    try:
        from factscore_local.index.dense import Embedder

        embedder = Embedder(dense, device=device)
        embedder.encode(_sample_texts(8), batch_size=8)  # warm-up
        t0 = time.perf_counter()
        embedder.encode(_sample_texts(n), batch_size=64)
        return n / max(time.perf_counter() - t0, 1e-9)
    except (ImportError, OSError, RuntimeError, ValueError, SystemExit):
        return None


def max_hours() -> float:
    """The limit on the dense stage's estimated time (``$FSCORE_DENSE_MAX_HOURS``)."""
    return float(os.environ.get(MAX_HOURS_ENV) or DEFAULT_MAX_HOURS)


def plan_dense(
    source: Path,
    fmt: str,
    dense: str | None,
    explicit: bool,
    leads: bool = False,
    device: str = "auto",
    echo: Callable[[str], None] = print,
) -> str | None:
    """The dense model to build with, after estimating the dense stage's time.

    Args:
        source: the build's source; fmt: its format.
        dense: the dense model asked for (None: no dense stage, nothing to estimate).
        explicit: whether the user chose ``dense`` (``--dense`` given): then it is kept
            even over the limit, with a warning.
        leads: ``--dense-leads`` (one passage a page is embedded).
        device: where the encoder runs.
        echo: where the estimate and the decision are written.

    Returns:
        ``dense``, or None when the estimate is over the limit and ``dense`` was the default.
    """
    if not dense:
        return dense
    est = estimate_passages(source, fmt)
    if est is None:
        return dense
    limit = max_hours()
    todo = est.pages if leads and est.pages is not None else est.passages
    if todo <= limit * 3600 * SLOWEST_RATE:
        return dense
    rate = measure_rate(dense, device)
    if not rate:
        return dense
    hours = todo / rate / 3600
    what = "leads (first passages)" if leads else "passages"
    echo(f"dense: about {todo:,} {what} to embed ({est.how}) with {dense} on {device} at "
         f"{rate:.0f} passages/s: about {hours:.1f} h")  # fmt: skip
    if hours <= limit:
        return dense
    if explicit:
        echo(f"dense: over the {limit:g} h limit; embedding anyway, as --dense was given")
        return dense
    leads_hint = ""
    if not leads and est.pages:
        leads_hint = f", or --dense-leads for one passage a page (~{est.pages / rate / 3600:.1f} h)"
    echo(f"dense: over the {limit:g} h limit, so this build has no global dense index "
         "(--dense none): BM25 works as usual, and dense scores within a page embed that "
         f"page on first use. To embed every passage anyway, pass --dense {dense}{leads_hint}; "
         f"{MAX_HOURS_ENV} sets the limit in hours.")  # fmt: skip
    return None


def dense_for_build(
    source: Path,
    dense: str | None,
    explicit: bool,
    leads: bool = False,
    device: str = "auto",
    echo: Callable[[str], None] = print,
) -> str | None:
    """:func:`plan_dense` for a build's options as given (``dense`` may be ``"none"``).

    Raises:
        SourceError: the source is not a supported format.
        FileNotFoundError: no source at that path.
    """
    if not dense or dense.lower() == "none":
        return dense
    from factscore_local.index.sources import check_source

    path = Path(source).expanduser().resolve()
    return plan_dense(path, check_source(path), dense, explicit, leads, device, echo)
