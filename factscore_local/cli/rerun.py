"""``fscore rerun``: an ``fscore eval`` again from its record, and how its summary differs."""

from __future__ import annotations

import json
from pathlib import Path

import click

from factscore_local.cli.output import RUN_ERRORS, fail, print_result


def summary_diff(recorded: dict, result: dict) -> str:
    """One line saying whether a re-run reproduced the recorded summary, and if not how.

    Args:
        recorded: The summary in the run record (``record["summary"]``).
        result: The re-run's summary (``EvalResult.to_json()``).

    Returns:
        ``re-run reproduces the recorded summary``, or the keys that changed with their
        recorded and new values.

    Example:
        >>> summary_diff({"score": 0.5}, {"score": 0.5})
        're-run reproduces the recorded summary'
        >>> summary_diff({"score": 0.5}, {"score": 0.6})
        're-run differs from the recorded summary: score 0.5 -> 0.6'
    """
    if json.dumps(result, sort_keys=True) == json.dumps(recorded, sort_keys=True):
        return "re-run reproduces the recorded summary"
    changed = [
        f"{k} {recorded.get(k)} -> {result.get(k)}"
        for k in sorted(set(result) | set(recorded))
        if result.get(k) != recorded.get(k)
    ]
    return "re-run differs from the recorded summary: " + ", ".join(changed)


@click.command("rerun")
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
@click.option("--quiet", is_flag=True, help="No progress bars.")
def rerun_cmd(record_file, out, cache, as_json, quiet) -> None:
    """Re-run an 'fscore eval' from its record (OUT.record.json) with exactly its settings;
    refuses when the index, the LM file or an input differs from the recorded ones."""
    from dataclasses import replace

    from factscore_local.api import read_generations, run_config
    from factscore_local.pipeline.records.run_record import (
        RecordError,
        config_from_settings,
        read_record,
        recorded_inputs,
        rerun_problems,
    )
    from factscore_local.runtime.cache import ResultCache

    try:
        record = read_record(record_file)
        config = config_from_settings(record["settings"])
    except RecordError as exc:
        fail(str(exc))
    if cache is not None:
        config = replace(config, cache=cache)
    check_cache = ResultCache(config.cache)
    problems = rerun_problems(record, config, check_cache)
    check_cache.close()
    if problems:
        fail("cannot re-run this record here: " + "; ".join(problems))
    options = record["run_options"]
    try:
        bios, inputs = read_generations(
            recorded_inputs(record), options.get("n_samples"), options.get("topic_half")
        )
        result = run_config(config, bios, out=out, inputs=inputs, run_options=options,
                            progress=not quiet)  # fmt: skip
    except RUN_ERRORS as exc:
        fail(str(exc))
    print_result(result, as_json)
    click.echo(summary_diff(record.get("summary") or {}, result.to_json()), err=True)


COMMANDS = (rerun_cmd,)
