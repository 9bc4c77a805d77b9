"""The report's figures, drawn with matplotlib and returned as inline SVG text, each with
the caption of what it draws.

A line is drawn only where it has enough points to be read (``MIN_POINTS``), and a point
only where enough facts or bios stand behind it: two bios' facts split into ten slices give
shares of 0, 50 and 100% that say nothing. What is left out is said in the caption, and the
counts are in the legend (or beside the points). Each drawn line is an SVG group with the id
``<figure>-series-<i>`` (its points: the ``<use>`` markers in it), so a test can count
what is drawn.

The output is reproducible (no date in the metadata, a fixed id salt) and self-contained
(text kept as text, no external fonts or links).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from factscore_local.extras import require

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")
MIN_POINTS = 5  # a line with fewer points is not drawn
MIN_FACTS_PER_SLICE = 5  # a position slice with fewer facts is not a point
MIN_BIOS_PER_CLASS = 3  # nor a frequency class with fewer responding bios


@dataclass
class Series:
    """One line: its subject, label, whether it is the humans', its points (x, y, count)."""

    subject: str
    label: str
    human: bool
    points: list[tuple[float, float, int]]
    count: str  # what stands behind the line, e.g. "183 facts of 6 bios"


@dataclass
class Figure:
    """A figure: its SVG (None: nothing could be drawn), its caption and the lines."""

    svg: str | None
    caption: str
    drawn: list[Series] = field(default_factory=list)
    left_out: list[Series] = field(default_factory=list)


def _pyplot():
    matplotlib = require("matplotlib", "report", "the report's figures")
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "factscore-local"})
    import matplotlib.pyplot as plt

    return plt


def _svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # inline: no XML declaration or doctype


def _split(series: list[Series]) -> tuple[list[Series], list[Series]]:
    drawn = [s for s in series if len(s.points) >= MIN_POINTS]
    return drawn, [s for s in series if len(s.points) < MIN_POINTS]


def _draw(gid: str, drawn: list[Series], colors: dict[str, str], xlabel: str, ylabel: str,
          classes: list[str] | None = None) -> str:  # fmt: skip
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.3))
    for i, s in enumerate(drawn):
        xs, ys, _ = zip(*s.points, strict=True)
        style, alpha = ("s--", 0.6) if s.human else ("o-", 1.0)
        label = f"{s.label} ({s.count})"
        (line,) = ax.plot(xs, ys, style, color=colors[s.label], alpha=alpha, label=label)
        line.set_gid(f"{gid}-series-{i}")
        if classes is not None:  # few points: each says how many bios it is the mean of
            for x, y, n in s.points:
                ax.annotate(f"n={n}", (x, y), textcoords="offset points", xytext=(4, 4),
                            fontsize=6, color=colors[s.label])  # fmt: skip
    if classes is not None:
        ax.set_xticks(range(len(classes)), classes)
    else:
        ax.set_xlim(0, 100)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    # below the axes, where it covers no point
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.18), frameon=False)
    return _svg(fig)


def _colors(subjects, series: list[Series]) -> dict[str, str]:
    """A line's color: its subject's (estimated and human lines of a subject share it)."""
    of = {name: COLORS[i % len(COLORS)] for i, name in enumerate(subjects)}
    return {s.label: of[s.subject] for s in series}


def _caption(what: str, drawn: list[Series], left_out: list[Series], needs: str,
             styles: tuple[str, str]) -> str:  # fmt: skip
    """What the figure shows, how its lines are drawn (only the styles drawn), and the
    lines left out with what they have."""
    counts = "; ".join(f"{s.label}: {s.count}, {len(s.points)} such" for s in left_out)
    if not drawn:
        return f"{what} Not drawn: no line has {MIN_POINTS} {needs} ({counts})."
    said = [styles[0]] if any(not s.human for s in drawn) else []
    said += [styles[1]] if any(s.human for s in drawn) else []
    styles_said = "; ".join(said)
    text = f"{what} {styles_said[:1].upper()}{styles_said[1:]}."
    if left_out:
        text += f" Not drawn, with fewer than {MIN_POINTS} {needs}: {counts}."
    return text


def support_by_position_figure(per_subject: dict[str, dict]) -> Figure:
    """Supported facts by position (``data.support_by_position`` per subject): one line per
    subject and side (estimated; human, where labeled), of the slices that hold at least
    ``MIN_FACTS_PER_SLICE`` facts."""
    series = []
    for name, values in per_subject.items():
        for human in (False, True):
            shares = values.get("human" if human else "estimated")
            if not shares:
                continue
            totals = values["human_totals" if human else "totals"]
            width = 100 / len(shares)
            pairs = enumerate(zip(shares, totals, strict=True))
            points = [(width * (i + 0.5), v, n) for i, (v, n) in pairs
                      if v is not None and n >= MIN_FACTS_PER_SLICE]  # fmt: skip
            bios = values["human_n_bios" if human else "n_bios"]
            label = f"{name}, {'human' if human else 'estimated'}"
            series.append(Series(name, label, human, points, f"{sum(totals)} facts of {bios} bios"))
    drawn, left_out = _split(series)
    needs = f"slices of at least {MIN_FACTS_PER_SLICE} facts"
    what = ("Supported facts by the position of the fact in its generation: each "
            "generation's facts split into ten equal slices, a point where a slice holds at "
            f"least {MIN_FACTS_PER_SLICE} facts.")  # fmt: skip
    caption = _caption(what, drawn, left_out, needs,
                       ("solid: the estimate", "dashed: human atomic facts labeled S"))  # fmt: skip
    if not drawn:
        return Figure(None, caption, [], left_out)
    svg = _draw("position", drawn, _colors(per_subject, series),
                "position of the fact in the generation (%)", "supported facts (%)")  # fmt: skip
    return Figure(svg, caption, drawn, left_out)


def score_by_category_figure(per_subject: dict[str, dict]) -> Figure:
    """FActScore per frequency class (``data.score_by_category`` per subject): one line per
    subject and side, of the classes with at least ``MIN_BIOS_PER_CLASS`` responding bios."""
    classes: list[str] = []
    for values in per_subject.values():
        classes += [c for c in values if c not in classes]
    series = []
    for name, values in per_subject.items():
        bios = sum(v["n"] for v in values.values())
        for human in (False, True):
            key = "human" if human else "estimated"
            points = [(classes.index(c), v[key], v["n"]) for c, v in values.items()
                      if v[key] is not None and v["n"] >= MIN_BIOS_PER_CLASS]  # fmt: skip
            if human and not any(v["human"] is not None for v in values.values()):
                continue
            label = f"{name}, {key}"
            series.append(Series(name, label, human, points, f"{bios} bios"))
    drawn, left_out = _split(series)
    needs = f"classes of at least {MIN_BIOS_PER_CLASS} responding bios"
    what = ("FActScore per entity-frequency class: the mean over the responding bios of "
            f"each class (n: how many), a point where a class has at least "
            f"{MIN_BIOS_PER_CLASS}.")  # fmt: skip
    caption = _caption(what, drawn, left_out, needs, ("solid: the estimate",
                       "dashed: the human labels' score of the same bios"))  # fmt: skip
    if not drawn:
        return Figure(None, caption, [], left_out)
    svg = _draw("frequency", drawn, _colors(per_subject, series), "entity frequency",
                "FActScore (%)", classes)  # fmt: skip
    return Figure(svg, caption, drawn, left_out)
