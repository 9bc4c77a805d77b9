"""Old spellings of renamed options: hidden, still working, with a one-line notice.

A renamed option keeps its old flag as a :class:`DeprecatedAlias` that sets the renamed
option's parameter. ``--help`` does not list it; given on the command line it prints, on stderr,
which flag replaces it, and its value counts as typed (``ctx.get_parameter_source`` says
COMMANDLINE), so a command cannot tell the spellings apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click
from click.core import ParameterSource


class DeprecatedAlias(click.Option):
    """A hidden option under an old flag that sets another option's parameter.

    It has a parameter name of its own (the parser keys values by it, so the new flag's
    value is never taken for the old one's) and exposes none: a value typed under the old
    flag is checked, then set on ``target`` as typed on the command line.

    Args:
        *param_decls: The old flag and this option's own parameter name.
        target: The parameter of the renamed option.
        replacement: The flag that replaces it, named in the notice and the help.
        **attrs: As for ``click.Option`` (``type``, ...): the renamed option's, so the
            value is checked the same way.
    """

    def __init__(self, *param_decls: Any, target: str, replacement: str, **attrs: Any) -> None:
        attrs.setdefault("help", f"Deprecated spelling of {replacement}.")
        super().__init__(*param_decls, hidden=True, expose_value=False, **attrs)
        self.target = target
        self.replacement = replacement

    def handle_parse_result(
        self, ctx: click.Context, opts: Mapping[str, Any], args: list[str]
    ) -> tuple[Any, list[str]]:
        """Sets the target parameter when the old flag was typed, and says so once."""
        value, source = self.consume_value(ctx, opts)
        if source is not ParameterSource.COMMANDLINE:
            return value, args
        click.echo(
            f"note: {self.opts[0]} is deprecated; use {self.replacement} (same meaning)",
            err=True,
        )
        value = self.process_value(ctx, value)  # a bad value names the old flag
        ctx.params[self.target] = value
        ctx.set_parameter_source(self.target, source)
        return value, args


def deprecated_alias(old: str, name: str, replacement: str, **attrs: Any) -> Callable:
    """The decorator of a hidden old spelling of a renamed option.

    Args:
        old: The old flag (``--workers``).
        name: The parameter it sets (the renamed option's, e.g. ``ray_workers``).
        replacement: The new flag (``--ray-workers``).
        **attrs: The renamed option's ``type`` (and ``multiple``), to check the value alike.

    Returns:
        A click option decorator.

    Example:
        >>> @click.command()
        ... @click.option("--ray-workers", "ray_workers", type=int, default=2)
        ... @deprecated_alias("--workers", "ray_workers", "--ray-workers", type=int)
        ... def run(ray_workers):
        ...     click.echo(ray_workers)
    """
    own = "deprecated_" + old.lstrip("-").replace("-", "_")
    return click.option(
        old, own, cls=DeprecatedAlias, target=name, replacement=replacement, **attrs
    )
