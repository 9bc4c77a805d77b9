"""``fscore build-index``: a Wikipedia source -> an index directory (:func:`api.build_index`)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import click
import cloup

from factscore_local.cli.aliases import deprecated_alias
from factscore_local.cli.groups import EVIDENCE, IO, RUNTIME, option_groups
from factscore_local.cli.options import config_option
from factscore_local.cli.output import fail
from factscore_local.distributed.cli_options import pop_ray_options, ray_options

BUILD_GROUPS = {
    IO: [
        click.option(
            "--source",
            required=True,
            type=click.Path(path_type=Path),
            help="MediaWiki XML dump (.xml/.xml.bz2), FActScore .db, or JSONL {title, text}.",
        ),
        click.option(
            "--out",
            required=True,
            type=click.Path(path_type=Path),
            help="Index directory to create (or resume).",
        ),
        click.option("--overwrite", is_flag=True, help="Delete an existing build in --out first."),
    ],
    EVIDENCE: [
        click.option(
            "--tokenizer",
            default="roberta",
            show_default=True,
            help="Passage tokenizer: 'roberta' (packaged, FActScore-compatible), 'minilm', "
            "or a local Hugging Face tokenizer directory.",
        ),
        click.option("--max-tokens", default=256, show_default=True, help="Tokens per passage."),
        click.option(
            "--dense",
            default="minilm",
            show_default=True,
            help="Dense model: 'minilm' (embedded), a local sentence-transformers "
            "directory, or 'none' to skip (pages are then embedded on first use). Not given: "
            "the time to embed every passage on this device is estimated first, and over 2 h "
            "($FSCORE_DENSE_MAX_HOURS) the build goes without ('none').",
        ),
        click.option(
            "--dense-leads",
            is_flag=True,
            help="Embed each page's first passage only: a dense search over pages by their "
            "leads, at a fraction of the cost (within a page, other passages are embedded on "
            "first use).",
        ),
        click.option("--no-bm25", is_flag=True, help="Skip the global Lucene BM25 index."),
    ],
    RUNTIME: [
        config_option(
            "device",
            help="Where the dense encoder runs: auto (a CUDA GPU when torch sees one), cpu, "
            "cuda or cuda:N.",
        ),
        click.option(
            "--bm25-threads",
            "threads",
            default=None,
            type=click.IntRange(min=1),
            help="Threads of the Lucene BM25 indexing; default: one per usable core.",
        ),
        click.option(
            "--parse-workers",
            "workers",
            default=None,
            type=click.IntRange(min=1),
            help="Processes cleaning wikitext (XML dumps); default: one per usable core.",
        ),
        click.option(
            "--batch-pages",
            default=500,
            show_default=True,
            help="Pages per committed batch (the resume granularity).",
        ),
        click.option("--quiet", is_flag=True, help="No progress bars."),
        ray_options(),
    ],
}


@cloup.command("build-index")
@option_groups(BUILD_GROUPS)
@deprecated_alias("--threads", "threads", "--bm25-threads", type=int)
@deprecated_alias("--workers", "workers", "--parse-workers", type=int)  # 0: the default
def build_index_cmd(
    source, out, tokenizer, max_tokens, dense, dense_leads, no_bm25, threads, workers,
    batch_pages, overwrite, device, quiet, **ray_opts,
) -> None:  # fmt: skip
    """Build (or resume) an index directory from a Wikipedia source."""
    from factscore_local.api import build_index

    ray = pop_ray_options(ray_opts)
    if ray is not None:  # --engine ray: the dense stage on Ray workers, the same index
        from factscore_local.distributed.engine import build_index_on_ray

        build_index = partial(build_index_on_ray, ray=ray)
    from factscore_local.index.builder import BuildError
    from factscore_local.index.sources import SourceError

    try:
        if ray is None:  # the dense stage runs here: estimate its time first
            from click.core import ParameterSource

            from factscore_local.index.estimate import dense_for_build

            given = click.get_current_context().get_parameter_source("dense")
            dense = dense_for_build(source, dense, given is not ParameterSource.DEFAULT,
                                    dense_leads, device, partial(click.echo, err=True))  # fmt: skip
        manifest = build_index(
            source,
            out,
            tokenizer=tokenizer,
            max_tokens=max_tokens,
            dense=dense,
            dense_leads=dense_leads,
            bm25=not no_bm25,
            threads=threads or None,
            workers=workers or None,
            batch_pages=batch_pages,
            progress=not quiet,
            overwrite=overwrite,
            device=device,
        )
    except (SourceError, BuildError, FileNotFoundError, ValueError, RuntimeError) as exc:
        fail(str(exc))
    counts = manifest["counts"]
    bad = sum(counts["bad"].values())
    click.echo(
        f"built {out}: {counts['pages']} pages, {counts['redirects']} redirects, "
        f"{counts['passages']} passages, {bad} bad records, "
        f"{sum(counts['skipped'].values())} skipped"
    )
    for reason, n in sorted(counts["bad"].items(), key=lambda kv: -kv[1]):
        click.echo(f"  bad: {n} x {reason}")
    if counts.get("source_truncated"):
        click.echo(
            "  warning: the source ended early (truncated); the pages read are kept", err=True
        )
    timings = ", ".join(f"{k} {v:.1f}s" for k, v in manifest["timings"].items())
    click.echo(f"  timings: {timings}")


COMMANDS = (build_index_cmd,)
