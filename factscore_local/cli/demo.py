"""``fscore demo``: build an index from the embedded dump excerpt, look a page up, search,
and estimate FActScore of the project's demo bios, through the Python API."""

from __future__ import annotations

import time
from pathlib import Path

import click

from factscore_local.cli.output import RUN_ERRORS, fail, print_summary
from factscore_local.data import data_file


@click.command("demo")
@click.option(
    "--out",
    default="demo-index",
    show_default=True,
    type=click.Path(path_type=Path),
    help="Where to build the demo index.",
)
@click.option("--lm", default=None, help="LM for the evaluation (default: the embedded 1.5B).")
def demo_cmd(out, lm) -> None:
    """Build an index from the embedded dump excerpt, look a page up, and estimate
    FActScore of the project's demo bios (data/demo_bios.jsonl)."""
    from factscore_local.api import evaluate, read_generations
    from factscore_local.index.demo_data import build_demo_index, find_dump
    from factscore_local.index.reader import KnowledgeSource

    if lm is not None:  # a server that does not answer stops the demo before its build
        from factscore_local.fitted_defaults import model_name

        try:
            model_name(lm)
        except RUN_ERRORS as exc:
            fail(str(exc))
    dump = find_dump()
    click.echo(f"demo: building {out} from {dump.name}")
    # (dense vectors of the pages' leads only: a newcomer need not wait for all ~2,500)
    manifest = build_demo_index(out, dump=dump)
    counts = manifest["counts"]
    click.echo(
        f"demo: {counts['pages']} pages, {counts['redirects']} redirects, "
        f"{counts['passages']} passages in {sum(manifest['timings'].values()):.1f}s"
    )
    ks = KnowledgeSource(out)
    page = ks.get_page("albert einstein")
    click.echo(f"demo: lookup 'albert einstein' -> {page.title} ({len(page.passages)} passages)")
    click.echo("  " + page.passages[0].clean_text[:300])
    for hit in ks.search_dense("who developed the theory of relativity?", k=1):
        click.echo(f"demo: dense search over the pages' leads -> {hit.passage.title}")

    bios_path = data_file("demo_bios.jsonl")
    bios, _ = read_generations(bios_path)
    click.echo(
        f"demo: estimating FActScore of {len(bios)} bios in {bios_path.name} "
        "(atomic facts and True/False with the local LM; CPU, a few minutes)"
    )
    started = time.perf_counter()
    result = evaluate(bios_path, out, lm=lm, out=out / "demo_bios.scored.jsonl", progress=True)
    facts = sum(row.n_facts for row in result.rows if row.ok)
    click.echo(f"demo: {len(bios)} bios, {facts} facts scored in "
               f"{time.perf_counter() - started:.1f}s")  # fmt: skip
    print_rows(result.rows)
    print_summary(result.summary, result.config.verifier)
    html = write_demo_report(out / "demo_bios.scored.jsonl", out)
    click.echo(f"demo: the report, every fact with its sentence, reason and passages: {html}")
    click.echo(
        'demo: next, score your own generations ({"topic", "output"} lines):\n'
        f"  fscore eval --index {out} --input my_bios.jsonl --out scored.jsonl\n"
        f"  fscore report scored.jsonl --html report.html --index {out}"
    )


def print_rows(rows) -> None:
    """Each bio's facts with their decisions, and beside each rejected one its reason."""
    for row in rows:
        if not row.ok:
            click.echo(f"  {row.topic}: error: {row.error}")
            continue
        click.echo(
            f"  {row.topic}: {row.n_facts} facts, {100 * (row.init_score or 0):.0f}% supported"
        )
        for d in row.decisions:
            margin = "" if d.margin is None else f"  (margin {d.margin:+.2f})"
            click.echo(f"     [{'S' if d.is_supported else 'x'}] {d.atom}{margin}")
            if not d.is_supported:
                click.echo(f"         why: {d.reason or 'not supported by its passages'}")
        for atom, reason in row.set_aside:
            click.echo(f"     [-] {atom}  (set aside: {reason})")


def write_demo_report(scored: Path, index: Path) -> Path:
    """The HTML report of the demo's scored bios, beside them in the demo index."""
    from factscore_local.report.build import build_report, write_report
    from factscore_local.report.data import load_subjects

    html = scored.with_suffix(".html")
    write_report(html, build_report(load_subjects([scored]), index, title="fscore demo"))
    return html


COMMANDS = (demo_cmd,)
