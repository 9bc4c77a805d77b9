"""``fscore veriscore``: VeriScore offline, claims verified against the whole index."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import cloup

from factscore_local.cli.groups import DECISION, EVIDENCE, FACTS, IO, MODEL, RUNTIME, option_groups
from factscore_local.cli.options import QUIET_OPTION, config_option, lm_option
from factscore_local.cli.output import RUN_ERRORS, fail, require_index
from factscore_local.config import MAX_EVIDENCE_BUDGET

VERISCORE_GROUPS = {
    IO: [
        config_option(
            "index", help="Index to retrieve each claim's evidence from (global search, no topic)."
        ),
        click.option(
            "--input",
            "input_file",
            required=True,
            type=click.Path(path_type=Path),
            help="JSONL with 'response' (or 'output'), optional 'question' and 'domain'.",
        ),
        click.option(
            "--out",
            required=True,
            type=click.Path(path_type=Path),
            help="JSONL: per response its claims, evidence, verdicts and F1@K.",
        ),
    ],
    FACTS: [
        click.option(
            "--resolve-pronouns/--keep-pronouns",
            default=True,
            show_default=True,
            help="Rewrite claims that open with a pronoun with the name their window gives "
            "(one short generation per such claim; the rewrite is kept only if it changes "
            "nothing else).",
        ),
    ],
    MODEL: [lm_option(), config_option("device")],
    EVIDENCE: [
        config_option("k", help="Passages retrieved per claim."),
        click.option(
            "--evidence",
            type=click.Choice(["per-claim", "shared", "page"]),
            default="per-claim",
            show_default=True,
            help="Judge each claim against its own top-k (VeriScore's procedure); against "
            "the union of its response's claims' top-k, which the LM reads once per response "
            "(shared); or against the page (segment) that holds most of its top-k, which the "
            "LM reads once for every claim of every response that lands there (page).",
        ),
        config_option(
            "evidence_budget",
            help="Shared and page evidence: tokens of passages per block (a response's "
            "union, or a long page, is split).",
            min=256,
            max=MAX_EVIDENCE_BUDGET,
        ),
    ],
    DECISION: [
        config_option(
            "margin",
            help="Binary verdicts: supported when log P(Supported) - log P(Unsupported) "
            "exceeds this.",
        ),
        click.option(
            "--ternary",
            is_flag=True,
            help="Supported / contradicted / inconclusive (default: supported / unsupported).",
        ),
        click.option(
            "--k-claims",
            type=float,
            default=None,
            help="K of F1@K; default: the median number of claims per response in each domain.",
        ),
    ],
    RUNTIME: [config_option("cache"), QUIET_OPTION],
}


@cloup.command("veriscore")
@option_groups(VERISCORE_GROUPS)
def veriscore_cmd(
    index, input_file, out, lm, device, k, k_claims, ternary, margin, evidence,
    evidence_budget, resolve_pronouns, cache, quiet,
) -> None:  # fmt: skip
    """VeriScore offline: verifiable claims from a sliding window, verified against passages
    from the whole index, scored by F1@K."""
    from tqdm import tqdm

    from factscore_local.config import EvalConfig
    from factscore_local.methods.veriscore.pipeline import (
        read_responses,
        score_responses,
        summarize_veriscore,
    )
    from factscore_local.pipeline.components import build_components

    require_index(index)
    if k_claims is not None and k_claims <= 0:
        fail("--k-claims must be positive")
    try:
        responses = list(read_responses(input_file))
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    config = EvalConfig(index=index, lm=lm, cache=cache or index / "eval-cache.db", device=device)
    parts = build_components(config)
    bar = tqdm(total=len(responses), unit=" responses", desc="veriscore", disable=quiet)
    parts.progress.attach(None if quiet else bar)
    try:
        mode = "ternary" if ternary else "binary"
        rows = score_responses(
            responses, parts.lm.get(), parts.knowledge, k, mode, k_claims, margin,
            evidence, evidence_budget, resolve_pronouns,
        )  # fmt: skip
    except RUN_ERRORS as exc:
        fail(str(exc))
    finally:
        bar.update(len(responses))
        bar.close()
        parts.progress.attach(None)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    summary = summarize_veriscore(rows)
    for name, block in {"all": summary["all"], **summary["domains"]}.items():
        if not block["responses"]:
            continue
        click.echo(
            f"{name}: VeriScore (F1@K, K={block['K']:g}) {block['veriscore']:.1f}   "
            f"claims per response {block['claims_per_response']:.1f}   supported "
            f"{block['supported_share']:.1f}%   responses {block['responses']}"
        )
    if summary["errors"]:
        click.echo(f"{summary['errors']} line(s) could not be used; see 'error' in --out")
    if not summary["all"]["responses"]:
        sys.exit(1)


COMMANDS = (veriscore_cmd,)
