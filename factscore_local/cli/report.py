"""``fscore report``: an HTML report from ``fscore eval --out`` files."""

from __future__ import annotations

import json
from pathlib import Path

import click

from factscore_local.cli.output import fail


@click.command("report")
@click.argument("outputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--html",
    "html_out",
    required=True,
    type=click.Path(path_type=Path),
    help="The HTML file to write (self-contained: open it offline in any browser).",
)
@click.option(
    "--index",
    type=click.Path(path_type=Path),
    default=None,
    help="Index to read the evidence passages' text from (default: the one the run record "
    "names, where it exists).",
)
@click.option(
    "--categories",
    type=click.Path(path_type=Path),
    default=None,
    help="Topic -> frequency class: a JSON object, or a JSONL with 'topic' and 'cat' (e.g. "
    "the eval input); default: the classes the rows carry.",
)
@click.option(
    "--input",
    "inputs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="An eval input to read the generations from, where the run record's is not there "
    "(repeatable; default: the inputs the run records name, else the rows' source).",
)
@click.option("--title", default="FActScore report", show_default=True, help="The report's title.")
@click.option(
    "--numbers",
    "numbers_out",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the summary's and the figures' numbers to this JSON file.",
)
def report_cmd(outputs, html_out, index, categories, inputs, title, numbers_out) -> None:
    """An HTML report from one or more 'fscore eval --out' files (one per subject LM, or
    one file with several): the summary and how its score reads, the paper's Figure 2
    pictures, every bio with its generation, facts, signals and passages.

    Example: fscore report scored.jsonl --html report.html"""
    from factscore_local.pipeline.records.run_record import RecordError
    from factscore_local.report.build import build_report, report_numbers, write_report
    from factscore_local.report.data import ReportInputError, load_subjects, read_categories

    try:
        subjects = load_subjects(list(outputs), inputs)
        mapping = read_categories(categories) if categories else None
    except (ReportInputError, RecordError, OSError) as exc:
        fail(str(exc))
    if index is None:
        recorded = [Path(r["index"]["path"]) for s in subjects for r in s.records]
        index = next((p for p in recorded if (p / "manifest.json").is_file()), None)
    elif not (index / "manifest.json").is_file():
        fail(f"{index} is not an index directory (no manifest.json)")
    numbers = report_numbers(subjects, mapping)
    write_report(html_out, build_report(subjects, index, mapping, title, numbers))
    if numbers_out is not None:
        numbers_out.parent.mkdir(parents=True, exist_ok=True)
        numbers_out.write_text(json.dumps(numbers, indent=1, default=str) + "\n", "utf-8")
    n_bios = sum(len(s.rows) for s in subjects)
    texts = "with passage texts" if index else "without passage texts (no --index)"
    click.echo(f"wrote {html_out}: {len(subjects)} subject(s), {n_bios} bios, {texts}")


COMMANDS = (report_cmd,)
