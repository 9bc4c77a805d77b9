"""The Python API: build an index, score generations, validate against human labels.

``fscore build-index``, ``fscore eval`` and ``fscore calibrate`` are thin layers over these
functions: the same settings (``EvalConfig``'s field names as keyword arguments), the same
defaults, the same results. Errors are raised (``ValueError``, ``FileNotFoundError``,
``RuntimeError``) with the message the command line prints.

Example:
    >>> from factscore_local import build_index, evaluate  # doctest: +SKIP
    >>> build_index("enwiki-excerpt.xml.bz2", "my-index")  # doctest: +SKIP
    >>> result = evaluate("bios.jsonl", index="my-index")  # doctest: +SKIP
    >>> print(f"FActScore {100 * result.score:.1f}%")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from factscore_local.config import EvalConfig, build_config
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.results import EvalResult

# Where a run's results are cached when no cache is named, inside the index directory.
DEFAULT_CACHE_NAME = "eval-cache.db"

Generations = str | Path | Sequence[str | Path] | Sequence[Mapping[str, Any]]


def load_config(
    index: str | Path,
    *,
    cache: str | Path | None = None,
    settings_file: str | Path | None = None,
    **settings: Any,
) -> EvalConfig:
    """The settings of a run, as ``fscore eval`` makes them.

    Settings given here win; a settings file of ``fscore calibrate`` fills the thresholds
    and verifier not given; then an embedded model's fitted defaults; then the defaults.

    Args:
        index: An index directory built by :func:`build_index`.
        cache: SQLite cache of model results; default ``<index>/eval-cache.db``.
        settings_file: Thresholds written by ``fscore calibrate`` (or :func:`calibrate`).
        **settings: ``EvalConfig`` field names and values (e.g. ``lm=``, ``k=``).

    Returns:
        The frozen, validated config.

    Raises:
        FileNotFoundError: ``index`` is not an index directory.
        ValueError: an unknown setting or value, or a bad settings file.

    Example:
        >>> config = load_config("my-index", margin=0.5)  # doctest: +SKIP
        >>> config.margin, config.thresholds_from  # doctest: +SKIP
        (0.5, 'built-in defaults')
    """
    from factscore_local.labels.calibration import read_settings

    index = Path(index)
    if not (index / "manifest.json").exists():
        raise FileNotFoundError(
            f"{index} is not an index directory (no manifest.json); run build-index"
        )
    options = {**settings, "index": index}
    options["cache"] = Path(cache) if cache is not None else index / DEFAULT_CACHE_NAME
    # Every setting given here counts as chosen: it wins over the settings file and the
    # model's fitted defaults.
    fitted = read_settings(Path(settings_file)) if settings_file is not None else None
    return build_config(options, fitted)


def read_generations(
    generations: Generations, n_samples: int | None = None, topic_half: int | None = None
) -> tuple[list[Bio], list[Path]]:
    """The bios to score, and the files they came from.

    Args:
        generations: A JSONL path (one ``{"topic", "output"}`` object a line, FActScore's
            format, optionally with its ``annotations``), a list of such paths (one file
            per subject LM), or a list of such dicts.
        n_samples: Only the first N bios of each file.
        topic_half: Only the topics of this half (0 or 1) of the fixed split.

    Returns:
        The bios (a bad line becomes a bio with ``error`` set) and the input paths (empty
        for dicts).

    Raises:
        InputError: a file is not there.
        TypeError: ``generations`` is none of the forms above.

    Example:
        >>> bios, paths = read_generations([{"topic": "Ada Lovelace", "output": "She..."}])
        >>> bios[0].topic
        'Ada Lovelace'
    """
    from factscore_local.labels.validation import topic_half as half_of
    from factscore_local.pipeline.records.inputs import bio_from_object, read_bios

    if isinstance(generations, str | Path):
        generations = [generations]
    if isinstance(generations, Mapping) or not isinstance(generations, Sequence):
        raise TypeError("generations: a JSONL path, a list of paths or a list of dicts")
    paths = [Path(g) for g in generations if isinstance(g, str | Path)]
    dicts = [g for g in generations if isinstance(g, Mapping)]
    if len(paths) + len(dicts) != len(generations) or (paths and dicts):
        raise TypeError("generations: a JSONL path, a list of paths or a list of dicts")
    groups = [list(read_bios(p)) for p in paths]
    if dicts:
        groups = [[bio_from_object(n, dict(d)) for n, d in enumerate(dicts, start=1)]]
    bios = []
    for group in groups:
        if topic_half is not None:
            group = [b for b in group if half_of(b.topic) == topic_half]
        bios.extend(group[:n_samples] if n_samples else group)
    return bios, paths


def evaluate(
    generations: Generations,
    index: str | Path,
    *,
    out: str | Path | None = None,
    cache: str | Path | None = None,
    settings_file: str | Path | None = None,
    n_samples: int | None = None,
    topic_half: int | None = None,
    progress: bool = False,
    **settings: Any,
) -> EvalResult:
    """Estimate FActScore of generations against an index (what ``fscore eval`` does).

    Args:
        generations: A JSONL path, a list of paths (one per subject LM), or a list of
            ``{"topic", "output"}`` dicts; see :func:`read_generations`.
        index: An index directory built by :func:`build_index`.
        out: Where to write one JSON line per bio and the run's record
            (``OUT.record.json``); None writes nothing.
        cache: SQLite cache of model results; default ``<index>/eval-cache.db``.
        settings_file: Thresholds written by :func:`calibrate` (given settings win).
        n_samples: Only the first N bios of each file.
        topic_half: Only the topics of this half (0 or 1) of the fixed split.
        progress: Show progress bars.
        **settings: ``EvalConfig`` field names and values, e.g.
            ``lm="qwen2.5-coder-0.5b-instruct-q4_k_m"``, ``verifier=``, ``evidence=``,
            ``gamma=``, ``device=``. Omitted ones take the defaults of ``fscore eval``.

    Returns:
        The summary (FActScore, init score, respond ratio, facts per response), the rows,
        and the validation against the human labels when the lines carry FActScore's
        annotations.

    Raises:
        FileNotFoundError: no index, or an input file is missing.
        ValueError: an unknown setting or value, or an unusable input file.
        RuntimeError: a model could not be loaded or run.

    Example:
        >>> result = evaluate("bios.jsonl", index="my-index")  # doctest: +SKIP
        >>> result.score, result.respond_ratio  # doctest: +SKIP
        (0.58, 1.0)
    """
    config = load_config(index, cache=cache, settings_file=settings_file, **settings)
    bios, paths = read_generations(generations, n_samples, topic_half)
    run_options = {"n_samples": n_samples, "topic_half": topic_half}
    return run_config(config, bios, out=out, inputs=paths, run_options=run_options,
                      progress=progress)  # fmt: skip


def run_config(
    config: EvalConfig,
    bios: Sequence[Bio],
    *,
    out: str | Path | None = None,
    inputs: Sequence[Path] = (),
    run_options: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> EvalResult:
    """Score bios with a ready config (what :func:`evaluate` and ``fscore rerun`` share).

    Args:
        config: The run's settings (:func:`load_config`, or a run record's).
        bios: The bios to score (:func:`read_generations`).
        out: Where to write the rows and the run record; None writes nothing.
        inputs: The files the bios came from, for the record.
        run_options: How the bios were chosen (``n_samples``, ``topic_half``), for the
            record.
        progress: Show progress bars.

    Returns:
        The result, with the record written when ``out`` is given.

    Example:
        >>> config = load_config("my-index")  # doctest: +SKIP
        >>> bios, paths = read_generations("bios.jsonl")  # doctest: +SKIP
        >>> run_config(config, bios, inputs=paths).score  # doctest: +SKIP
        0.58
    """
    from factscore_local.pipeline.estimator import Estimator

    out = Path(out) if out is not None else None
    estimator = Estimator(config)
    rows = estimator.run(list(bios), out, progress=progress)
    # the estimator's config: a server's fitted defaults are applied to it once connected
    return finish_run(estimator.config, rows, estimator.components, out, inputs, run_options)


def finish_run(
    config: EvalConfig,
    rows: list,
    components: Any,
    out: Path | None,
    inputs: Sequence[str | Path] = (),
    run_options: Mapping[str, Any] | None = None,
) -> EvalResult:
    """A scored run's result: its summary, its validation against labels, and (when ``out``
    is given) its run record written beside the rows. Both engines end with it."""
    from factscore_local.labels.validation import validate_rows
    from factscore_local.pipeline.decision.scoring import summarize
    from factscore_local.pipeline.records.run_record import build_record, write_record

    summary = summarize(rows)
    validation = validate_rows(rows) if config.validate else None
    result = EvalResult(summary, rows, validation, config)
    if out is None:
        return result
    record = build_record(config, list(inputs), dict(run_options or {}), components,
                          result.to_json())  # fmt: skip
    write_record(out, record)
    return EvalResult(summary, rows, validation, config, record)


def validate(generations: Generations, index: str | Path, **kwargs: Any) -> dict:
    """Error rate and F1 of the estimate against FActScore's human labels.

    Args:
        generations: Labeled lines (FActScore's ``annotations`` with ``human-atomic-facts``),
            as for :func:`evaluate`.
        index: An index directory.
        **kwargs: As for :func:`evaluate` (e.g. ``lm=``, ``use_atomic_facts=True``).

    Returns:
        ``{"pooled": {...}, "subjects": {name: {...}}, "ranking_kept": ...}``: per subject
        file and pooled, the human and estimated FActScore, ``error_rate`` (ER, points),
        ``f1_micro`` on not-supported facts, ``precision``, ``recall`` and ``bio_mae``.

    Raises:
        ValueError: no line carries human labels.

    Example:
        >>> figures = validate("labeled/ChatGPT.jsonl", "my-index")  # doctest: +SKIP
        >>> figures["pooled"]["error_rate"]  # doctest: +SKIP
        3.1
    """
    result = evaluate(generations, index, **{**kwargs, "validate": True})
    if result.validation is None:
        raise ValueError("no line of the input carries FActScore's human labels (annotations)")
    return result.validation


def calibrate(
    generations: Generations,
    index: str | Path,
    *,
    objective: str = "er",
    out: str | Path | None = None,
    cache: str | Path | None = None,
    settings_file: str | Path | None = None,
    n_samples: int | None = None,
    topic_half: int | None = None,
    progress: bool = False,
    head: str | Path | None = None,
    head_kind: str = "logistic",
    **settings: Any,
) -> dict:
    """Fit the verifier's thresholds on human-labeled bios (what ``fscore calibrate`` does).

    Args:
        generations: Labeled lines, as for :func:`evaluate`.
        index: An index directory.
        objective: ``"er"`` (mean error rate over the input files) or ``"f1"`` (micro-F1 on
            not-supported facts).
        out: The settings file to write (JSON, for ``evaluate(settings_file=...)``).
        cache: As for :func:`evaluate`.
        settings_file: As for :func:`evaluate`.
        n_samples: As for :func:`evaluate`.
        topic_half: Fit on this half only, to measure on the other.
        progress: Show progress bars.
        head: Also train a state head on the human facts' hidden states and write it
            here (``.npz``); a verifier that weighs a head is then fitted with it.
        head_kind: ``"logistic"`` or ``"mlp"`` (one hidden layer).
        **settings: ``EvalConfig`` field names and values.

    Returns:
        The fitted settings: the verifier, ``margin`` and ``np_threshold`` (or
        ``rule_weights``), the figures before and after the fit, and what it was fitted on.

    Example:
        >>> fitted = calibrate("labeled/ChatGPT.jsonl", "my-index", topic_half=0)  # doctest: +SKIP
        >>> fitted["margin"]  # doctest: +SKIP
        -0.25
    """
    from factscore_local.labels.calibration import collect, fit, write_settings
    from factscore_local.pipeline.estimator import Estimator

    config = load_config(index, cache=cache, settings_file=settings_file,
                         **{**settings, "validate": True})  # fmt: skip
    bios, paths = read_generations(generations, n_samples, topic_half)
    if head is not None:
        from factscore_local.labels.head_calibration import calibrate_with_head

        fitted = calibrate_with_head(config, bios, Path(head), head_kind, objective,
                                     progress=progress)  # fmt: skip
    else:
        rows = Estimator(config, calibrating=True).run(bios, None, progress=progress)
        fitted = fit(collect(rows), config.verifier, objective, config.thresholds)
    fitted["np_model"] = config.np_model_spec
    fitted["lm"] = config.lm
    fitted["fitted_on"] = {
        "inputs": [str(p) for p in paths],
        "topic_half": topic_half,
        "use_atomic_facts": config.use_atomic_facts,
    }
    if out is not None:
        write_settings(Path(out), fitted)
    return fitted


def build_index(source: str | Path, out: str | Path, **options: Any) -> dict:
    """Build (or resume) an index directory from a Wikipedia source (``fscore build-index``).

    Args:
        source: A MediaWiki XML dump (``.xml``/``.xml.bz2``), FActScore's ``.db``, or JSONL
            of ``{"title", "text"}``.
        out: The index directory to create (or resume).
        **options: ``BuildOptions`` fields: ``tokenizer`` ("roberta"), ``max_tokens``
            (256), ``dense`` ("minilm"; None or "none" skips it), ``dense_leads`` (False:
            every passage embedded; True: each page's first passage), ``bm25`` (True),
            ``threads`` and ``workers`` (one per usable core), ``batch_pages`` (500),
            ``overwrite`` (False), ``progress`` (True), ``device`` ("auto").

    Returns:
        The index's manifest: ``counts`` (pages, redirects, passages, bad records, ...),
        ``timings`` per stage, and the build's settings.

    Raises:
        SourceError: the source is not a supported format (a ``ValueError``).
        BuildError: ``out`` holds another build (pass ``overwrite=True``).
        FileNotFoundError: no source at that path.

    Example:
        >>> manifest = build_index("pages.jsonl", "my-index", dense=None)  # doctest: +SKIP
        >>> manifest["counts"]["pages"]  # doctest: +SKIP
        2
    """
    from factscore_local.index.builder import build_index as build

    return build(build_options(source, out, **options))


def build_options(source: str | Path, out: str | Path, **options: Any):
    """``BuildOptions`` from keyword options (``None`` means the default; ``dense="none"``
    skips the dense index); an unknown option is a ``ValueError``."""
    from factscore_local.index.builder import BuildOptions

    known = {f.name for f in fields(BuildOptions)} - {"source", "out"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"unknown build option(s): {', '.join(unknown)}")
    values = {k: v for k, v in options.items() if v is not None or k == "dense"}
    if isinstance(values.get("dense"), str) and values["dense"].lower() == "none":
        values["dense"] = None
    return BuildOptions(source=Path(source), out=Path(out), **values)
