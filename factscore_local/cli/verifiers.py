"""``fscore verifiers``: the rule and thresholds ``fscore eval`` would apply for an LM (and a
settings file), then every rule as declared, with what was fitted for the model (its
shipped thresholds, or its weights by feature name)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from factscore_local.cli.output import RUN_ERRORS, fail
from factscore_local.declarations.verifiers import list_rules
from factscore_local.fitted_defaults import default_rule, model_name, shipped_rule

CALIBRATE_DOCS = "docs: Using another verifier LM"


def applied(lm: str | None, lm_model: str | None, settings: Path | None) -> dict:
    """What ``fscore eval --lm LM [--settings FILE]`` applies, from the config eval builds:
    ``{"lm", "rule", "thresholds", "fitted": bool}``; ``thresholds`` as the run's summary
    shows them (``from`` says where they came from). For a server, asks it which model it
    serves (ConnectionError when it does not answer)."""
    from factscore_local.config import build_config
    from factscore_local.labels.calibration import read_settings
    from factscore_local.results import thresholds_of

    name = model_name(lm, lm_model)  # a server's: asked here, as a run asks once connected
    options = {"index": ".", "lm": lm, "lm_model": lm_model}
    config = build_config(options, read_settings(settings) if settings else None, served=name)
    shown = thresholds_of(config)
    fitted = shown["from"] != "built-in defaults"
    return {"lm": name, "rule": config.verifier, "thresholds": shown, "fitted": fitted}


def applied_lines(entry: dict, spec: str | None) -> list[str]:
    """The account of :func:`applied` for a person: the rule, its thresholds or weights,
    and where no rule is fitted for the LM, how to fit one."""
    shown = dict(entry["thresholds"])
    source = shown.pop("from")
    lines = [f"fscore eval applies to {entry['lm']}: {entry['rule']} ({source})"]
    for key, value in shown.items():
        if isinstance(value, dict):
            lines.append("  weights: " + ", ".join(f"{n} {w:+.4f}" for n, w in value.items()))
        else:
            lines.append(f"  {key} > {value:g}")
    if not entry["fitted"]:
        lines.append(
            f"no rule is fitted for {entry['lm']}: fit one on FActScore's labeled bios with "
            f"'fscore calibrate --lm {spec or entry['lm']} ... --out my-lm.json' and run with "
            f"--settings my-lm.json ({CALIBRATE_DOCS})"
        )
    return lines


def describe(lm: str | None, everything: bool, chosen: str | None = None) -> list[dict]:
    """Each rule's spec and, where the LM has them, its shipped settings; ``default`` marks
    ``chosen`` (default: the LM's shipped default rule)."""
    chosen = chosen or default_rule(lm)
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
@click.option("--lm", default=None, help="The model (a name, a GGUF file, a directory or a "
              "server's URL) whose rule and fitted settings are shown (default: the embedded "
              "default model).")  # fmt: skip
@click.option("--lm-model", default=None, help="The model to use on an LM server that serves "
              "several (as for eval).")  # fmt: skip
@click.option("--settings", type=click.Path(path_type=Path), default=None,
              help="A settings file of 'fscore calibrate': what eval applies with it.")  # fmt: skip
@click.option("--all", "everything", is_flag=True,
              help="Also the research rules, which --help does not list.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object for what eval applies, then one per rule.")  # fmt: skip
def verifiers(
    lm: str | None, lm_model: str | None, settings: Path | None, everything: bool, as_json: bool
) -> None:
    """The rule and thresholds (or weights, by feature name) 'fscore eval' applies for the
    LM, then every rule (the one it applies first): what each reads, its vetoes, its older
    names, and what was fitted for the model."""
    try:
        entry = applied(lm, lm_model, settings)
        rules = describe(entry["lm"], everything, entry["rule"])
    except RUN_ERRORS as exc:  # a server that does not answer, a bad settings file
        fail(str(exc))
    rules.sort(key=lambda r: not r["default"])  # the applied rule first
    if as_json:
        click.echo(json.dumps({"applies": entry}))
        for rule in rules:
            click.echo(json.dumps(rule))
        return
    click.echo("\n".join(applied_lines(entry, lm)))
    click.echo(f"\nrules for {entry['lm']}:\n")
    for rule in rules:
        mark = " (what eval applies)" if rule["default"] else ""
        click.echo(f"{rule['name']}{mark}: {rule['description']}")
        click.echo(f"  reads: {', '.join(rule['reads']) or 'nothing'}")
        if rule["features"]:
            click.echo(f"  weighs: {', '.join(rule['features'])}")
        if rule["vetoes"]:
            click.echo(f"  vetoes on: {', '.join(rule['vetoes'])}")
        if rule["cuts"]:
            click.echo(f"  cuts: {', '.join(rule['cuts'])}")
        for key, value in rule.get("shipped", {}).items():
            if isinstance(value, dict):
                shown = ", ".join(f"{name} {w:+.4f}" for name, w in value.items())
                click.echo(f"  fitted weights: {shown}")
            else:
                click.echo(f"  fitted {key}: {value:g}")
        if rule["aliases"]:
            click.echo(f"  also answers to: {', '.join(rule['aliases'])}")
        click.echo("")


COMMANDS = (verifiers,)
