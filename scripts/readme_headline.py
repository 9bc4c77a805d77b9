"""Put the generated headline table into the README.

    python -m scripts.readme_headline [--check]

``python -m scripts.docs`` writes ``docs/benchmarks/headline.md`` from the headline results
file; this copies it, unchanged, between the README's ``<!-- headline -->`` and
``<!-- /headline -->`` markers, so the README's figures are never typed by hand.
``--check`` changes nothing and exits 1 when the README's block differs.
"""

from __future__ import annotations

import argparse
import re

from scripts.common import ROOT

README = ROOT / "README.md"
HEADLINE = ROOT / "docs" / "benchmarks" / "headline.md"
BLOCK = re.compile(r"(<!-- headline -->\n)(.*?)(<!-- /headline -->)", re.DOTALL)


def readme_block(readme: str) -> str:
    """The text between the README's headline markers.

    Raises:
        ValueError: the README has no (or an unclosed) headline block.
    """
    match = BLOCK.search(readme)
    if match is None:
        raise ValueError("README.md has no '<!-- headline -->' ... '<!-- /headline -->' block")
    return match.group(2)


def splice(readme: str, table: str) -> str:
    """``readme`` with ``table`` between its headline markers."""
    readme_block(readme)  # the markers must be there
    table = table if table.endswith("\n") else table + "\n"
    return BLOCK.sub(lambda m: m.group(1) + table + m.group(3), readme, count=1)


def main(argv: list[str] | None = None) -> int:
    """Splices (or, with ``--check``, compares) the headline table."""
    ap = argparse.ArgumentParser(prog="python -m scripts.readme_headline", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = ap.parse_args(argv)
    readme, table = README.read_text("utf-8"), HEADLINE.read_text("utf-8")
    updated = splice(readme, table)
    if args.check:
        same = updated == readme
        print("README headline: " + ("OK" if same else "differs from " + str(HEADLINE)))
        return 0 if same else 1
    if updated != readme:
        README.write_text(updated, "utf-8")
        print(f"README headline: updated from {HEADLINE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
