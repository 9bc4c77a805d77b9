"""``fscore eval``: estimate FActScore of generations (a thin layer over :func:`api.evaluate`)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import click
import cloup

from factscore_local.cli.aliases import deprecated_alias
from factscore_local.cli.groups import DECISION, IO, RUNTIME, merged, option_groups
from factscore_local.cli.options import chosen_settings, config_option, estimator_groups
from factscore_local.cli.output import RUN_ERRORS, fail, print_result
from factscore_local.distributed.cli_options import pop_ray_options, ray_options

OUT_OPTION = click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write one JSON line per bio (and the run's record, OUT.record.json).",
)
JSON_OPTION = click.option(
    "--json", "as_json", is_flag=True, help="Print the summary as one JSON object."
)
EVAL_GROUPS = {
    IO: [OUT_OPTION, JSON_OPTION],
    DECISION: [config_option("gamma"), config_option("validate")],
    RUNTIME: [ray_options()],
}


@cloup.command("eval")
@option_groups(merged(estimator_groups(), EVAL_GROUPS))
@deprecated_alias("--workers", "ray_workers", "--ray-workers", type=click.IntRange(min=1))
@click.pass_context
def eval_cmd(ctx, out, as_json, **opts) -> None:
    """Estimate FActScore of the generations in --input.

    \b
    Examples:
      fscore eval --index idx --input bios.jsonl --out scored.jsonl
      fscore eval --index idx --input bios.jsonl --lm http://127.0.0.1:8000/v1
      fscore eval --index idx --input bios.jsonl --settings my-lm.json
      fscore eval --index idx --input labeled.jsonl --use-atomic-facts --gamma 0

    Input lines are {"topic", "output"} (FActScore's format); labeled lines are also
    measured against their human labels. A model without a fitted rule: fscore calibrate
    (docs: Using another verifier LM).
    """
    from factscore_local.api import evaluate

    ray = pop_ray_options(opts)
    if ray is not None:  # --engine ray: the same result, scored on Ray workers
        from factscore_local.distributed.engine import evaluate_on_ray as evaluate

        evaluate = partial(evaluate, ray=ray)
    try:
        result = evaluate(
            list(opts["inputs"]),
            opts["index"],
            out=out,
            cache=opts["cache"],
            settings_file=opts["settings"],
            n_samples=opts["n_samples"],
            topic_half=opts["topic_half"],
            progress=not opts["quiet"],
            **chosen_settings(ctx, opts),
        )
    except RUN_ERRORS as exc:  # InputError is a ValueError
        fail(str(exc))
    print_result(result, as_json)


COMMANDS = (eval_cmd,)
