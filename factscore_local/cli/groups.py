"""Option groups of the long commands' ``--help`` (cloup's option groups).

A command lists its options under headings by purpose, in this order: what it reads and
writes, how atomic facts are made, the model, the evidence, the decision, how it runs.
:func:`option_groups` applies one ``cloup.option_group`` per heading, so the command
stays a click command (``cloup.Command`` subclasses it) that any click tool can walk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import cloup

IO = "Input and output"
FACTS = "Atomic facts"
MODEL = "Model"
EVIDENCE = "Evidence"
DECISION = "Decision"
RUNTIME = "Runtime"
HEADINGS = (IO, FACTS, MODEL, EVIDENCE, DECISION, RUNTIME)


def option_groups(groups: Mapping[str, Sequence[Callable]]) -> Callable:
    """A decorator that adds each heading's options as one cloup option group.

    Args:
        groups: Heading -> option decorators (``click.option(...)``, or a decorator that
            adds several); headings are listed in :data:`HEADINGS` order, empty ones
            left out.

    Returns:
        A decorator of a ``cloup.command`` function.

    Raises:
        ValueError: A heading not in :data:`HEADINGS`.

    Example:
        >>> import click
        >>> @cloup.command()
        ... @option_groups({IO: [click.option("--out", help="Where to write.")]})
        ... def run(out): ...
        >>> [group.title for group in run.option_groups]
        ['Input and output']
    """
    unknown = set(groups) - set(HEADINGS)
    if unknown:
        raise ValueError(f"unknown option heading(s): {', '.join(sorted(unknown))}")

    def decorate(command: Callable) -> Callable:
        for heading in reversed(HEADINGS):
            if groups.get(heading):
                command = cloup.option_group(heading, *groups[heading])(command)
        return command

    return decorate


def merged(*parts: Mapping[str, Sequence[Callable]]) -> dict[str, list[Callable]]:
    """Heading -> options, the options of each part appended under its headings.

    Args:
        *parts: Option groups (e.g. the estimator's, then a command's own).

    Returns:
        One mapping for :func:`option_groups`.

    Example:
        >>> sorted(merged({IO: [1]}, {IO: [2], RUNTIME: [3]}).items())
        [('Input and output', [1, 2]), ('Runtime', [3])]
    """
    out: dict[str, list[Callable]] = {}
    for part in parts:
        for heading, options in part.items():
            out.setdefault(heading, []).extend(options)
    return out
