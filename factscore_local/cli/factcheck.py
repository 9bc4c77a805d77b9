"""``fscore factcheck``: Factcheck-Bench offline (stance of evidence, claim verification
with evidence from the whole index, correction), scored against its labels."""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path

import click
import cloup

from factscore_local.cli.aliases import deprecated_alias
from factscore_local.cli.groups import DECISION, EVIDENCE, IO, MODEL, RUNTIME, option_groups
from factscore_local.cli.options import QUIET_OPTION, config_option, lm_option, n_samples_option
from factscore_local.cli.output import RUN_ERRORS, fail, require_index
from factscore_local.data import data_file


@functools.cache
def paper_figures() -> dict[str, str]:
    """The Factcheck-Bench paper's reference figures, one line of text per measure.

    Returns:
        Measure -> ``"system figure, system figure, ..."`` (data/factcheck-paper.json).

    Example:
        >>> paper_figures()["true_f1"]
        'always-true 0.88'
    """
    table = json.loads(data_file("factcheck-paper.json").read_text(encoding="utf-8"))
    return {
        measure: ", ".join(f"{system} {value:g}" for system, value in systems.items())
        for measure, systems in table["figures"].items()
    }


FACTCHECK_GROUPS = {
    IO: [
        config_option(
            "index", help="Index to retrieve claim evidence from (global search, no topic)."
        ),
        click.option(
            "--stance",
            "stance_file",
            type=click.Path(path_type=Path),
            default=None,
            help="Subtask 3: JSONL of {claim, evidence, stance}.",
        ),
        click.option(
            "--claims",
            "claims_file",
            type=click.Path(path_type=Path),
            default=None,
            help="Subtask 4: JSONL of {claim, label, revised_claim}.",
        ),
        click.option(
            "--out",
            required=True,
            type=click.Path(path_type=Path),
            help="Folder for stance.jsonl, claims.jsonl and summary.json.",
        ),
        n_samples_option("lines"),
    ],
    MODEL: [lm_option(), config_option("device")],
    EVIDENCE: [config_option("k", help="Passages retrieved per claim.")],
    DECISION: [
        config_option(
            "margin",
            help="A claim is true when logit(True) - logit(False) exceeds this.",
        ),
        click.option(
            "--stance-head",
            default=None,
            help="A stance head (.npz) that decides the stance from the LM's hidden state "
            "(and the pair's lexical features, if it was fitted with them); default: the one "
            "shipped for the LM, if any; 'none': the label words' logits.",
        ),
        click.option(
            "--no-correction", is_flag=True, help="Skip rewriting the claims judged false."
        ),
    ],
    RUNTIME: [config_option("cache"), QUIET_OPTION],
}


@cloup.command("factcheck")
@option_groups(FACTCHECK_GROUPS)
@deprecated_alias("--limit", "n_samples", "--n-samples", type=click.IntRange(min=1))
def factcheck_cmd(
    index, stance_file, claims_file, out, lm, device, k, margin, no_correction, n_samples,
    stance_head, cache, quiet,
) -> None:  # fmt: skip
    """Factcheck-Bench offline: stance of evidence (subtask 3), claim verification with
    evidence from the whole index, and correction (subtask 4); scores against the labels."""
    from tqdm import tqdm

    from factscore_local.config import EvalConfig
    from factscore_local.methods.factcheck.data import read_claims, read_stance_pairs
    from factscore_local.methods.factcheck.pipeline import (
        claim_scores,
        run_claims,
        run_stance,
        stance_scores,
    )
    from factscore_local.methods.factcheck.stance_head import run_stance_head, trained_on
    from factscore_local.pipeline.components import build_components

    if stance_file is None and claims_file is None:
        fail("give --stance and/or --claims")
    require_index(index)
    try:
        cache_path = cache or index / "eval-cache.db"
        config = EvalConfig(index=index, lm=lm, cache=cache_path, device=device)
        stance = read_stance_pairs(stance_file)[:n_samples] if stance_file else []
        claims = read_claims(claims_file)[:n_samples] if claims_file else []
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    try:
        head = _stance_head(stance_head, lm) if stance else None
    except RUN_ERRORS as exc:  # a bad head file, or an LM server asked its model that is down
        fail(str(exc))
    parts = build_components(config)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"index": str(index), "lm": lm, "k": k, "margin": margin}
    for name, items in (("stance", stance), ("claims", claims)):
        if not items:
            continue
        bar = tqdm(total=len(items), unit=" lines", desc=name, disable=quiet)
        parts.progress.attach(bar if not quiet else None)
        try:
            cached = parts.lm.get()
            if name == "stance" and head is not None:
                results = run_stance_head(items, cached, head)
                summary["stance"] = stance_scores(results, crossfit=False)
                summary["stance_head"] = head.record
                if trained_on(head, stance_file):
                    summary["stance_in_sample"] = True
                    click.echo(f"note: the stance head was trained on {stance_file.name}: "
                               "its figures here are in-sample (--stance-head none gives "
                               "the label logits')", err=True)  # fmt: skip
            elif name == "stance":
                results = run_stance(items, cached)
                summary["stance"] = stance_scores(results)
            else:
                results = run_claims(
                    items, cached, parts.knowledge, k, margin, correct=not no_correction
                )
                summary["claims"] = claim_scores(results)
        except RUN_ERRORS as exc:
            fail(str(exc))
        finally:
            bar.update(len(items))
            bar.close()
            parts.progress.attach(None)
        lines = [json.dumps(r.to_json(), ensure_ascii=False) for r in results]
        (out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    summary["paper"] = paper_figures()
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", "utf-8")
    print_factcheck(summary)


def _stance_head(option: str | None, lm: str | None):
    """The stance head asked for: a file, none, or the one shipped for the LM (if any)."""
    from factscore_local.config import model_name
    from factscore_local.methods.factcheck.stance_head import shipped_stance_head
    from factscore_local.pipeline.signals.state_head import load_head

    if option == "none":
        return None
    if option is None:
        return shipped_stance_head(model_name(lm))
    return load_head(option)


def print_factcheck(summary: dict) -> None:
    """The stance and claim scores beside the paper's figures, and the correction's.

    Args:
        summary: What ``summary.json`` holds.

    Example:
        >>> print_factcheck(json.loads(Path("out/summary.json").read_text()))  # doctest: +SKIP
    """
    paper = paper_figures()
    stance = summary.get("stance")
    if stance:
        fitted = stance.get("label_bias_crossfitted") or {}
        rows = [(stance, "")] + ([(fitted, ", label bias cross-fitted")] if fitted else [])
        for (part, how), (key, name) in itertools.product(
            rows, (("three_labels", "3 labels"), ("four_labels", "4 labels"))
        ):
            s = part[key]
            per = ", ".join(f"{label} {v['f1']:.3f}" for label, v in s["per_label"].items())
            click.echo(
                f"stance{how}, {name} ({s['n']} pairs): accuracy {s['accuracy']:.3f}, macro "
                f"P/R/F1 {s['macro_precision']:.3f} / {s['macro_recall']:.3f} / "
                f"{s['macro_f1']:.3f}; F1 per label: {per}"
            )
        click.echo(f"  paper, macro F1: 3 labels {paper['stance_3_macro_f1']}; "
                   f"4 labels {paper['stance_4_macro_f1']}")  # fmt: skip
    claims = summary.get("claims")
    if claims:
        for key in ("system", "margin_crossfitted", "always_true", "always_false"):
            if key not in claims:
                continue
            s = claims[key]
            cells = "; ".join(
                f"{label} P/R/F1 {v['precision']:.3f} / {v['recall']:.3f} / {v['f1']:.3f}"
                for label, v in s["per_label"].items()
            )
            click.echo(f"claims, {key} ({s['n']} true/false claims): {cells}")
        click.echo(f"  paper, F1 on false claims: {paper['false_f1']}; on true "
                   f"claims: {paper['true_f1']}")  # fmt: skip
        fix = claims.get("correction")
        if fix:
            click.echo(
                f"correction ({fix['n']} false claims judged false): word similarity to the "
                f"human revision {fix['similarity_revision']:.3f} (unrevised claim "
                f"{fix['similarity_unrevised']:.3f}); closer than unrevised: "
                f"{100 * fix['closer_than_unrevised']:.1f}%"
            )
    for name in ("stance", "claims"):
        errors = (summary.get(name) or {}).get("errors")
        if errors:
            click.echo(f"{errors} {name} line(s) could not be used; see 'error' in the output")


COMMANDS = (factcheck_cmd,)
