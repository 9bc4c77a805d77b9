"""How ``bench_counterfactual``'s results file reads on its docs page: the tables' layout."""

from __future__ import annotations


def layout(report: dict, default: str, baseline: str) -> list[dict]:
    """The docs page's tables: per rule, its figures by kind (``default`` marked); the cut
    sweeps; the allowance against the ``baseline`` rule; the head's verdicts; the demo's
    planted statements."""
    columns = [{"head": "pairs", "cell": "{pairs}"},
               {"head": "contradictions rejected (%)", "cell": "{recall}"},
               {"head": "originals accepted (%)", "cell": "{originals_accepted}"},
               {"head": "margin ordered (%)", "cell": "{margin_ordered}"}]  # fmt: skip
    tables = []
    for name in report["verifiers"]:
        title = f"{name} (the default)" if name == default else name
        shown = columns if name != "slot-check" else columns[:3]
        tables.append({"title": title, "prefix": f"verifiers/{name}", "rows_head": "kind",
                       "columns": shown, "digits": 1})  # fmt: skip
    sweep = [{"head": "pairs", "cell": "{pairs}"},
             {"head": "score ordered (%)", "cell": "{score_ordered}"},
             {"head": "rejected within the allowance (%)", "cell": "{recall_in_allowance}"},
             {"head": "cut for 90% rejected", "cell": "{cut_for_90}", "digits": 2},
             {"head": "originals accepted at that cut (%)",
              "cell": "{originals_at_90}"}]  # fmt: skip
    for name in report.get("cuts", {}):
        tables.append({"title": f"{name}: its score at other cuts", "prefix": f"cuts/{name}",
                       "rows_head": "kind", "columns": sweep, "digits": 1})  # fmt: skip
    if "allowance" in report:
        tables.append({"title": "The allowance: the highest cut that keeps the originals "
                                f"within 2 points of {baseline}'s",
                       "prefix": "allowance", "rows_head": "rule",
                       "columns": [{"head": "cut", "cell": "{cut}", "digits": 2},
                                   {"head": "originals accepted (%)",
                                    "cell": "{originals_accepted}"},
                                   {"head": f"{baseline} (%)",
                                    "cell": "{baseline_accepted}"}]})  # fmt: skip
    for name in report.get("head", {}):
        tables.append({"title": f"{name} (each topic half by what was fitted on the other)",
                       "prefix": f"head/{name}", "rows_head": "kind", "columns": columns,
                       "digits": 1})  # fmt: skip
    if "planted" in report:
        rules = [k for k in next(iter(report["planted"].values())) if k.startswith("accepted")]
        planted = [{"head": "margin", "cell": "{margin}", "digits": 2},
                   {"head": "slots", "cell": "{slots}"},
                   *({"head": r, "cell": "{" + r + "}"} for r in rules)]  # fmt: skip
        tables.append({"title": "The demo's planted statements", "prefix": "planted",
                       "rows_head": "statement", "columns": planted})  # fmt: skip
    return tables
