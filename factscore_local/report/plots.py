"""The report's figures, drawn with matplotlib and returned as inline SVG text.

The output is reproducible (no date in the metadata, a fixed id salt) and self-contained
(text kept as text, no external fonts or links).
"""

from __future__ import annotations

import io

from factscore_local.extras import require

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


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


def score_by_category_svg(per_subject: dict[str, dict]) -> str:
    """One line per subject: FActScore per frequency class (solid: estimated, dashed:
    human where labeled)."""
    plt = _pyplot()
    classes: list[str] = []
    for values in per_subject.values():
        classes += [c for c in values if c not in classes]
    fig, ax = plt.subplots(figsize=(5.2, 3.3))
    for color, (name, values) in zip(COLORS * 4, per_subject.items(), strict=False):
        xs = [i for i, c in enumerate(classes) if c in values]
        ax.plot(xs, [values[classes[i]]["estimated"] for i in xs], "o-", color=color,
                label=f"{name} (estimated)")  # fmt: skip
        human = [(i, values[classes[i]]["human"]) for i in xs if values[classes[i]]["human"]]
        if human:
            ax.plot(*zip(*human, strict=True), "s--", color=color, alpha=0.6,
                    label=f"{name} (human)")  # fmt: skip
    ax.set_xticks(range(len(classes)), classes)
    ax.set_xlabel("entity frequency")
    ax.set_ylabel("FActScore (%)")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return _svg(fig)


def support_by_position_svg(per_subject: dict[str, dict]) -> str:
    """One line per subject: share of supported facts per decile of position."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.3))
    for color, (name, values) in zip(COLORS * 4, per_subject.items(), strict=False):
        for key, style, alpha in (("estimated", "o-", 1.0), ("human", "s--", 0.6)):
            shares = values.get(key)
            if not shares:
                continue
            width = 100 / len(shares)
            points = [(width * (i + 0.5), v) for i, v in enumerate(shares) if v is not None]
            ax.plot(*zip(*points, strict=True), style, color=color, alpha=alpha,
                    label=f"{name} ({key})")  # fmt: skip
    ax.set_xlabel("position of the fact in the generation (%)")
    ax.set_ylabel("supported facts (%)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    return _svg(fig)
