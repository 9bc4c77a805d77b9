"""Reading ``fscore eval`` input: one ``Bio`` per non-blank JSONL line.

A line that cannot be used (not UTF-8, not JSON, not an object, a missing field) becomes a
``Bio`` with ``error`` set, so it is reported in the output and the rest goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


class InputError(ValueError):
    """The input file cannot be used at all."""


@dataclass(frozen=True)
class Bio:
    line: int
    topic: str = ""
    output: str = ""
    annotations: list | None = None
    has_annotations_key: bool = False
    error: str = ""
    source: str = ""  # the input file it came from
    record: dict = field(default_factory=dict)  # the parsed line, as it was read

    @property
    def category(self) -> str | None:
        """The entity's frequency class: FActScore's ``cat`` ([class, region]) or a
        ``category`` string."""
        value = self.record.get("category", self.record.get("cat"))
        if isinstance(value, list) and value and isinstance(value[0], str):
            return value[0]
        return value if isinstance(value, str) else None


def json_objects(path: Path) -> Iterator[tuple[int, dict | str]]:
    """(line number, the line's JSON object, or why it is not one) per non-blank line of a
    JSONL file; raises InputError when the file is not there."""
    if not path.is_file():
        raise InputError(f"input not found: {path}")
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield number, "line is not UTF-8"
                continue
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, f"invalid JSON ({exc.msg})"
                continue
            yield number, obj if isinstance(obj, dict) else "line is not a JSON object"


def read_bios(path: Path) -> Iterator[Bio]:
    """One Bio per non-blank line; a bad line becomes a Bio with ``error`` set."""
    for number, obj in json_objects(path):
        yield bio_from_object(number, obj, str(path))


def bio_from_object(number: int, obj: dict | str, source: str = "") -> Bio:
    """The Bio of one parsed line (a str: why the line is not a JSON object)."""
    if isinstance(obj, str):
        return Bio(number, error=obj, source=source)
    topic, output = obj.get("topic"), obj.get("output")
    # A line without a topic is judged against the whole index.
    missing = [k for k, v in (("topic", topic), ("output", output))
               if not isinstance(v, str) and not (k == "topic" and v is None)]  # fmt: skip
    if missing:
        return Bio(
            number,
            topic=topic if isinstance(topic, str) else "",
            error=f"missing or non-string field(s): {', '.join(missing)}",
            source=source,
        )
    return Bio(
        number,
        topic=topic or "",
        output=output,
        annotations=obj.get("annotations"),
        has_annotations_key="annotations" in obj,
        source=source,
        record=obj,
    )
