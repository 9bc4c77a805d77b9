"""What the commands print: errors, the FActScore summary, the validation table."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

from factscore_local.lm.protocol import CapabilityError
from factscore_local.results import EvalResult, thresholds_of

# What running a model command may raise: a clear message, exit status 2 (ConnectionError:
# an LM server that is down or cannot give what the run needs, lm/server_client.py).
# (CapabilityError: the run's plan needs what its LM cannot give)
RUN_ERRORS = (FileNotFoundError, ValueError, RuntimeError, ConnectionError, CapabilityError)


def fail(message: str) -> NoReturn:
    """Print ``error: MESSAGE`` on stderr and exit with status 2.

    Args:
        message: What went wrong and, where it helps, what to do.

    Example:
        >>> fail("no cache at x.db")  # doctest: +SKIP
    """
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def require_index(index: Path) -> None:
    """Stop with a clear line unless ``index`` is an index directory.

    Args:
        index: The directory given with --index.

    Example:
        >>> require_index(Path("my-index"))  # doctest: +SKIP
    """
    if not (index / "manifest.json").exists():
        fail(f"{index} is not an index directory (no manifest.json); run build-index")


def print_summary(summary: dict, verifier: str) -> None:
    """FActScore, the score without length penalty, respond ratio and counts.

    Args:
        summary: ``EvalResult.summary``.
        verifier: The verifier's name, shown beside the score.

    Example:
        >>> print_summary(result.summary, "retrieve-lm")  # doctest: +SKIP
    """

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


def print_validation(validation: dict) -> None:
    """The table of estimate against human labels, per subject file and pooled.

    Args:
        validation: ``EvalResult.validation``.

    Example:
        >>> print_validation(result.validation)  # doctest: +SKIP
    """
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


def print_result(result: EvalResult, as_json: bool) -> None:
    """What ``fscore eval`` prints for a run; exits 1 (after it) when nothing was scored.

    Args:
        result: The run's result.
        as_json: Print the summary as one JSON object instead of the tables.

    Example:
        >>> print_result(evaluate("bios.jsonl", "my-index"), as_json=False)  # doctest: +SKIP
    """
    config, summary = result.config, result.summary
    if as_json:
        click.echo(json.dumps(result.to_json()))
    else:
        print_summary(summary, config.verifier)
        shown = thresholds_of(config)
        if len(shown) > 1:
            limits = ", ".join(
                f"weights {', '.join(f'{n} {w:+.4f}' for n, w in v.items())}"
                if isinstance(v, dict)
                else f"{k} > {v:g}"
                for k, v in shown.items()
                if k != "from"
            )
            click.echo(f"thresholds: {limits} ({shown['from']})")
        if result.validation:
            print_validation(result.validation)
        lm = (result.record or {}).get("lm")
        if lm:
            click.echo(f"LM: {lm['name']} ({lm['backend']}, on {lm['device']})")
        rule = (result.record or {}).get("rule")
        if rule:
            click.echo(f"rule: {rule_line(rule)}")
        cut = [r for r in result.rows if r.skipped_sentences]
        if cut:
            click.echo(
                f"{len(cut)} response(s) longer than --max-sentences {config.max_sentences}: "
                f"{sum(r.skipped_sentences for r in cut)} sentence(s) not decomposed "
                "(see 'skipped_sentences' in --out)"
            )
        aside = sum(len(r.set_aside) for r in result.rows)
        if aside:
            click.echo(
                f"{aside} own fact(s) set aside as not standing alone, not verified "
                "(see 'set_aside' in --out; --no-standalone verifies them)"
            )
    if summary["n_bios"] == 0:
        click.echo("error: no line of the input could be scored", err=True)
        sys.exit(1)


def rule_line(rule: dict) -> str:
    """Which rule a run applied and why, from its run record's ``rule`` entry."""
    if rule.get("fitted_for") is None:
        return f"{rule['name']}, thresholds from {rule['thresholds_from']}"
    why = {"same": "the same weights, by sha256", "other": "OTHER weights than it was fitted "
           "on: calibrate for these (fscore calibrate)", "not checked": "by the model's "
           "name; its weights could not be checked here"}[rule["weights"]]  # fmt: skip
    return f"{rule['name']}, fitted for {rule['fitted_for']} ({why})"
