"""The record of an ``fscore eval`` run: everything that decides its numbers, so that a
result can be tied to the exact model file, index, prompts and thresholds behind it, and
re-run (``fscore rerun``) with exactly those settings.

A record is a JSON file beside the output (``OUT.record.json``). It names the project
version, the LM file (name, size, sha256), the backend, the index (the sha256 of its
manifest, and its counts), every setting of the estimator (verifier, thresholds, k,
retrieval, ...), hashes of the prompt templates and of the demonstrations, the inputs
(path and sha256), and the cache hit ratio of the run.
"""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import fields
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from factscore_local.config import EvalConfig
from factscore_local.fitted_defaults import rule_entry
from factscore_local.runtime.cache import ResultCache
from factscore_local.runtime.files import file_sha256
from factscore_local.runtime.weights import lm_fingerprint as lm_fingerprint

RECORD_FORMAT = 1
PATH_FIELDS = ("index", "cache", "demos", "np_stopwords", "prefix_states")  # EvalConfig paths


class RecordError(ValueError):
    """A record that cannot be read, or a re-run it cannot reproduce."""


def record_path(out: Path) -> Path:
    """Where the record of the output ``out`` lives."""
    return out.with_name(out.name + ".record.json")


def index_fingerprint(index_dir: Path) -> dict:
    manifest_file = index_dir / "manifest.json"
    manifest = json.loads(manifest_file.read_text("utf-8"))
    return {
        "path": str(index_dir.resolve()),
        "manifest_sha256": file_sha256(manifest_file),
        "counts": {k: manifest.get("counts", {}).get(k) for k in ("pages", "passages")},
        "source_sha256": manifest.get("source", {}).get("sha256"),
    }


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_hashes(config: EvalConfig) -> dict:
    """sha256 of each prompt template, rendered on fixed placeholders (a change of
    wording anywhere in a template changes its hash)."""
    from factscore_local.npm.causal_np import causal_context
    from factscore_local.pipeline.decomposition.decompose import (
        DEFAULT_INSTRUCTION,
        REFERENCE_INSTRUCTION,
    )
    from factscore_local.pipeline.signals.verify_prompt import (
        PLAIN_ANSWER,
        no_context_prompt,
        retrieve_lm_prompt,
    )

    decompose = (
        REFERENCE_INSTRUCTION if config.decompose_prompt == "reference" else (DEFAULT_INSTRUCTION)
    )
    # The plain format's ending marks its hashes; the chat template is the model's own.
    ending = PLAIN_ANSWER if config.verify_format == "plain" else ""
    question = config.verify_question
    return {
        "retrieve_lm": _sha(
            retrieve_lm_prompt(
                "{topic}",
                "{fact}",
                [("{title}", "{text}")],
                config.verify_demos,
                "{sentence}" if config.fact_context == "sentence" else "",
                question,
            )
            + ending
        ),
        "no_context": _sha(no_context_prompt("{topic}", "{fact}", question) + ending),
        "causal_np": _sha(causal_context(["{text}"])),
        "decompose": _sha(decompose),
    }


def demos_hash(config: EvalConfig) -> str:
    from factscore_local.pipeline.decomposition.decompose import DEFAULT_DEMOS_PATH

    return file_sha256(config.demos or DEFAULT_DEMOS_PATH)


def settings_of(config: EvalConfig) -> dict:
    """Every setting of the config, JSON-safe."""
    out = {}
    for f in fields(config):
        value = getattr(config, f.name)
        # Absolute, so that a re-run from another directory finds the same files.
        out[f.name] = str(value.resolve()) if isinstance(value, Path) else value
    return out


def config_from_settings(settings: dict) -> EvalConfig:
    known = {f.name for f in fields(EvalConfig)}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise RecordError(f"the record has settings this version does not know: {unknown}")
    values = {
        k: (Path(v) if k in PATH_FIELDS and v is not None else v) for k, v in settings.items()
    }
    try:
        return EvalConfig(**values)
    except (TypeError, ValueError) as exc:
        raise RecordError(f"the record's settings are not valid here: {exc}") from exc


def project_version() -> str:
    try:
        return metadata.version("factscore-local")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"


def build_record(
    config: EvalConfig,
    inputs: list[Path],
    run_options: dict,
    components,
    summary: dict,
) -> dict:
    """The record of a finished run (``components``: the estimator's, after the run)."""
    cache = components.cache
    hits, misses = cache.hits, cache.misses  # of the run (before the LM's digest is looked up)
    lm = None
    if components.lm.loaded:  # what the LM says of itself (a server: its URL and model too)
        lm = components.lm.get().lm.fingerprint(cache)
    lookups = hits + misses
    return {
        "format": RECORD_FORMAT,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "factscore_local": project_version(),
        "python": platform.python_version(),
        "lm": lm,  # None: the run needed no LM
        "index": index_fingerprint(config.index),
        "settings": settings_of(config),
        "rule": rule_entry(config, lm),
        "thresholds": {
            "margin": config.thresholds.margin,
            "np": config.thresholds.np,
            "raw_text_shift": config.raw_text_bias,
            "from": config.thresholds_from,
        },  # fmt: skip
        "prompts": prompt_hashes(config),
        "demos_sha256": demos_hash(config),
        # The path as given names the rows' `source`; the resolved one finds the file from
        # another directory.
        "inputs": [
            {"path": str(p.resolve()), "given": str(p), "sha256": file_sha256(p)} for p in inputs
        ],
        "run_options": run_options,
        "cache": {
            "hits": hits,
            "misses": misses,
            "hit_ratio": round(hits / lookups, 4) if lookups else None,
        },
        "summary": summary,
    }


def write_record(out: Path, record: dict) -> Path:
    path = record_path(out)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return path


def read_record(path: Path) -> dict:
    try:
        record = json.loads(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise RecordError(f"no run record at {path}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path} is not a run record (not JSON: {exc})") from exc
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise RecordError(f"{path} is not a run record of format {RECORD_FORMAT}")
    for key in ("settings", "index", "inputs", "run_options"):
        if key not in record:
            raise RecordError(f"{path} is not a complete run record (no {key!r})")
    return record


def rerun_problems(record: dict, config: EvalConfig, cache: ResultCache) -> list[str]:
    """Why this machine cannot reproduce the record (empty when it can): a different
    index, LM file or input."""
    problems = []
    index_dir = config.index
    if not (index_dir / "manifest.json").is_file():
        problems.append(f"the index {index_dir} is not there")
    else:
        now = index_fingerprint(index_dir)
        if now["manifest_sha256"] != record["index"]["manifest_sha256"]:
            problems.append(
                f"the index at {index_dir} differs from the recorded one (manifest sha256 "
                f"{now['manifest_sha256'][:12]} != {record['index']['manifest_sha256'][:12]})"
            )
    recorded_lm = record.get("lm")
    if recorded_lm and recorded_lm.get("backend") == "server":
        recorded_lm = None  # a server's weights are the server's to keep (the record names them)
    if recorded_lm:
        from factscore_local.model_store import resolve_lm

        try:
            path = resolve_lm(config.lm)
        except (FileNotFoundError, ValueError) as exc:
            problems.append(f"the recorded LM {recorded_lm['name']} is not here: {exc}")
        else:
            now_lm = lm_fingerprint(path, recorded_lm["backend"], cache)
            if now_lm["sha256"] != recorded_lm["sha256"]:
                problems.append(
                    f"the LM {path} differs from the recorded {recorded_lm['name']} (sha256 "
                    f"{now_lm['sha256'][:12]} != {recorded_lm['sha256'][:12]})"
                )
    for item in record["inputs"]:
        path = Path(item["path"])
        if not path.is_file():
            problems.append(f"the input {path} is not there")
        elif file_sha256(path) != item["sha256"]:
            problems.append(f"the input {path} has changed since the recorded run")
    return problems


def recorded_inputs(record: dict) -> list[Path]:
    """The inputs to re-run: each as it was given when that path still leads to the
    recorded file (so the rows' `source` is the original's), else by its resolved path
    (whose content ``rerun_problems`` checks)."""
    paths = []
    for item in record["inputs"]:
        given = Path(item.get("given") or item["path"])
        paths.append(given if str(given.resolve()) == item["path"] else Path(item["path"]))
    return paths


def describe(record: dict) -> str:
    """One line naming the run: LM, index, verifier."""
    lm = record.get("lm") or {}
    settings = record["settings"]
    return (
        f"{settings['verifier']} with {lm.get('name', 'no LM')} on index "
        f"{record['index']['manifest_sha256'][:12]} (factscore-local "
        f"{record.get('factscore_local')}, {record.get('created')})"
    )
