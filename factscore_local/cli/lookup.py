"""``fscore lookup``: resolve a title in an index and print its page."""

from __future__ import annotations

import json
from pathlib import Path

import click

from factscore_local.cli.output import fail


def open_index(index_dir: Path):
    """The index's ``KnowledgeSource``, or a clear error when it is not an index.

    Args:
        index_dir: The directory given with --index.

    Returns:
        The opened knowledge source.

    Example:
        >>> open_index(Path("my-index")).get_page("Albert Einstein")  # doctest: +SKIP
    """
    from factscore_local.index.reader import KnowledgeSource

    try:
        return KnowledgeSource(index_dir)
    except FileNotFoundError as exc:
        fail(str(exc))


# The index a page or passage is read from (lookup and search).
index_option = click.option(
    "--index",
    "index_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Index directory built by build-index.",
)


@click.command("lookup")
@index_option
@click.argument("title")
@click.option(
    "--passages", "n_passages", default=2, show_default=True, help="How many passages to print."
)
@click.option("--json", "as_json", is_flag=True, help="Print the page as JSON.")
def lookup_cmd(index_dir, title, n_passages, as_json) -> None:
    """Resolve TITLE (exact, redirect, any case) and print its page."""
    ks = open_index(index_dir)
    resolution = ks.resolve_title(title)
    if resolution.title is None:
        hint = (
            f" Did you mean: {', '.join(resolution.suggestions)}?" if resolution.suggestions else ""
        )
        fail(f"no page titled {title!r}.{hint}")
    page = ks.get_page(resolution.title)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "query": title,
                    "title": page.title,
                    "via": resolution.via,
                    "is_disambiguation": page.is_disambiguation,
                    "passages": [p.text for p in page.passages],
                },
                ensure_ascii=False,
            )
        )
        return
    via = "" if resolution.via == "exact" else f" (via {resolution.via})"
    click.echo(
        f"{page.title}{via}: {len(page.passages)} passages"
        + (", disambiguation page" if page.is_disambiguation else "")
    )
    for p in page.passages[:n_passages]:
        click.echo(f"[{p.passage_id}] {p.clean_text[:600]}")


COMMANDS = (lookup_cmd,)
