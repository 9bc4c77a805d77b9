"""``fscore ship-rule`` and ``fscore ship-head``: write what was fitted on the labels into the
package's shipped defaults, with the held-out figures that earned it its place.

A rule ships into ``data/model-defaults.json`` (schema 2: per model its default rule and,
per rule, its thresholds or weights keyed by feature name, with their provenance), from
``fscore calibrate``'s settings file and a results record that measured the rule held out:
the tables' record (its cross-fitted ER and F1 per subject, and those of the margin at 0)
or a state heads' record (the rule's figures and those of the default it replaces; refused
unless it won on both topic halves for every subject). ``--raw-text`` ships the raw-text
bias shift of a rule from a raw-text record, refused unless the shift won the same way. A
head (``fscore calibrate --head``, or a benchmark's ``--ship``) ships into ``data/heads/``
under the model's name, checked against the model it was trained on.

The benchmarks that train heads (``scripts/bench_heads.py``, ``scripts/bench_stance_head.py``)
call :func:`ship_head` for their ``--ship``; the figures' names are those the benchmarks
write (``<rule>/cross-fitted/<subject>/er``; ``levers`` of a heads record).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from factscore_local.cli.output import fail
from factscore_local.fitted_defaults import MODEL_DEFAULTS_PATH, model_name
from factscore_local.model_store import DEFAULT_LM
from factscore_local.pipeline.signals.state_head import StateHead, shipped_head_path

SUBJECTS = ("InstructGPT", "ChatGPT", "PerplexityAI")  # the paper's order, as records keep it
SCHEMA = 2  # the layout of model-defaults.json this command writes
WINS = "wins on both halves for every subject"


class NotShipped(ValueError):
    """What was measured does not earn a place in the shipped defaults (or is not a
    record of it)."""


def rule_names(rule: str) -> list[str]:
    """The names a rule goes by (its own first): records keep the name it had when they
    were written."""
    from factscore_local.declarations.verifiers import get_verifier

    verifier = get_verifier(rule)
    return list(dict.fromkeys([verifier.name, rule, *getattr(verifier, "aliases", ())]))


def figures_per_subject(figures: dict, prefix: str, digits: int) -> dict:
    """ER and micro-F1 per subject under ``prefix`` (a tables record's names)."""
    return {
        "error_rate": [round(figures[f"{prefix}/{s}/er"], digits) for s in SUBJECTS],
        "f1_micro": [round(figures[f"{prefix}/{s}/f1"], digits) for s in SUBJECTS],
        "subjects": list(SUBJECTS),
    }


def tables_figures(tables: dict, rule: str) -> dict:
    """The rule's cross-fitted figures and the margin at 0's, from the tables' record.

    Raises:
        NotShipped: the record did not measure the rule cross-fitted.
    """
    f = tables["figures"]
    measured = [n for n in rule_names(rule) if f"{n}/cross-fitted/{SUBJECTS[0]}/er" in f]
    if not measured:
        raise NotShipped(f"{tables.get('name', 'the record')} measured no {rule} cross-fitted")
    at_0 = figures_per_subject(f, "retrieve-lm/default", 1)
    del at_0["subjects"]
    return {
        "cross_fitted": figures_per_subject(f, f"{measured[0]}/cross-fitted", 2),
        "at_margin_0": at_0,
    }


def heads_cross_fitted(heads: dict, rule: str) -> dict:
    """A rule's cross-fitted figures from a state heads' record (a head rule's with its
    logistic head, as shipped; or the rule without the head's).

    Raises:
        NotShipped: the record measured no such rule, or the rule (other than the
            record's default) did not win on both halves for every subject.
    """
    names = set(rule_names(rule))
    found = [n for n, lever in heads["levers"].items()
             if lever.get("verifier") in names and ("(logistic)" in n or "(" not in n)]  # fmt: skip
    if not found:
        raise NotShipped(f"{heads['name']} measured no {rule}")
    name, lever = found[0], heads["levers"][found[0]]
    if name != "default" and not lever.get("wins_everywhere", False):
        raise NotShipped(f"{heads['name']}: {name} does not win on both halves for every "
                         "subject; nothing shipped")  # fmt: skip
    subjects = lever["subjects"]
    return {
        "error_rate": [round(subjects[s]["er"], 2) for s in SUBJECTS],
        "f1_micro": [round(subjects[s]["f1"], 2) for s in SUBJECTS],
        "subjects": list(SUBJECTS),
        "from": f"{heads['name']} ({name})",
    }


def measured_figures(measured: dict, rule: str) -> dict:
    """A rule's held-out figures in ``measured``: a tables record's cross-fitted figures
    and the margin at 0's, or a heads record's and those of the default it replaces.

    Raises:
        NotShipped: the record did not measure the rule held out (or, in a heads record,
            the rule did not win on both halves for every subject).
    """
    if "levers" in measured:  # a heads record measured the model's previous default beside it
        return {
            "cross_fitted": heads_cross_fitted(measured, rule),
            "replaces": heads_cross_fitted(measured, measured["levers"]["default"]["verifier"]),
        }
    return tables_figures(measured, rule)


FIGURE_KEYS = ("cross_fitted", "at_margin_0", "replaces")  # a provenance's held-out figures


def rule_entry(settings: dict, measured: dict, why: str, fitted_with: str) -> dict:
    """A rule's shipped entry: its thresholds or weights from calibrate's settings, and a
    provenance with the fit and the held-out figures of ``measured`` (a tables record, or a
    heads record: one with ``levers``).

    Raises:
        NotShipped: the weights are listed by position (not by feature name), or the
            record does not earn the rule its place.
    """
    from factscore_local.declarations.verifiers import get_verifier

    rule = settings["verifier"]
    figures = measured_figures(measured, rule)
    entry: dict = {}
    weights = settings.get("rule_weights")
    if weights:
        if not isinstance(weights, dict):
            raise NotShipped("the settings list the rule's weights by position; fit them "
                             "again with fscore calibrate, which names each feature's "
                             "weight")  # fmt: skip
        entry["weights"] = weights
    else:
        used = get_verifier(rule).thresholds  # the cuts its rule reads
        if "margin" in used:
            entry["margin"] = settings["margin"]
        if "np" in used:
            entry["np_threshold"] = settings["np_threshold"]
    entry["provenance"] = {"why": why, "fitted_with": fitted_with, "fit": settings["fit"],
                           **figures}  # fmt: skip
    return entry


def raw_text_shift(results: dict) -> tuple[float, str]:
    """The raw-text bias shift of a raw-text record and where it was fitted.

    Raises:
        NotShipped: the cross-fitted shift did not win on both halves for every subject,
            or the record gives no shift for the shipped weights.
    """
    f = results["figures"]
    if not f.get(f"raw text, calibrated/{WINS}"):
        raise NotShipped(f"{results['name']}: the raw-text shift does not win on both halves "
                         "for every subject; nothing shipped")  # fmt: skip
    shift = f.get("raw text, calibrated/shift for the shipped weights")
    if shift is None:
        raise NotShipped(f"{results['name']}: no shift for the shipped weights")
    return shift, f"{results['command']} (commit {results['commit']})"


def read_table(path: Path) -> dict:
    """The shipped defaults; an error for another layout than this command writes."""
    table = json.loads(Path(path).read_text("utf-8"))
    if table.get("schema") != SCHEMA:
        raise NotShipped(f"{path}: schema {table.get('schema')!r}; fscore ship-rule writes "
                         f"schema {SCHEMA}")  # fmt: skip
    return table


def write_table(table: dict, path: Path) -> None:
    Path(path).write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n", "utf-8")


def ship_rule(
    settings: dict,
    measured: dict,
    why: str,
    fitted_with: str,
    lm: str | None = None,
    default: bool = False,
    defaults_file: Path = MODEL_DEFAULTS_PATH,
) -> str:
    """Writes a fitted rule into the shipped defaults of ``lm``'s model (its default when
    ``default``); returns the rule's name there.

    Example:
        >>> ship_rule(json.load(open("veto.json")), json.load(open("tables-98.json")),
        ...           "why", "fscore calibrate ...", default=True)  # doctest: +SKIP
        'default'
    """
    from factscore_local.declarations.verifiers import get_verifier

    table = read_table(defaults_file)
    rule = get_verifier(settings["verifier"]).name
    entry = rule_entry(settings, measured, why, fitted_with)
    model = table["models"].setdefault(model_name(lm), {"rules": {}})
    model.setdefault("rules", {})[rule] = entry
    if default:
        model["default_rule"] = rule
    write_table(table, defaults_file)
    return rule


def shipped_entry(table: dict, lm: str | None, rule: str | None) -> tuple[str, dict]:
    """A rule's name and its entry among the shipped defaults of ``lm``'s model (its
    default rule when ``rule`` is None).

    Raises:
        NotShipped: the model ships no such rule.
    """
    from factscore_local.declarations.verifiers import get_verifier

    model = table["models"].get(model_name(lm), {})
    rule = get_verifier(rule).name if rule else model.get("default_rule")
    entry = model.get("rules", {}).get(rule)
    if entry is None:
        raise NotShipped(f"{model_name(lm)} ships no {rule or 'default rule'}")
    return rule, entry


def refresh_rule(
    measured: dict,
    lm: str | None = None,
    rule: str | None = None,
    defaults_file: Path = MODEL_DEFAULTS_PATH,
) -> str:
    """Re-reads a shipped rule's held-out figures from ``measured`` (the record that
    measured it, re-recorded since) and keeps the rest of its entry: its weights, why and
    how it was fitted. ``rule``: the model's default when None. Returns the rule's name.

    Raises:
        NotShipped: the model ships no such rule, or the record did not measure it.
    """
    table = read_table(defaults_file)
    rule, entry = shipped_entry(table, lm, rule)
    figures = measured_figures(measured, rule)
    provenance = entry.setdefault("provenance", {})
    for key in FIGURE_KEYS:  # in place, so the file's order of keys stays
        if key in figures:
            provenance[key] = figures[key]
        else:
            provenance.pop(key, None)
    write_table(table, defaults_file)
    return rule


def ship_raw_text_shift(
    results: dict, lm: str | None = None, defaults_file: Path = MODEL_DEFAULTS_PATH
) -> tuple[str, float]:
    """Writes a raw-text record's bias shift into its rule's shipped entry; returns the
    rule and the shift."""
    shift, fitted_with = raw_text_shift(results)
    table = read_table(defaults_file)
    rule, entry = shipped_entry(table, lm, results["data"]["rule"])
    entry["raw_text_shift"] = shift
    entry.setdefault("provenance", {})["raw_text_fitted_with"] = fitted_with
    write_table(table, defaults_file)
    return rule, shift


def shipped_path(model: str, stance: bool) -> Path:
    """Where a model's fact head or stance head ships."""
    from factscore_local.methods.factcheck.stance_head import stance_head_path

    return stance_head_path(model) if stance else shipped_head_path(model)


def ship_head(head: StateHead, lm: str | None = None, stance: bool = False,
              out: Path | None = None) -> Path:  # fmt: skip
    """Writes a trained head where ``lm``'s model reads it (or to ``out``); returns the path.

    Raises:
        NotShipped: the head was trained on another model's states, or is not the kind
            asked for (a stance head gives one logit per label, a fact head one score).
    """
    model = model_name(lm)
    trained = head.record.get("model")
    if trained and trained != model:
        raise NotShipped(f"the head was trained on {trained}'s states, not {model}'s")
    if stance != bool(head.record.get("labels")):
        kind = "a stance head" if stance else "a fact head"
        raise NotShipped(f"not {kind} (its outputs: {head.outputs})")
    return head.save(out or shipped_path(model, stance))


def read_json(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        fail(f"{path}: not a readable JSON file ({exc})")


@click.command("ship-rule")
@click.option(
    "--settings",
    type=click.Path(path_type=Path),
    default=None,
    help="fscore calibrate's settings file: the rule and its fitted weights.",
)
@click.option(
    "--measured",
    type=click.Path(path_type=Path),
    default=None,
    help="The results record that measured the rule held out: the tables' "
    "(scripts/results/tables-98.json) or a state heads' record.",
)
@click.option(
    "--raw-text",
    type=click.Path(path_type=Path),
    default=None,
    help="Instead: ship the raw-text bias shift of a raw-text record "
    "(scripts/results/raw-text-98.json), refused unless it won everywhere.",
)
@click.option(
    "--refresh",
    is_flag=True,
    help="Instead: re-read a shipped rule's held-out figures from --measured (re-recorded "
    "since), keeping its weights and the rest of its provenance.",
)
@click.option("--rule", default=None, help="With --refresh: the shipped rule (default: the "
              "model's default rule).")  # fmt: skip
@click.option("--why", default=None, help="Why the rule ships (kept in its provenance).")
@click.option("--fitted-with", default=None, help="The calibrate command that fitted it.")
@click.option("--default", "make_default", is_flag=True, help="Make it the model's default.")
@click.option("--lm", default=DEFAULT_LM, show_default=True, help="The model it ships for.")
@click.option("--defaults-file", type=click.Path(path_type=Path), default=MODEL_DEFAULTS_PATH,
              show_default="the package's data/model-defaults.json",
              help="The shipped defaults to write.")  # fmt: skip
def ship_rule_cmd(settings, measured, raw_text, refresh, rule, why, fitted_with, make_default,
                  lm, defaults_file) -> None:  # fmt: skip
    """Ship a fitted rule (or a raw-text shift) as a model's shipped defaults, or refresh a
    shipped rule's held-out figures from a re-recorded record."""
    try:
        if refresh:
            if not measured or settings or raw_text or why or fitted_with or make_default:
                fail("--refresh re-reads a shipped rule's figures: give --measured RECORD "
                     "(and --rule), nothing else")  # fmt: skip
            rule = refresh_rule(read_json(measured), lm, rule, defaults_file)
            click.echo(f"{model_name(lm)}: {rule}'s held-out figures refreshed from {measured}")
            return
        if rule:
            fail("--rule goes with --refresh; a fitted rule's name is in its --settings")
        if raw_text:
            if settings or measured:
                fail("--raw-text ships a shift alone: drop --settings and --measured")
            rule, shift = ship_raw_text_shift(read_json(raw_text), lm, defaults_file)
            click.echo(f"{model_name(lm)}: raw-text shift {shift} of {rule} shipped")
            return
        if not (settings and measured and why and fitted_with):
            fail("ship-rule needs --settings, --measured, --why and --fitted-with "
                 "(or --raw-text RECORD)")  # fmt: skip
        rule = ship_rule(read_json(settings), read_json(measured), why, fitted_with, lm,
                         make_default, defaults_file)  # fmt: skip
    except (ValueError, KeyError) as exc:  # NotShipped, or an unknown rule's name
        fail(str(exc))
    click.echo(f"{model_name(lm)}: {rule} shipped" + (" as the default" if make_default else ""))


@click.command("ship-head")
@click.argument("head_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--lm", default=DEFAULT_LM, show_default=True, help="The model it ships for.")
@click.option("--stance", is_flag=True, help="A stance head (fscore factcheck's), not a fact head.")
def ship_head_cmd(head_file, lm, stance) -> None:
    """Ship a trained head (fscore calibrate --head) where the model reads it."""
    try:
        path = ship_head(StateHead.load(head_file), lm, stance)
    except ValueError as exc:
        fail(str(exc))
    click.echo(f"{model_name(lm)}: {'stance ' if stance else ''}head shipped to {path}")


COMMANDS = (ship_rule_cmd, ship_head_cmd)
