"""``fscore report``: one self-contained HTML file from ``fscore eval --out`` files.

The page holds the summary per subject LM with how its score and length penalty read, the
paper's Figure 2 pictures (FActScore per entity-frequency class; supported facts by
position in the generation) as inline SVG where they have enough points (``plots.py``), and
every bio with its generation, "k of n supported" and its penalty, its facts with their
decisions, signals (hover text says what each is) and the passages behind each, numbered by
passage id as the reasons are, a veto's conflicting value marked (``views.py``). Search and
filters; with human labels, disagreements highlighted (the labeled-only parts are left out
of an unlabeled run's page). Nothing is loaded from the network: styles, script, figures and
passages are all inside the file.

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

from factscore_local.pipeline.records.run_record import describe
from factscore_local.report import plots
from factscore_local.report.data import (
    Subject,
    score_by_category,
    subject_summary,
    support_by_position,
)
from factscore_local.report.views import bio_view, penalty_of, score_words, signals_shown

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


HEAD_HINTS = {
    "bios": "bios in the file (with those that could not be evaluated)",
    "respond ratio": "the share of bios that gave facts (%); an abstention does not respond",
    "facts / response": "atomic facts per responding bio",
    "FActScore": "the mean over the responding bios of each bio's share of supported facts "
    "times its length penalty (%)",
    "without length penalty": "the mean of the bios' shares of supported facts (%)",
    "human (no penalty)": "the same mean from the human labels",
    "ER [95% CI]": "|estimated - human| FActScore without the penalty (+: over-, -: "
    "under-estimate)",
    "F1 not-supported [95% CI]": "F1 on the human atomic facts labeled not supported",
}


def summary_rows(summaries: dict[str, dict]) -> dict:
    """The summary table's header (text, hover text) and cells (plain text) per subject LM;
    ``labeled`` when some subject has human labels (the validation columns)."""
    labeled = any("validation" in s for s in summaries.values())
    names = ["subject LM", "bios", "respond ratio", "facts / response", "FActScore",
             "without length penalty"]  # fmt: skip
    if labeled:
        names += ["human (no penalty)", "ER [95% CI]", "F1 not-supported [95% CI]"]
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
    head = [(h, HEAD_HINTS.get(h, "")) for h in names]
    return {"head": head, "rows": rows, "labeled": labeled}


def penalty_note(subjects: list[Subject]) -> dict:
    """How the score and its length penalty read, with this run's gamma and, where a bio
    carries a penalty, that bio worked through ("5 of 8 supported = 62.5%, × 0.78 = 48.7")."""
    gammas = sorted({g for s in subjects if (g := s.gamma) is not None})
    gamma = (f"γ = {', '.join(f'{g:g}' for g in gammas)} in this run" if gammas
             else "γ as the run set it (10 unless --gamma)")  # fmt: skip
    example = None
    for subject in subjects:
        g = subject.gamma
        row = next((r for r in subject.rows if r.init_score and (penalty_of(r, g) or 1) < 1 - 1e-9),
                   None)  # fmt: skip
        if row is not None:
            kn, score = score_words(row, g)
            example = f"{row.topic} ({subject.name}): {kn}, {score}"
            break
    return {"gamma": gamma, "off": gammas == [0.0], "example": example}


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
    texts = passage_texts(subjects, index)
    facts = [f for s in subjects for r in s.rows for f in (*r.decisions, *_human_facts(r))]
    signals = signals_shown(facts)
    labeled = any(_human_facts(r) for s in subjects for r in s.rows)
    figures = [
        ("fig-frequency", plots.score_by_category_figure(by_class) if by_class else None),
        ("fig-position", plots.support_by_position_figure(numbers["support_by_position"])),
    ]
    # Markup: the only values the template does not escape (our own SVG, files and JSON).
    context = {
        "title": title,
        "n_subjects": len(subjects),
        "n_bios": sum(len(s.rows) for s in subjects),
        "created": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "summary": summary_rows(numbers["summary"]),
        "penalty": penalty_note(subjects),
        "labeled": labeled,
        "figures": [
            {
                "id": fid,
                "svg": Markup(f.svg) if f and f.svg else None,
                "caption": f.caption if f else None,
            }
            for fid, f in figures
        ],  # fmt: skip
        "signals": signals,
        "subject_names": [s.name for s in subjects],
        "bios": [bio_view(s, row, signals, texts) for s in subjects for row in s.rows],
        "generation_notes": [(s.name, n) for s in subjects for n in s.generation_notes],
        "records": [
            {
                "subject": s.name,
                "description": describe(r),
                "json": json.dumps(r, indent=1, ensure_ascii=False),
            }
            for s in subjects
            for r in s.records
        ],
        "passages": Markup(_script_json(texts)),
        "style": Markup((ASSETS / "report.css").read_text("utf-8")),
        "script": Markup((ASSETS / "report.js").read_text("utf-8")),
    }
    return environment().get_template(PAGE).render(context)


def _human_facts(row) -> tuple:
    return row.human.facts if row.ok and row.human is not None else ()


def write_report(out: Path, html: str) -> None:
    """Writes the page (its folder made where needed)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, "utf-8")
