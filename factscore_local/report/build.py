"""``fscore report``: one self-contained HTML file from ``fscore eval --out`` files.

The page holds the summary per subject LM, the paper's Figure 2 pictures (FActScore per
entity-frequency class; supported facts by position in the generation) as inline SVG, and
every bio with its facts, decisions, margin / NP and the passages behind each fact
(searchable and filterable; with human labels, disagreements highlighted). Nothing is
loaded from the network: styles, script, figures and passages are all inside the file.

This module gathers what the page shows as plain values; the markup is the jinja2 template
``templates/report.html.j2``, rendered with autoescaping (text from the rows is never
markup).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from factscore_local.pipeline.records.rows import BioRow
from factscore_local.pipeline.records.run_record import describe
from factscore_local.report import plots
from factscore_local.report.data import (
    Subject,
    score_by_category,
    subject_summary,
    support_by_position,
)

ASSETS = Path(__file__).with_name("assets")
TEMPLATES = Path(__file__).with_name("templates")
PAGE = "report.html.j2"


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def _num(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _interval(values) -> str:
    return f" [{values[0]:.1f}, {values[1]:.1f}]" if values else ""


@cache
def environment() -> Environment:
    """The page's jinja2 environment: autoescaping on for the ``.html.j2`` template (and
    any template given as a string), so text from the rows can never become markup."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["num"] = _num
    return env


def summary_rows(summaries: dict[str, dict]) -> dict:
    """The summary table's header and cells (plain text) per subject LM; ``labeled`` when
    some subject has human labels (the validation columns)."""
    labeled = any("validation" in s for s in summaries.values())
    head = ["subject LM", "bios", "respond ratio", "facts / response", "FActScore",
            "without length penalty"]  # fmt: skip
    if labeled:
        head += ["human (no penalty)", "ER [95% CI]", "F1 not-supported [95% CI]"]
    rows = []
    for name, s in summaries.items():
        cells = [
            name,
            str(s["n_bios"]),
            _pct(s["respond_ratio"]),
            _num(s["num_facts_per_response"], 1),
            _pct(s["score"]),
            _pct(s["init_score"]),
        ]
        v = s.get("validation")
        if labeled:
            cells += (
                [
                    f"{v['human_score']:.1f}",
                    f"{v['error_rate']:.1f}{v['mark']}{_interval(v.get('error_rate_ci95'))}",
                    f"{v['f1_micro']:.1f}{_interval(v.get('f1_micro_ci95'))}",
                ]
                if v
                else ["", "", ""]
            )
        rows.append(cells)
    return {"head": head, "rows": rows, "labeled": labeled}


def bio_view(subject: str, row: BioRow) -> dict:
    """What the page shows of one bio: the parts of its one-line summary and its facts."""
    view = {"subject": subject, "topic": row.topic, "error": None}
    if not row.ok:
        return view | {"error": row.error or ""}
    parts = [row.topic, subject]
    if row.category:
        parts.append(row.category)
    if not row.responded:
        parts.append("did not respond")
    else:
        parts.append(f"FActScore {_pct(row.score)} ({row.n_facts} facts)")
    human = row.human
    if human is not None:
        if human.score is not None:
            parts.append(f"human {100 * human.score:.1f}")
        disagreements = sum(f.is_supported != (f.label == "S") for f in human.facts)
        if human.facts:
            parts.append(f"{disagreements} disagreements on {len(human.facts)} human facts")
    human_facts = human.facts if human is not None else []
    if row.set_aside:
        parts.append(f"set aside: {len(row.set_aside)}")
    return view | {"parts": parts, "decisions": row.decisions, "human_facts": human_facts,
                   "set_aside": row.set_aside}  # fmt: skip


def passage_texts(subjects: list[Subject], index: Path | None) -> dict[str, tuple[str, str]]:
    """Title and text of every passage a fact was shown with (from the index, when given)."""
    if index is None:
        return {}
    from factscore_local.index.reader import KnowledgeSource

    ids = {
        e.passage_id
        for s in subjects
        for row in s.rows
        for f in (*row.decisions, *(row.human.facts if row.human else ()))
        for e in f.evidence or ()
    }
    ks = KnowledgeSource(index)
    out = {}
    for passage_id in sorted(ids):
        try:
            p = ks.passage(passage_id)
        except KeyError:
            continue
        out[str(passage_id)] = (p.title, p.clean_text)
    return out


def _script_json(value) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


def report_numbers(subjects: list[Subject], categories: dict[str, str] | None = None) -> dict:
    """What the report's summary and figures show, per subject: the summary (with the
    validation where labeled), FActScore per frequency class, support by position."""
    by_class = {s.name: score_by_category(s.rows, categories) for s in subjects}
    return {
        "summary": {s.name: subject_summary(s.rows) for s in subjects},
        "score_by_category": {name: v for name, v in by_class.items() if v},
        "support_by_position": {s.name: support_by_position(s.rows) for s in subjects},
    }


def build_report(
    subjects: list[Subject],
    index: Path | None = None,
    categories: dict[str, str] | None = None,
    title: str = "FActScore report",
    numbers: dict | None = None,
) -> str:
    """The HTML page, rendered from ``templates/report.html.j2``.

    Args:
        subjects: the subject LMs' rows (and run records), from ``load_subjects``.
        index: the index directory the passages behind the facts are read from; None
            leaves them out.
        categories: ``{topic: frequency class}`` for the figure per class.
        title: the page's title.
        numbers: ``report_numbers(subjects, categories)``, when already computed.

    Returns:
        The page, one self-contained HTML document.

    Example:
        >>> html = build_report([Subject("my LM", rows)])  # doctest: +SKIP
    """
    numbers = numbers or report_numbers(subjects, categories)
    by_class = numbers["score_by_category"]
    # Markup: the only values the template does not escape (our own SVG, files and JSON).
    context = {
        "title": title,
        "n_subjects": len(subjects),
        "n_bios": sum(len(s.rows) for s in subjects),
        "created": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "summary": summary_rows(numbers["summary"]),
        "by_class_svg": Markup(plots.score_by_category_svg(by_class)) if by_class else None,
        "by_position_svg": Markup(plots.support_by_position_svg(numbers["support_by_position"])),
        "subject_names": [s.name for s in subjects],
        "bios": [bio_view(s.name, row) for s in subjects for row in s.rows],
        "records": [
            {
                "subject": s.name,
                "description": describe(r),
                "json": json.dumps(r, indent=1, ensure_ascii=False),
            }
            for s in subjects
            for r in s.records
        ],
        "passages": Markup(_script_json(passage_texts(subjects, index))),
        "style": Markup((ASSETS / "report.css").read_text("utf-8")),
        "script": Markup((ASSETS / "report.js").read_text("utf-8")),
    }
    return environment().get_template(PAGE).render(context)


def write_report(out: Path, html: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, "utf-8")
