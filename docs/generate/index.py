"""The docs' benchmark index (``docs/benchmarks/index.md``): the results files grouped by
their status, the figures of record first, then those a later record replaced, then the
experiments that did not win; each with the reason its record gives, its date and whether
the checker replays it."""

from __future__ import annotations

from collections.abc import Callable

from scripts.common import STATUSES

HEADINGS = {
    "current": "Current: the figures of record",
    "superseded": "Superseded: replaced by a later record",
    "negative": "Negative results: experiments that did not win",
}
INTRO = (
    "# Benchmarks\n\nEvery figure comes from a results file in `scripts/results/`; each "
    "file's `status` says what it is now (`current`, `superseded` or `negative`, with the "
    "reason in `status_because`). `python -m scripts.check` reruns the replayable ones and "
    "compares; `python -m scripts.suite list` shows which suite each belongs to; `python -m "
    "docs.generate` writes these pages."
)


def check_state(record: dict) -> str:
    """How the checker treats a record: replayed from its cache, or recorded only (its code
    in git history once it left the tree)."""
    if record.get("replay"):
        return "replayed"
    return "recorded, code in git history" if record.get("code") else "recorded"


def status_of(record: dict) -> str:
    """A record's status; one without is current (a new record)."""
    return record.get("status", "current")


def index_page(
    records: list[dict],
    readme: list[tuple[str, str, dict]],
    table: Callable,
    suites: dict[str, str] | None = None,
) -> str:
    """The index's markdown.

    Args:
        records: every results record, in name order.
        readme: the README's tables as (title, page file, the record it is read from);
            they open the current group.
        table: the docs' markdown table writer (head, rows).
        suites: each record's suite title (default: the suite files', ``scripts.suite``).

    Returns:
        The page, one section per status that has records.

    Example:
        >>> def table(head, rows):
        ...     return "\\n".join(" | ".join(map(str, r)) for r in rows)
        >>> r = {"name": "x", "date": "2026-11-29T00:00", "status": "negative",
        ...      "status_because": "did not win"}
        >>> print(index_page([r], [], table, {"x": "Heads"}).split("\\n\\n")[-1].strip())
        [x](x.md) | did not win | Heads | 2026-11-29 | recorded
    """
    if suites is None:
        from scripts.suite import record_suites

        suites = record_suites()
    sections = [INTRO]
    for status in STATUSES:
        rows = []
        if status == "current":
            rows += [[f"[{title}]({page})", f"read from {record['name']}",
                      suites.get(record["name"], ""), record["date"][:10], check_state(record)]
                     for title, page, record in readme]  # fmt: skip
        rows += [[f"[{r.get('title', r['name'])}]({r['name']}.md)", r.get("status_because", ""),
                  suites.get(r["name"], ""), r["date"][:10], check_state(r)]
                 for r in records if status_of(r) == status]  # fmt: skip
        if rows:
            head = ["benchmark", "why", "suite", "date", "check"]
            sections += [f"## {HEADINGS[status]}", table(head, rows)]
    return "\n\n".join(sections) + "\n"
