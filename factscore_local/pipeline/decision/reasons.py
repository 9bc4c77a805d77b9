"""Why a rule did not support a fact, in words, from the values it read.

Each rejected fact gets one reason: the veto that applied (with the conflicting values,
which ``detail`` supplies from the fact's passages), the cut a threshold rule's signal did
not pass, or, for a fitted rule, its score and the signals that stand low. Supported facts
get none. The reason is written beside the decision in the rows, the demo and the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from factscore_local.declarations.features import feature_values, with_slot_flags
from factscore_local.declarations.verifiers import FittedRule, Thresholds, Verifier

# Plain cuts a fitted rule's signals are described against (not what it decides on).
LOW_MARGIN, LOW_NP, LOW_COVERAGE = 0.0, 0.3, 0.6

# (fact index, conflicting kind) -> the values in conflict, quoted from its passages
Detail = Callable[[int, str], str]


def reasons(
    verifier: Verifier,
    values: Mapping[str, np.ndarray],
    thresholds: Thresholds,
    supported: np.ndarray,
    detail: Detail | None = None,
) -> list[str | None]:
    """One reason per fact (None where it is supported).

    Example:
        >>> import numpy as np
        >>> from factscore_local.declarations.verifiers import get_verifier
        >>> rule = get_verifier("retrieve-lm")
        >>> reasons(rule, {"margin": np.array([1.0, -0.5])}, Thresholds(), np.array([True, False]))
        [None, 'low margin: -0.50, not above 0.00']
    """
    values = with_slot_flags(values)
    supported = np.asarray(supported, bool)
    if supported.all():
        return [None] * len(supported)
    rule = verifier.rule
    fitted = isinstance(rule, FittedRule)
    # Computed once for every fact: which veto each fact raises, and the fitted score.
    vetoes = {v: feature_values(v, values) >= 1 for v in rule.vetoes} if fitted else {}
    scores = rule.score(values, thresholds.weights) if fitted and thresholds.weights else None
    out: list[str | None] = []
    for i, ok in enumerate(supported):
        if ok:
            out.append(None)
        elif fitted:
            raised = next((v for v, on in vetoes.items() if on[i]), None)
            out.append(
                _veto_reason(raised.removesuffix("_conflict"), i, detail)
                if raised
                else _fitted_reason(
                    values, None if scores is None else float(scores[i]), i, detail
                )  # fmt: skip
            )
        else:
            out.append(_cut_reason(verifier, values, thresholds, i))
    return out


def _at(values: Mapping[str, np.ndarray], key: str, i: int) -> float | None:
    column = values.get(key)
    if column is None:
        return None
    value = float(np.asarray(column, float)[i])
    return None if np.isnan(value) else value


def _veto_reason(kind: str, i: int, detail: Detail | None) -> str:
    said = detail(i, kind) if detail else ""
    return f"vetoed: its {kind} conflicts with its passages" + (f" ({said})" if said else "")


def _cut_reason(
    verifier: Verifier, values: Mapping[str, np.ndarray], thresholds: Thresholds, i: int
) -> str:
    if verifier.thresholds:
        cuts = {"margin": thresholds.margin, "np": thresholds.np}
        names = {"margin": "margin", "np": "NP"}
        low = []
        for signal in verifier.thresholds:
            value = _at(values, signal, i)
            if value is not None and value <= cuts[signal]:
                low.append(f"low {names[signal]}: {value:+.2f}, not above {cuts[signal]:.2f}")
        return "; ".join(low) or "below its cut"
    if verifier.signals == ("draw",):
        return "baseline: the coin said not supported"
    return "baseline: no fact is supported"


def _fitted_reason(
    values: Mapping[str, np.ndarray], score: float | None, i: int, detail: Detail | None = None
) -> str:
    """A fitted rule's rejection: its score (None: not fitted, the ensemble decided) and
    the signals that stand low; a conflicting slot with its values and role (``detail``)."""
    margin, np_value = _at(values, "margin", i), _at(values, "np", i)
    coverage = _at(values, "coverage", i)
    low = []
    if margin is not None and margin <= LOW_MARGIN:
        low.append(f"low margin ({margin:+.2f})")
    if np_value is not None and np_value <= LOW_NP:
        low.append(f"low NP ({np_value:.2f})")
    if coverage is not None and coverage < LOW_COVERAGE:
        low.append(f"not covered ({coverage:.0%} of its words in its passages)")
    conflicts = [k for k in ("number", "year", "nationality", "place", "other")
                 if (_at(values, f"slot_{k}", i) or 0) >= 1]  # fmt: skip
    if conflicts:
        said = detail(i, conflicts[0]) if detail else ""
        low.append(f"a conflicting {' and '.join(conflicts)} slot" + (f" ({said})" if said else ""))
    elif detail and (said := detail(i, "person")):  # named, not weighed: see person_roles
        low.append(f"a role the passages give another person ({said})")
    if score is None:
        return "; ".join(low) or "the margin and NP ensemble said no"
    return f"fitted score {score:+.2f}, not above 0" + (f": {', '.join(low)}" if low else "")
