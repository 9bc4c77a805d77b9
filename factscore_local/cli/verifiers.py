"""``fscore verifiers``: the rules a run can decide with, as declared, and what was fitted
for a model (its shipped thresholds, or its weights by feature name)."""

from __future__ import annotations

import json

import click

from factscore_local.fitted_defaults import default_rule, model_name, shipped_rule
from factscore_local.pipeline.decision.verifiers import list_rules


def describe(lm: str | None, everything: bool) -> list[dict]:
    """Each rule's spec and, where the LM has them, its shipped settings."""
    chosen = default_rule(lm)
    out = []
    for rule in list_rules(everything):
        shipped = shipped_rule(lm, rule.name)
        entry = {
            "name": rule.name,
            "default": rule.name == chosen,
            "description": rule.description,
            "reads": list(rule.signals),
            "features": list(rule.features),
            "vetoes": list(rule.vetoes),
            "cuts": [t for t in rule.thresholds if t != "weights"],
            "aliases": list(rule.aliases),
        }
        if shipped:
            settings = dict(shipped.settings)
            if "rule_weights" in settings:
                settings["rule_weights"] = rule.weights_by_name(settings["rule_weights"])
            entry["shipped"] = settings
        out.append(entry)
    return out


@click.command("verifiers")
@click.option("--lm", default=None, help="The model whose shipped settings are shown "
              "(default: the embedded default model).")  # fmt: skip
@click.option("--all", "everything", is_flag=True,
              help="Also the research rules, which --help does not list.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="One JSON object per rule.")
def verifiers(lm: str | None, everything: bool, as_json: bool) -> None:
    """List the verifiers' rules (the default first): what each reads, its vetoes, its
    older names, and the thresholds or weights (by feature name) fitted for the model."""
    rules = describe(lm, everything)
    if as_json:
        for entry in rules:
            click.echo(json.dumps(entry))
        return
    click.echo(f"rules for {model_name(lm)}:\n")
    for entry in rules:
        mark = " (the model's default)" if entry["default"] else ""
        click.echo(f"{entry['name']}{mark}: {entry['description']}")
        click.echo(f"  reads: {', '.join(entry['reads']) or 'nothing'}")
        if entry["features"]:
            click.echo(f"  weighs: {', '.join(entry['features'])}")
        if entry["vetoes"]:
            click.echo(f"  vetoes on: {', '.join(entry['vetoes'])}")
        if entry["cuts"]:
            click.echo(f"  cuts: {', '.join(entry['cuts'])}")
        for key, value in entry.get("shipped", {}).items():
            if isinstance(value, dict):
                shown = ", ".join(f"{name} {w:+.4f}" for name, w in value.items())
                click.echo(f"  fitted weights: {shown}")
            else:
                click.echo(f"  fitted {key}: {value:g}")
        if entry["aliases"]:
            click.echo(f"  also answers to: {', '.join(entry['aliases'])}")
        click.echo("")


COMMANDS = (verifiers,)
