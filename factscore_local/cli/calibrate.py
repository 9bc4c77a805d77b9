"""``fscore calibrate``: fit the verifier's thresholds on human-labeled bios
(a thin layer over :func:`api.calibrate`)."""

from __future__ import annotations

from pathlib import Path

import click
import cloup

from factscore_local.cli.groups import DECISION, IO, merged, option_groups
from factscore_local.cli.options import chosen_settings, estimator_groups
from factscore_local.cli.output import RUN_ERRORS, fail

CALIBRATE_GROUPS = {
    IO: [
        click.option(
            "--out",
            required=True,
            type=click.Path(path_type=Path),
            help="Settings file to write (JSON), for 'fscore eval --settings'.",
        )
    ],
    DECISION: [
        click.option(
            "--objective",
            type=click.Choice(["er", "f1"]),
            default="er",
            show_default=True,
            help="'er': mean error rate over the input files; 'f1': micro-F1 on "
            "not-supported facts.",
        ),
        click.option(
            "--head",
            type=click.Path(path_type=Path),
            default=None,
            help="Also train a state head (a model over the LM's hidden state at its "
            "verdict) on the human facts and write it here (.npz); a verifier with 'head' "
            "weighs it.",
        ),
        click.option(
            "--head-kind",
            type=click.Choice(["logistic", "mlp"]),
            default="logistic",
            show_default=True,
            help="The head: logistic regression, or an MLP with one hidden layer.",
        ),
    ],
}


@cloup.command("calibrate")
@option_groups(merged(estimator_groups(), CALIBRATE_GROUPS))
@click.pass_context
def calibrate_cmd(ctx, out, objective, head, head_kind, **opts) -> None:
    """Fit the verifier's thresholds (margin, NP) on human-labeled bios."""
    from factscore_local.api import calibrate

    try:
        settings = calibrate(
            list(opts["inputs"]),
            opts["index"],
            objective=objective,
            out=out,
            cache=opts["cache"],
            settings_file=opts["settings"],
            n_samples=opts["n_samples"],
            topic_half=opts["topic_half"],
            progress=not opts["quiet"],
            head=head,
            head_kind=head_kind,
            **chosen_settings(ctx, opts),
        )
    except RUN_ERRORS as exc:
        fail(str(exc))
    rule = (
        "weights " + ", ".join(f"{k} {w:.4f}" for k, w in settings["rule_weights"].items())
        if "rule_weights" in settings
        else f"margin > {settings['margin']}, NP > {settings['np_threshold']}"
    )
    click.echo(
        f"{settings['verifier']}: {rule} "
        f"(objective {objective}; on {settings['n_bios']} bios: ER "
        f"{settings['defaults']['error_rate']} -> {settings['fit']['error_rate']}, F1 "
        f"{settings['defaults']['f1_micro']} -> {settings['fit']['f1_micro']}); wrote {out}"
        + (f" and the head {head}" if head else "")
    )


COMMANDS = (calibrate_cmd,)
