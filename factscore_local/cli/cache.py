"""``fscore cache``: move a result cache between machines (results keyed by hashes)."""

from __future__ import annotations

from pathlib import Path

import click

from factscore_local.cli.output import fail


@click.group("cache")
def cache_group() -> None:
    """Move a result cache between machines: its results keyed by hashes (no prompt text)."""


@cache_group.command("export")
@click.option(
    "--cache",
    "cache_path",
    required=True,
    type=click.Path(path_type=Path),
    help="The result cache to read (e.g. <index>/eval-cache.db).",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="A .jsonl.gz file.")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (e.g. true_false).")
@click.option(
    "--exclude",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Leave out the results already in this earlier export (repeatable).",
)
def cache_export_cmd(
    cache_path: Path, out: Path, kinds: tuple[str, ...], exclude: tuple[Path, ...]
) -> None:
    """Write the cached model results to one gzipped file."""
    from factscore_local.runtime.cache import ResultCache

    if not cache_path.is_file():
        fail(f"no cache at {cache_path}")
    cache = ResultCache(cache_path)
    try:
        n = cache.export(out, kinds, exclude)
    except ValueError as exc:
        fail(str(exc))
    finally:
        cache.close()
    click.echo(f"cache: {n} results written to {out}")


@cache_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--cache",
    "cache_path",
    required=True,
    type=click.Path(path_type=Path),
    help="The result cache to add to (created if missing).",
)
def cache_import_cmd(files: tuple[Path, ...], cache_path: Path) -> None:
    """Add exported results to a cache (results already there are kept)."""
    from factscore_local.runtime.cache import ResultCache

    cache = ResultCache(cache_path)
    try:
        for path in files:
            try:
                added, present = cache.import_file(path)
            except (OSError, ValueError) as exc:
                fail(str(exc))
            click.echo(f"cache: {path}: {added} results added, {present} already there")
    finally:
        cache.close()


COMMANDS = (cache_group,)
