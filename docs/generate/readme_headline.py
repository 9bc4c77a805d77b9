"""Put the generated tables into the README.

    python -m docs.generate.readme_headline [--check]

``python -m docs.generate`` writes ``docs/benchmarks/headline.md`` (the dev-set ER and F1),
``docs/benchmarks/contradictions.md`` (the counterfactual probe), ``raw-text.md`` (the
estimate from raw text) and ``run-time.md`` from their results files, then copies each,
unchanged, between the README's ``<!-- NAME -->`` and ``<!-- /NAME -->`` markers, so the
README's figures are never typed by hand. Run alone, this copies them again; ``--check``
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


def spliced(readme: str) -> str:
    """``readme`` with every generated block that has its page copied in."""
    for name, page in BLOCKS.items():
        if page.exists():
            readme = splice(readme, page.read_text("utf-8"), name)
    return readme


def splice_readme() -> bool:
    """Copies the generated blocks into the README; True when it changed."""
    readme = README.read_text("utf-8")
    updated = spliced(readme)
    if updated != readme:
        README.write_text(updated, "utf-8")
    return updated != readme


def main(argv: list[str] | None = None) -> int:
    """Splices (or, with ``--check``, compares) every generated block."""
    ap = argparse.ArgumentParser(prog="python -m docs.generate.readme_headline",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = ap.parse_args(argv)
    if args.check:
        same = spliced(README.read_text("utf-8")) == README.read_text("utf-8")
        print("README blocks: " + ("OK" if same else "differ from docs/benchmarks"))
        return 0 if same else 1
    if splice_readme():
        print("README blocks: updated from docs/benchmarks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
