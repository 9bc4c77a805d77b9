"""FActScore's labeled format, read in one place.

A labeled line's ``annotations`` is a list of sentences (null when the bio abstains), each
``{"text", "model-atomic-facts": [{"text"}], "human-atomic-facts": [{"text", "label"}]}``;
a sentence the humans judged irrelevant has no human facts. Anything else raises
``LabeledFormatError``.

The human FActScore of a bio follows the paper (§3.3, App. B.2): supported / all facts,
where a sentence with human facts contributes its S, NS and IR facts (NS and IR not
supported), and a sentence without them contributes its model facts as not supported. It
reproduces 59.7 / 50.5 / 74.8 on the dev files and the paper's Table 1 on the release.
"""

from __future__ import annotations

from dataclasses import dataclass

LABELS = ("S", "NS", "IR")


class LabeledFormatError(ValueError):
    """The annotations are not in FActScore's labeled format."""

    def __init__(self, detail: str = "") -> None:
        message = "malformed 'annotations' (expected FActScore's labeled format)"
        super().__init__(f"{message}: {detail}" if detail else message)


@dataclass(frozen=True)
class HumanFact:
    sentence: str
    text: str
    label: str  # "S", "NS" or "IR"


def _checked(annotations) -> list[dict]:
    if not isinstance(annotations, list) or not all(isinstance(s, dict) for s in annotations):
        raise LabeledFormatError("expected a list of sentence objects")
    return annotations


def model_facts(annotations: list | None) -> list[tuple[str, str]]:
    """(sentence, atom) for every model atomic fact, in order; [] for an abstention."""
    if annotations is None:
        return []
    try:
        return [
            (sent.get("text", ""), atom["text"])
            for sent in _checked(annotations)
            for atom in (sent.get("model-atomic-facts") or [])
        ]
    except (AttributeError, KeyError, TypeError) as exc:
        raise LabeledFormatError(f"a model fact without text ({exc})") from exc


def human_facts(annotations: list | None) -> list[HumanFact]:
    """The human atomic facts of a bio (from the sentences that have them)."""
    if annotations is None:
        return []
    try:
        return [
            HumanFact(sent.get("text", ""), fact["text"], fact["label"])
            for sent in _checked(annotations)
            for fact in sent.get("human-atomic-facts") or []
        ]
    except (AttributeError, KeyError, TypeError) as exc:
        raise LabeledFormatError(f"a human fact without text or label ({exc})") from exc


def label_counts(annotations: list | None) -> dict[str, int]:
    """S / NS / IR counts of a bio under the paper's definition (the model facts of an
    irrelevant sentence count as IR)."""
    counts = dict.fromkeys(LABELS, 0)
    try:
        for sent in _checked(annotations or []):
            facts = sent.get("human-atomic-facts")
            if facts:
                for fact in facts:
                    counts[fact["label"]] += 1
            else:
                counts["IR"] += len(sent.get("model-atomic-facts") or [])
    except (AttributeError, KeyError, TypeError) as exc:
        raise LabeledFormatError(f"a human fact without a known label ({exc})") from exc
    return counts


def human_bio_score(annotations: list | None) -> tuple[float, int] | None:
    """(score, number of facts) of one bio under the paper's definition; None when the bio
    does not respond."""
    if annotations is None:
        return None
    counts = label_counts(annotations)
    total = sum(counts.values())
    if total == 0:
        return None
    return counts["S"] / total, total
