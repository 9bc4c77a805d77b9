"""FActScore's command line (``python -m factscore.factscorer``), offline.

``python -m factscore_local.compat.factscore`` takes the reference's flags, so its shell
scripts run by changing the module name: it reads the same JSONL, scores it with
:class:`FactScorer`, logs the reference's summary lines in its format and writes its
output file. Flags that need the network or the reference's weights are accepted and
named as ignored; ``--model_name`` is mapped onto this project's verifier and local LM,
and a line says what it runs as. Parsing is argparse's, as in the reference, so the
abbreviations its README uses (``--abstain_detection``) work too.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factscore_local.compat.factscore.factscorer import (
    DEFAULT_KNOWLEDGE_SOURCE,
    FactScorer,
)
from factscore_local.compat.factscore.flags import DEFAULT_DIR, IGNORED
from factscore_local.compat.factscore.flags import build_parser as build_parser
from factscore_local.index.manifest import MANIFEST
from factscore_local.model_store import DEFAULT_LM

# The reference's summary, logged at CRITICAL in its format (factscorer.py's __main__).
LOG_FORMAT = "%(asctime)s - %(name)s - %(message)s"
LOG_DATEFMT = "%m/%d/%Y %H:%M:%S"
# Who does the reference's work here, for the line that says what --model_name runs as.
REFERENCE_VERIFIER = {"ChatGPT": "ChatGPT", "llama": "Inst-LLaMA-7B"}


class CommandError(Exception):
    """Input or settings the command cannot use; the message says why."""


@dataclass
class Inputs:
    """What the reference's loop over the input file collects."""

    topics: list[str]
    generations: list[str]
    atomic_facts: list[list[str]] | None


def read_inputs(path: Path, use_atomic_facts: bool, n_samples: int | None) -> Inputs:
    """The input lines as the reference's CLI reads them.

    Every non-blank line counts toward ``n_samples``; with ``use_atomic_facts`` a line
    whose ``annotations`` is null (an abstained bio) is skipped, and the facts are the
    ``model-atomic-facts`` of every sentence. Unlike the reference, reading stops after
    line N even when that line is one of the skipped.

    Args:
        path: The JSONL file.
        use_atomic_facts: Read the labeled format's facts.
        n_samples: Only the first N lines (None: all).

    Returns:
        Topics, generations and (with ``use_atomic_facts``) the facts, in file order.

    Raises:
        CommandError: A missing file, or a line that is not what the reference reads.
    """
    from factscore_local.pipeline.records.inputs import InputError, json_objects

    topics, generations, facts = [], [], []
    try:
        lines = list(json_objects(path))
    except InputError as exc:
        raise CommandError(str(exc)) from None
    for count, (number, record) in enumerate(lines, start=1):
        if n_samples is not None and count > n_samples:
            break
        where = f"{path}, line {number}"
        if isinstance(record, str):
            raise CommandError(f"{where}: {record}")
        if not isinstance(record.get("topic"), str) or not isinstance(record.get("output"), str):
            raise CommandError(f"{where}: needs 'topic' and 'output' strings")
        if use_atomic_facts:
            if "annotations" not in record:
                raise CommandError(f"{where}: --use_atomic_facts needs 'annotations' (the "
                                   "labeled format's atomic facts) in every line")  # fmt: skip
            if record["annotations"] is None:
                continue
            facts.append(_model_facts(record["annotations"], where))
        topics.append(record["topic"])
        generations.append(record["output"])
    return Inputs(topics, generations, facts if use_atomic_facts else None)


def _model_facts(annotations: object, where: str) -> list[str]:
    """The texts of every sentence's ``model-atomic-facts``."""
    try:
        return [atom["text"] for sent in annotations for atom in sent["model-atomic-facts"]]
    except (TypeError, KeyError) as exc:
        raise CommandError(f"{where}: 'annotations' is not a list of sentences with "
                           f"'model-atomic-facts' of {{'text'}} ({exc!r})") from None  # fmt: skip


def knowledge_source(name: str | None, data_dir: Path) -> tuple[str, Path | None]:
    """The knowledge source ``--knowledge_source`` and ``--data_dir`` name.

    Args:
        name: A path to an index folder, a name, or None (the reference's default name).
        data_dir: Where a name's index folder (or FActScore's .db / .jsonl) is.

    Returns:
        The name to score with and its index folder, or None when FactScorer is to index
        FActScore's ``data_dir/<name>.db`` or ``.jsonl`` (in ``cache_dir``).

    Raises:
        CommandError: A path to a folder that holds no index.
    """
    if name is not None and Path(name).is_dir():
        path = Path(name)
        if not (path / MANIFEST).is_file():
            raise CommandError(f"--knowledge_source {name} is a folder but not an index (no "
                               f"{MANIFEST}); build one with 'fscore build-index'")  # fmt: skip
        return path.resolve().name, path
    name = name or DEFAULT_KNOWLEDGE_SOURCE
    folder = data_dir / name
    return name, folder if (folder / MANIFEST).is_file() else None


def mapping_line(model_name: str, fs: FactScorer, use_atomic_facts: bool) -> str:
    """What ``--model_name`` runs as here: the verifier, the LM, NP's scorer, the facts.

    Args:
        model_name: The reference's estimator name.
        fs: The scorer built for it.
        use_atomic_facts: Whether the input's facts are verified.

    Returns:
        One line, for stderr.
    """
    from factscore_local.declarations.verifiers import get_verifier
    from factscore_local.pipeline.plan import plan_run

    config = fs.settings
    verifier = get_verifier(config.verifier)
    plan = plan_run(config)
    lm = config.lm or DEFAULT_LM
    parts = [f"verifier {verifier.name!r}" + (f" ({verifier.description})"
                                               if verifier.description else "")]  # fmt: skip
    reference = next((who for key, who in REFERENCE_VERIFIER.items() if key in model_name), None)
    if "margin" in plan.signals:
        parts.append(f"the LM {lm}" + (f" in place of {reference}" if reference else ""))
    if "np" in plan.signals:
        parts.append(f"NP from {config.np_model_spec}" + (" in place of NPM" if "npm" in
                                                           model_name else ""))  # fmt: skip
    facts = ("the input's model-atomic-facts" if use_atomic_facts
             else f"decomposed by {lm} in place of InstructGPT")  # fmt: skip
    return f"note: --model_name {model_name} runs as {', '.join(parts)}; atomic facts: {facts}"


def output_path(input_path: Path, given: str | None) -> Path:
    """Where the output JSON goes: ``given``, else the reference's name beside the input."""
    if given:
        return Path(given)
    stem = input_path.name[: -len(".jsonl")] if input_path.name.endswith(".jsonl") else (
        input_path.name)  # fmt: skip
    return input_path.with_name(f"{stem}_factscore_output.json")


def log_summary(out: dict) -> None:
    """The reference's summary lines, logged at CRITICAL as it logs them."""
    logging.critical("FActScore = %.1f%%", 100 * out["score"])
    if "init_score" in out:
        logging.critical("FActScore w/o length penalty = %.1f%%", 100 * out["init_score"])
    logging.critical("Respond ratio = %.1f%%", 100 * out["respond_ratio"])
    logging.critical("# Atomic facts per valid response = %.1f", out["num_facts_per_response"])


def _score(fs: FactScorer, name: str, index: Path | None, inputs: Inputs,
           args: argparse.Namespace) -> dict:  # fmt: skip
    """Registers the knowledge source and scores the inputs (the reference's result)."""
    try:
        if index is not None:
            fs.register_knowledge_source(name, index=index)
        else:
            fs.register_knowledge_source(name)
    except FileNotFoundError as exc:
        raise CommandError(f"{exc} (or give --knowledge_source the path of an index "
                           "folder built by 'fscore build-index')") from None  # fmt: skip
    return fs.get_score(inputs.topics, inputs.generations, gamma=args.gamma,
                        atomic_facts=inputs.atomic_facts, knowledge_source=name,
                        verbose=args.verbose)  # fmt: skip


def notice(message: str) -> None:
    """One line on stderr (the summary is logged; notices are printed)."""
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Scores the input as the reference's CLI does; returns the exit status.

    Args:
        args: Parsed by :func:`build_parser`.

    Returns:
        0 on success.

    Raises:
        CommandError: Input, knowledge source or settings that cannot be used.
    """
    for flag, why in IGNORED.items():
        if getattr(args, flag) not in (None, False):
            notice(f"note: --{flag} is ignored ({why})")
    if args.model_dir is not None:
        notice("note: --model_dir: FActScore's Inst-LLaMA and NPM weights are not used; "
               "only a bare --lm file name is looked for there")  # fmt: skip
    if args.gamma < 0:
        raise CommandError("--gamma must be 0 (no length penalty) or positive")
    if args.n_samples is not None and args.n_samples < 1:
        raise CommandError("--n_samples must be a positive number of lines")
    input_path = Path(args.input_path)
    inputs = read_inputs(input_path, args.use_atomic_facts, args.n_samples)
    name, index = knowledge_source(args.knowledge_source, Path(args.data_dir))
    settings = {"verifier": args.verifier} if args.verifier else {}
    try:
        fs = FactScorer(
            model_name=args.model_name,
            data_dir=args.data_dir,
            model_dir=args.model_dir or DEFAULT_DIR,
            cache_dir=args.cache_dir,
            abstain_detection_type=args.abstain_detection_type,
            lm=args.lm,
            device=args.device,
            **settings,
        )
        notice(mapping_line(args.model_name, fs, args.use_atomic_facts))
        try:
            out = _score(fs, name, index, inputs, args)
        finally:
            fs.close()
    except (ValueError, FileNotFoundError, RuntimeError, ConnectionError) as exc:
        raise CommandError(str(exc)) from None
    log_summary(out)
    path = output_path(input_path, args.output_path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write the output to {path} ({exc.strerror}); give "
                           "--output_path") from None  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command: parse, score, log the summary, write the output.

    Args:
        argv: The arguments (None: ``sys.argv[1:]``).

    Returns:
        The exit status: 0, or 2 with one ``error:`` line on stderr.

    Example:
        >>> main(["--input_path", "bios.jsonl", "--knowledge_source", "my-index",
        ...       "--use_atomic_facts"])  # doctest: +SKIP
    """
    from factscore_local.runtime.offline import enforce_offline

    args = build_parser().parse_args(argv)
    enforce_offline()
    logging.basicConfig(format=LOG_FORMAT, datefmt=LOG_DATEFMT, level=logging.CRITICAL)
    try:
        return run(args)
    except CommandError as exc:
        notice(f"error: {exc}")
        return 2
