"""``fscore report``: one self-contained HTML file from ``fscore eval --out`` files.

The page holds the summary per subject LM, the paper's Figure 2 pictures (FActScore per
entity-frequency class; supported facts by position in the generation) as inline SVG, and
every bio with its facts, decisions, margin / NP and the passages behind each fact
(searchable and filterable; with human labels, disagreements highlighted). Nothing is
loaded from the network: styles, script, figures and passages are all inside the file.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape
from pathlib import Path

from factscore_local.pipeline.records import BioRow, FactResult
from factscore_local.report import plots
from factscore_local.report.data import (
    Subject,
    score_by_category,
    subject_summary,
    support_by_position,
)
from factscore_local.runtime.run_record import describe

ASSETS = Path(__file__).with_name("assets")


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def _num(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _interval(values) -> str:
    return f" [{values[0]:.1f}, {values[1]:.1f}]" if values else ""


def summary_table(summaries: dict[str, dict]) -> str:
    labeled = any("validation" in s for s in summaries.values())
    head = ["subject LM", "bios", "respond ratio", "facts / response", "FActScore",
            "without length penalty"]  # fmt: skip
    if labeled:
        head += ["human (no penalty)", "ER [95% CI]", "F1 not-supported [95% CI]"]
    lines = ["<table id='summary'><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for name, s in summaries.items():
        cells = [
            escape(name),
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
        lines.append(
            "<tr>" + "".join(
                f"<td{'' if i == 0 else ' class=num'}>{c}</td>" for i, c in enumerate(cells)
            ) + "</tr>"
        )  # fmt: skip
    lines.append("</table>")
    note = (
        "<p class=muted>FActScore: mean over responding bios, with the length penalty the "
        "run used; ER: |estimated - human| FActScore without the penalty, over the bios "
        "where both respond (+: over-, -: under-estimate); F1 on the human atomic facts "
        "labeled not supported (IR counted as not supported).</p>"
    )
    return "\n".join(lines) + (note if labeled else "")


def _evidence_cell(fact: FactResult) -> str:
    buttons = "".join(
        f"<button class=ev data-p='{e.passage_id}' title='rank {e.rank + 1}, score {e.score}'>"
        f"{escape(e.title)} #{e.rank + 1}</button>"
        for e in fact.evidence or ()
    )
    if fact.block:
        buttons += f"<div class=muted>judged against a block of {len(fact.block)} passages</div>"
    return buttons


def _fact_rows(facts, human: bool) -> str:
    out = []
    for i, f in enumerate(facts, start=1):
        disagree = human and f.label is not None and f.is_supported != (f.label == "S")
        classes = "fact " + ("s" if f.is_supported else "ns") + (" disagree" if disagree else "")
        cells = [str(i), escape(f.atom)]
        if human:
            cells.append(escape(f.label or ""))
        cells += [
            "supported" if f.is_supported else "not supported",
            _num(f.margin),
            _num(f.np, 3),
            _num(f.coverage, 2),
            _evidence_cell(f),
        ]
        names = (["num", "atom"] + (["label"] if human else [])
                 + ["decision", "num", "num", "num", "ev"])  # fmt: skip
        out.append(
            f"<tr class='{classes}' data-s='{int(f.is_supported)}' data-d='{int(disagree)}'>"
            + "".join(f"<td class={n}>{c}</td>" for n, c in zip(names, cells, strict=True))
            + "</tr>"
        )
    return "\n".join(out)


def _facts_table(facts, human: bool) -> str:
    head = ["#", "fact"] + (["human"] if human else []) + ["decision", "margin", "NP",
                                                           "coverage", "evidence"]  # fmt: skip
    return (
        "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>\n"
        + _fact_rows(facts, human) + "</table>"
    )  # fmt: skip


def bio_block(subject: str, row: BioRow) -> str:
    attrs = f"class=bio data-subject='{escape(subject)}' data-topic='{escape(row.topic)}'"
    if not row.ok:
        return f"<details {attrs}><summary>{escape(row.topic)} · {escape(subject)} · error: " \
            f"{escape(row.error or '')}</summary></details>"  # fmt: skip
    parts = [escape(row.topic), escape(subject)]
    if row.category:
        parts.append(escape(row.category))
    if not row.responded:
        parts.append("did not respond")
    else:
        parts.append(f"FActScore {_pct(row.score)} ({row.n_facts} facts)")
    human = row.human
    disagreements = 0
    if human is not None:
        if human.score is not None:
            parts.append(f"human {100 * human.score:.1f}")
        disagreements = sum(f.is_supported != (f.label == "S") for f in human.facts)
        if human.facts:
            parts.append(f"{disagreements} disagreements on {len(human.facts)} human facts")
    body = []
    if row.decisions:
        body.append("<h4>Facts of the generation</h4>" + _facts_table(row.decisions, False))
    if human is not None and human.facts:
        body.append("<h4>Human atomic facts</h4>" + _facts_table(human.facts, True))
    return (
        f"<details {attrs}><summary>{' · '.join(parts)}</summary>\n" + "\n".join(body)
        + "</details>"
    )  # fmt: skip


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
    """The HTML page; ``numbers``: report_numbers(subjects, categories), when computed."""
    numbers = numbers or report_numbers(subjects, categories)
    summaries = numbers["summary"]
    by_class = numbers["score_by_category"]
    by_position = numbers["support_by_position"]
    figures = []
    if by_class:
        figures.append(
            "<figure id='fig-frequency'>" + plots.score_by_category_svg(by_class)
            + "<figcaption>FActScore per entity-frequency class (mean over the responding bios "
            "of each class; dashed: the human labels' score of the same bios).</figcaption>"
            "</figure>"
        )  # fmt: skip
    else:
        figures.append(
            "<p class=muted>No frequency class in the rows: give --categories (a JSON "
            "{topic: class}, or the input JSONL with 'cat').</p>"
        )
    figures.append(
        "<figure id='fig-position'>" + plots.support_by_position_svg(by_position)
        + "<figcaption>Supported facts by the position of the fact in the generation (deciles "
        "of each generation's facts; dashed: human atomic facts labeled S).</figcaption>"
        "</figure>"
    )  # fmt: skip
    options = "".join(f"<option>{escape(s.name)}</option>" for s in subjects)
    bios = "\n".join(bio_block(s.name, row) for s in subjects for row in s.rows)
    records = (
        "".join(
            f"<details><summary>{escape(s.name)}: {escape(describe(r))}</summary>"
            f"<pre>{escape(json.dumps(r, indent=1, ensure_ascii=False))}</pre></details>"
            for s in subjects
            for r in s.records
        )
        or "<p class=muted>No run record beside the output files.</p>"
    )
    created = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    passages = _script_json(passage_texts(subjects, index))
    style = (ASSETS / "report.css").read_text("utf-8")
    script = (ASSETS / "report.js").read_text("utf-8")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{style}</style></head>
<body>
<h1>{escape(title)}</h1>
<p class=muted>{len(subjects)} subject LM(s), {sum(len(s.rows) for s in subjects)} bios;
made by fscore report, {created}.</p>
<h2>Summary</h2>
{summary_table(summaries)}
<h2>Figures</h2>
<div class=figures>{"".join(figures)}</div>
<h2>Bios</h2>
<div class=controls>
<input id=query type=search placeholder="search topics and facts" aria-label="search">
<select id=decision aria-label="decision"><option value=all>all facts</option>
<option value=S>supported</option><option value=NS>not supported</option>
<option value=disagree>disagreements with the humans</option></select>
<select id=subject aria-label="subject"><option value="">all subjects</option>{options}</select>
<span id=shown class=muted></span>
</div>
<div id=bios>
{bios}
</div>
<div id=passage hidden><button id=close-passage style="float:right">close</button><h3></h3>
<div></div></div>
<h2>Run records</h2>
{records}
<script type="application/json" id="passages">{passages}</script>
<script>{script}</script>
</body></html>
"""


def write_report(out: Path, html: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, "utf-8")
