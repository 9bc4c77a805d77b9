"""Put the generated tables into the README.

    python -m scripts.readme_headline [--check]

``python -m scripts.docs`` writes ``docs/benchmarks/headline.md`` (the dev-set ER and F1),
``docs/benchmarks/contradictions.md`` (the counterfactual probe) and, once its results file
exists, ``docs/benchmarks/raw-text.md`` (the estimate from raw text) from their results
files; this copies each, unchanged, between the README's ``<!-- NAME -->`` and
``<!-- /NAME -->`` markers, so the README's figures are never typed by hand. ``--check``
changes nothing and exits 1 when a block differs.
"""

from __future__ import annotations

import argparse
import re

from scripts.common import ROOT

README = ROOT / "README.md"
BLOCKS = {  # marker name -> the generated page the README holds there
    "headline": ROOT / "docs" / "benchmarks" / "headline.md",
    "contradictions": ROOT / "docs" / "benchmarks" / "contradictions.md",
    "raw-text": ROOT / "docs" / "benchmarks" / "raw-text.md",
    "run-time": ROOT / "docs" / "benchmarks" / "run-time.md",
}
HEADLINE = BLOCKS["headline"]


def _pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name} -->\n)(.*?)(<!-- /{name} -->)", re.DOTALL)


def readme_block(readme: str, name: str = "headline") -> str:
    """The text between the README's ``name`` markers.

    Raises:
        ValueError: the README has no (or an unclosed) such block.
    """
    match = _pattern(name).search(readme)
    if match is None:
        raise ValueError(f"README.md has no '<!-- {name} -->' ... '<!-- /{name} -->' block")
    return match.group(2)


def splice(readme: str, table: str, name: str = "headline") -> str:
    """``readme`` with ``table`` between its ``name`` markers."""
    readme_block(readme, name)  # the markers must be there
    table = table if table.endswith("\n") else table + "\n"
    return _pattern(name).sub(lambda m: m.group(1) + table + m.group(3), readme, count=1)


def main(argv: list[str] | None = None) -> int:
    """Splices (or, with ``--check``, compares) every generated block."""
    ap = argparse.ArgumentParser(prog="python -m scripts.readme_headline", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = ap.parse_args(argv)
    readme = updated = README.read_text("utf-8")
    for name, page in BLOCKS.items():
        if page.exists():
            updated = splice(updated, page.read_text("utf-8"), name)
    if args.check:
        same = updated == readme
        print("README blocks: " + ("OK" if same else "differ from docs/benchmarks"))
        return 0 if same else 1
    if updated != readme:
        README.write_text(updated, "utf-8")
        print("README blocks: updated from docs/benchmarks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
