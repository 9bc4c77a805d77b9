"""``fscore search``: the top-k passages for a query, over an index or within one page."""

from __future__ import annotations

import click

from factscore_local.cli.lookup import index_option, open_index
from factscore_local.cli.output import fail


@click.command("search")
@index_option
@click.argument("query")
@click.option("--k", default=5, show_default=True, help="Passages to print.")
@click.option(
    "--method",
    type=click.Choice(["bm25", "dense"]),
    default="bm25",
    show_default=True,
    help="BM25 (the global Lucene index, or the page's) or the dense encoder's similarity.",
)
@click.option("--title", default=None, help="Restrict to this page (FActScore's retrieval).")
def search_cmd(index_dir, query, k, method, title) -> None:
    """Top-k passages for QUERY, over everything or within one page."""
    from factscore_local.index.reader import UnknownTitleError

    ks = open_index(index_dir)
    try:
        if title:
            hits = ks.search_page(title, query, k=k, method=method)
        elif method == "bm25":
            hits = ks.search(query, k=k)
        else:
            hits = ks.search_dense(query, k=k)
    except (UnknownTitleError, RuntimeError) as exc:
        fail(str(exc))
    for hit in hits:
        click.echo(
            f"{hit.rank + 1}. {hit.score:.3f} [{hit.passage.passage_id}] "
            f"{hit.passage.title}: {hit.passage.clean_text[:200]}"
        )


COMMANDS = (search_cmd,)
