"""Write the benchmark pages of the docs from the results files.

    python -m docs.generate [--out docs/benchmarks]

One page per results file (``scripts/results/<name>.json``): what it measures, the exact
command, its tables, how to read them, and where and when it ran; an index page listing
them; and the README's tables: ``headline.md``, the dev-set ER and F1 of the default
verifier beside the paper's, per subject; ``contradictions.md``, the counterfactual probe;
``raw-text.md``, the estimate from raw text beside the one from atomic facts. Into
``docs/benchmarks/`` (the default ``--out``) it also rewrites the guides' generated blocks
and copies the README's tables into the README (``docs.generate.readme_headline``). Nothing
here is typed by hand: edit a results file's ``title``, ``about`` or ``reading`` (kept when
the benchmark is rerun), or rerun the benchmark.

A results file may lay its figures out as tables of its own (``tables``: a list of
{"title", "prefix", "columns", "rows_head", "digits", "note"}): each table takes the figures
named ``<prefix>/<row>/<column>``, one row per ``<row>`` in their order; a column is a
figure's remaining name, or {"head", "cell", "digits"} with ``cell`` a template naming the
row's figures in braces ("{er} [{er_low}, {er_high}]"; a figure absent from a cell that
shows others reads "–"). Figures no table shows follow in one table. ``recorded_because``
says why the checker does not re-run it; ``code``, where its code is once it left the tree.
"""

from __future__ import annotations

import argparse
import functools
import re
from pathlib import Path

from docs.generate import contradictions_doc, other_lm_doc, readme_headline, servers_doc
from docs.generate.build_full_doc import GUIDE, page_tables, splice_guide
from docs.generate.index import index_page
from docs.generate.markdown import GENERATED, cell, md_table

# The README's blocks, written beside the pages (and read from here by the tests).
from docs.generate.readme_blocks import DEFAULT_RULE, README_TABLES
from docs.generate.readme_blocks import HEADLINE as HEADLINE
from docs.generate.readme_blocks import PROBE as PROBE
from docs.generate.readme_blocks import RAW_TEXT as RAW_TEXT
from docs.generate.readme_blocks import SPEED as SPEED
from docs.generate.readme_blocks import contradictions as contradictions
from docs.generate.readme_blocks import headline as headline
from docs.generate.readme_blocks import raw_text as raw_text
from docs.generate.readme_blocks import run_time as run_time
from factscore_local.declarations.verifiers import NUMBER_VETO_RULE, NUMBER_YEAR_VETO_RULE
from scripts.common import RESULTS, ROOT, SUBJECTS, code_left, read_results
from scripts.tables.paper import PAPER_T3, PAPER_T9
from scripts.tables.results import TABLE1_KEYS

DOCS = ROOT / "docs" / "benchmarks"
VERIFIERS = ("always-supported", "always-not-supported", "random", "no-context-lm", "np",
             "retrieve-lm", "retrieve-lm+np", "retrieve-lm+np-fitted",
             "retrieve-lm+np+coverage-fitted", "retrieve-lm+np+coverage+slots-fitted",
             NUMBER_VETO_RULE, NUMBER_YEAR_VETO_RULE, DEFAULT_RULE)  # fmt: skip


def figures_table(figures: dict) -> str:
    """Any results file's figures, grouped by the first part of their names: one row per
    group, one column per remaining name."""
    groups: dict[str, dict[str, object]] = {}
    for name, value in figures.items():
        group, _, rest = name.partition("/")
        groups.setdefault(group if rest else "", {})[rest or group] = value
    columns = list(dict.fromkeys(k for g in groups.values() for k in g))
    if len(columns) > 8:  # too wide: one row per figure
        return md_table(["figure", "value"], [[k, v] for k, v in figures.items()])
    return md_table(["", *columns], [[g, *(v.get(c) for c in columns)] for g, v in groups.items()])


def tables_pages(figures: dict) -> str:
    """The tables' results: Table 1, Tables 3 and 9, the split by page length, the AUCs."""
    t1 = md_table(
        ["", *(f"{s} (dev)" for s in SUBJECTS)],
        [[k, *(figures.get(f"table1/{s}/{k}") for s in SUBJECTS)] for k in TABLE1_KEYS],
    )
    rows = []
    for verifier in VERIFIERS:
        for thresholds in ("-", "default", "cross-fitted"):
            prefix = f"{verifier}/{thresholds}"
            if f"{prefix}/{SUBJECTS[0]}/er" not in figures:
                continue
            cells = []
            for s in SUBJECTS:
                er, fs = figures[f"{prefix}/{s}/er"], figures[f"{prefix}/{s}/fs"]
                cells += [f"{er:.1f} ({fs:.1f})", f"{figures[f'{prefix}/{s}/f1']:.1f}"]
            paper = ""
            if verifier in PAPER_T3:
                pairs = zip(PAPER_T3[verifier], PAPER_T9[verifier], strict=True)
                paper = " · ".join(f"{er} / {f1}" for (er, _), f1 in pairs)
            name = f"**{verifier}**" if verifier == DEFAULT_RULE else verifier
            rows.append([name, thresholds, *cells, paper])
    head = ["verifier", "thresholds", *(f"{s} {k}" for s in SUBJECTS for k in ("ER (FS)", "F1"))]
    t39 = md_table([*head, "paper ER / F1 (Inst-LLaMA 7B)"], rows)
    intervals = []
    for verifier in VERIFIERS:
        prefix = f"{verifier}/cross-fitted"
        if f"{prefix}/{SUBJECTS[0]}/er_low" in figures:
            intervals.append([verifier, *(
                f"{figures[f'{prefix}/{s}/er']:.1f} [{figures[f'{prefix}/{s}/er_low']:.1f}, "
                f"{figures[f'{prefix}/{s}/er_high']:.1f}] · {figures[f'{prefix}/{s}/f1']:.1f} "
                f"[{figures[f'{prefix}/{s}/f1_low']:.1f}, {figures[f'{prefix}/{s}/f1_high']:.1f}]"
                for s in SUBJECTS)])  # fmt: skip
    pages = []
    for verifier in VERIFIERS:
        for part in ("<=5", ">5"):
            prefix = f"{verifier}/pages{part}"
            if f"{prefix}/topics" in figures:
                pages.append([verifier, part, figures[f"{prefix}/topics"], *(
                    f"{figures[f'{prefix}/{s}/er']:.1f} / {figures[f'{prefix}/{s}/f1']:.1f}"
                    for s in SUBJECTS)])  # fmt: skip
    halves = [[verifier, *(f"{figures[f'{verifier}/cross-fitted/half{h}/mean_er']:.2f} · "
                           f"{figures[f'{verifier}/cross-fitted/half{h}/mean_f1']:.2f}"
                           for h in (0, 1))]
              for verifier in VERIFIERS
              if f"{verifier}/cross-fitted/half0/mean_er" in figures]  # fmt: skip
    spread = []  # the default rule over random topic halvings (--repeats)
    for verifier in VERIFIERS:
        p = f"{verifier}/repeated"
        if f"{p}/{SUBJECTS[0]}/er_mean" in figures:
            spread.append([verifier, figures[f"{p}/{SUBJECTS[0]}/splits"], *(
                f"{figures[f'{p}/{s}/er_mean']:.2f} ± {figures[f'{p}/{s}/er_sd']:.2f} · "
                f"{figures[f'{p}/{s}/f1_mean']:.2f} ± {figures[f'{p}/{s}/f1_sd']:.2f} · "
                f"{figures[f'{p}/{s}/bias_mean']:+.2f}" for s in SUBJECTS)])  # fmt: skip
    aucs = ", ".join(f"{k.split('/', 1)[1]} {cell(v)}" for k, v in figures.items()
                     if k.startswith("auc/"))  # fmt: skip
    return "\n\n".join([
        "### Table 1: the labeled dev files (no model)", t1,
        "### Tables 3 and 9: ER (estimated FActScore) and micro-F1 per verifier", t39,
        "Cross-fitted: thresholds fitted on one topic half, measured on the other, both ways.",
        "### The fitted rules per topic half (mean over subjects: ER · F1)",
        md_table(["verifier", "half 0", "half 1"], halves),
        "A rule becomes the default only if it wins on both halves.",
        *(["### Over random topic halvings (mean ± sd of ER · of F1 · estimate minus humans)",
           md_table(["verifier", "splits", *SUBJECTS], spread),
           "The fixed halves are one split of the topics; a fitted rule's cutoff makes one "
           "split's ER move by about half a point when a few facts do. The same cross-fitting "
           "repeated over random halvings gives a steadier figure for comparing versions."]
          if spread else []),
        "### Bootstrap 95% intervals, cross-fitted (ER [low, high] · F1 [low, high])",
        md_table(["verifier", *SUBJECTS], intervals),
        "### By page length (cross-fitted; ER / F1)",
        md_table(["verifier", "passages", "topics", *SUBJECTS], pages),
        f"AUC on the human facts (supported vs not): {aucs}.",
    ])  # fmt: skip


RENDERERS = {"scripts.reproduce_tables": tables_pages, "scripts.bench_build_full": page_tables}
FIELD = re.compile(r"\{([^{}]+)\}")  # a figure named in a cell template


def fixed(value: object, digits: int | None) -> str:
    """A figure as a cell, floats with ``digits`` decimals when given."""
    if digits is not None and isinstance(value, float):
        return f"{value:,.{digits}f}"
    return cell(value)


def _grid(figures: dict, spec: dict) -> tuple[dict[str, dict], list[dict], set[str]]:
    """A laid-out table's rows ({row: {column: value}}), its columns ({"head", "cell"}) and
    the names of the figures its cells show."""
    prefix = spec["prefix"].rstrip("/") + "/"
    rows: dict[str, dict[str, object]] = {}
    where: dict[str, tuple[str, str]] = {}
    for name, value in figures.items():
        if name.startswith(prefix):
            row, _, column = name[len(prefix) :].partition("/")
            rows.setdefault(row, {})[column or "value"] = value
            where[name] = (row, column or "value")
    columns = spec.get("columns") or list(dict.fromkeys(c for r in rows.values() for c in r))
    columns = [c if isinstance(c, dict) else {"head": c, "cell": "{" + c + "}"} for c in columns]
    named = {n for c in columns for n in FIELD.findall(c["cell"])}
    rows = {label: row for label, row in rows.items() if named & set(row)}  # rows it shows
    return rows, columns, {name for name, (_, column) in where.items() if column in named}


def layout_table(figures: dict, spec: dict) -> str:
    """One of the tables a results file lays out (see the module's docstring)."""
    rows, columns, _ = _grid(figures, spec)

    def fill(row: dict, column: dict) -> str:
        names = FIELD.findall(column["cell"])
        if all(row.get(n) is None for n in names):  # a cell without any of its figures
            return ""
        digits = column.get("digits", spec.get("digits"))
        shown = {n: "–" if row.get(n) is None else fixed(row[n], digits) for n in names}
        return FIELD.sub(lambda m: shown[m.group(1)], column["cell"])

    table = md_table(
        [spec.get("rows_head", ""), *(c["head"] for c in columns)],
        [[label, *(fill(row, c) for c in columns)] for label, row in rows.items()],
    )
    parts = [f"### {spec['title']}" if spec.get("title") else "", table, spec.get("note", "")]
    return "\n\n".join(p for p in parts if p)


def layout(figures: dict, specs: list[dict]) -> str:
    """A results file's own tables, then every figure none of their cells shows."""
    shown = set().union(*(_grid(figures, spec)[2] for spec in specs))
    rest = {k: v for k, v in figures.items() if k not in shown}
    parts = [layout_table(figures, spec) for spec in specs]
    if rest:
        parts += [
            "### Other figures",
            md_table(["figure", "value"], [[k, v] for k, v in rest.items()]),
        ]
    return "\n\n".join(parts)


def page(record: dict) -> str:
    """One benchmark's page, titled by the record's ``title`` (typed by hand, in words).

    Raises:
        ValueError: the record has no title.
    """
    if not record.get("title"):
        raise ValueError(f"scripts/results/{record['name']}.json has no 'title': give "
                         "its page a title in words (its prose is typed by hand)")  # fmt: skip
    render = RENDERERS.get(record.get("module", ""), lambda f: figures_table(f))
    if record.get("tables"):
        render = functools.partial(layout, specs=record["tables"])
    machine = record.get("machine", {})
    where = ", ".join(cell(machine.get(k)) for k in ("cpu", "gpu") if machine.get(k))
    cores = machine.get("cores")
    ran = f"{record['date'][:10]} at commit `{record['commit']}`" + (
        f" on {where}" + (f", {cores} cores" if cores else "") if where else ""
    )
    if record.get("seconds"):
        ran += f"; {record['seconds']:g} s wall"
    if record.get("peak_rss_mb"):
        ran += f", peak RSS {record['peak_rss_mb']:,.0f} MB"
    status = (
        "Replayed by `python -m scripts.check " + record["name"] + "` from the committed cache."
        if record.get("replay")
        else "Recorded, not re-run by the checker "
        f"({record.get('recorded_because', 'a timing or a run of hours')})."
    )
    if code_left(record):  # a record whose code left the tree: where git keeps it
        status += f" Its code has left the tree; git keeps it: `{code_left(record)}`."
    data = record.get("data", {})
    used = "; ".join(f"{k}: {v}" for k, v in data.items()
                     if not isinstance(v, list) or len(v) <= 5)  # fmt: skip
    parts = [  # the title first: the site names the page by a leading heading only
        f"# {record['title']}",
        GENERATED.format(f"{record['name']}.json"),
        f"Status: **{record.get('status', 'current')}**"
        + (f" ({record['status_because']})." if record.get("status_because") else "."),
        record.get("about", ""),
        f"```bash\n{record['command']}\n```",
        f"Ran {ran}. Data: {used}. {status}",
        render(record["figures"]),
        record.get("reading", ""),
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def write_docs(out: Path = DOCS) -> list[Path]:
    """Writes every page; returns their paths."""
    records = [read_results(p) for p in sorted(RESULTS.glob("*.json"))]
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for record in records:
        path = out / f"{record['name']}.md"
        path.write_text(page(record), "utf-8")
        written.append(path)
    # the README's tables: each read from its results file, when that file exists
    readme = [(title, page_name, make, record)
              for name, title, page_name, make in README_TABLES
              for record in records if record["name"] == name]  # fmt: skip
    index = out / "index.md"
    shown = [(title, page_name, record) for title, page_name, _, record in readme]
    index.write_text(index_page(records, shown, md_table), "utf-8")
    written.append(index)
    for _, page_name, make, record in readme:
        (out / page_name).write_text(make(record), "utf-8")
        written.append(out / page_name)
    return written


def main(argv: list[str] | None = None) -> int:
    """Writes the pages."""
    ap = argparse.ArgumentParser(prog="python -m docs.generate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--out", type=Path, default=DOCS)
    args = ap.parse_args(argv)
    for path in write_docs(args.out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    if args.out == DOCS and splice_guide():  # the full-Wikipedia guide's generated block
        print(GUIDE.relative_to(ROOT))
    if args.out == DOCS and other_lm_doc.splice_guide():  # the calibration's cost
        print(other_lm_doc.GUIDE.relative_to(ROOT))
    if args.out == DOCS and servers_doc.splice_guide():  # vLLM's agreement, per dtype
        print(servers_doc.GUIDE.relative_to(ROOT))
    if args.out == DOCS and contradictions_doc.splice_guide():  # the veto's precision
        print(contradictions_doc.GUIDE.relative_to(ROOT))
    if args.out == DOCS and readme_headline.splice_readme():  # the README's tables
        print(readme_headline.README.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
