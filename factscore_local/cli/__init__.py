"""The ``fscore`` command line: the click group, with one module per command.

Each command is a thin layer over the Python API (:mod:`factscore_local.api`) or the
module that does its work; its options for the estimator's settings are generated from
``EvalConfig`` (:mod:`factscore_local.cli.options`).
"""

from __future__ import annotations

import importlib

import click
import cloup

from factscore_local import __version__
from factscore_local.lm.protocol import CapabilityError
from factscore_local.runtime.offline import enforce_offline

# Help up to 100 columns wide where the terminal has them (click's own limit is 80); the
# long commands list their options under headings (cloup's option groups, cli/groups.py).
CONTEXT = cloup.Context.settings(
    help_option_names=["-h", "--help"],
    formatter_settings=cloup.HelpFormatter.settings(max_width=100),
)


class Main(cloup.Group):
    """The ``fscore`` group: an LM server that does not answer ends any command with one
    line (``error: ...``, exit status 2), not a traceback, even where the command itself
    does not expect a server."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (ConnectionError, CapabilityError) as exc:  # ServerError is a ConnectionError
            from factscore_local.cli.output import fail

            fail(str(exc))


@cloup.group(cls=Main, context_settings=CONTEXT)
@click.version_option(__version__, prog_name="fscore")
def main() -> None:
    """Offline FActScore: build a Wikipedia knowledge source, then score generations."""
    enforce_offline()


# One module per command (or command group); each lists its commands in COMMANDS.
COMMAND_MODULES = (
    "build_index", "lookup", "search", "demo", "models", "cache", "sources", "eval",
    "calibrate", "rerun", "report", "veriscore", "factcheck", "ship", "verifiers",
)  # fmt: skip

for _name in COMMAND_MODULES:
    for _command in importlib.import_module(f"{__name__}.{_name}").COMMANDS:
        main.add_command(_command)
