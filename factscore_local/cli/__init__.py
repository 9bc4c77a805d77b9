"""The ``fscore`` command line: the click group, with one module per command.

Each command is a thin layer over the Python API (:mod:`factscore_local.api`) or the
module that does its work; its options for the estimator's settings are generated from
``EvalConfig`` (:mod:`factscore_local.cli.options`).
"""

from __future__ import annotations

import importlib

import click

from factscore_local import __version__
from factscore_local.runtime.offline import enforce_offline


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fscore")
def main() -> None:
    """Offline FActScore: build a Wikipedia knowledge source, then score generations."""
    enforce_offline()


# One module per command (or command group); each lists its commands in COMMANDS.
COMMAND_MODULES = (
    "build_index", "lookup", "search", "demo", "models", "cache", "sources", "eval",
    "calibrate", "rerun", "report", "veriscore", "factcheck", "ship",
)  # fmt: skip

for _name in COMMAND_MODULES:
    for _command in importlib.import_module(f"{__name__}.{_name}").COMMANDS:
        main.add_command(_command)
