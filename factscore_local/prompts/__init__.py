"""The wording of every prompt, as text files shipped with the package.

Each ``<name>.txt`` here holds one piece of prompt text: an instruction (``{field}``
placeholders are filled with :meth:`str.format` by the code that builds the prompt) or a
set of worked examples. The code keeps only the layout: the field labels that mark where
prompts stop being shared (``Statement:``, ``Passage:``, ``Claim:``), the answer words and
the stop strings. Rewording a prompt is an edit here; note that the result cache is keyed
by the exact prompt, so any changed byte makes earlier cached results unreachable.

File rules, so that every byte of a file is a byte of the prompt: UTF-8; the file's final
line break is not part of the text (every other one is). Example files
(:func:`load_demos`) hold one example per block of lines, blocks separated by one blank
line; a block's first lines are its fields, one per line, and its remaining lines are the
last field.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

__all__ = ["PromptError", "load_demos", "load_prompt", "prompt_names"]

_NAME = re.compile(r"[a-z0-9_]+")


class PromptError(ValueError):
    """A prompt file that does not exist or does not have the expected shape."""


def prompt_names() -> list[str]:
    """The names of the shipped prompt files, sorted.

    Returns:
        Every ``<name>`` with a ``<name>.txt`` in this package.

    Example:
        >>> "verify_instruction" in prompt_names()
        True
    """
    return sorted(
        p.name.removesuffix(".txt") for p in files(__name__).iterdir() if p.name.endswith(".txt")
    )


@cache
def load_prompt(name: str) -> str:
    """The text of the prompt file ``<name>.txt``, without the file's final line break.

    Args:
        name: the file's name without ``.txt`` (lower case, digits and ``_``).

    Returns:
        The text, every byte as in the file except a single final ``\\n``.

    Raises:
        PromptError: no such prompt file.

    Example:
        >>> load_prompt("verify_no_context").format(topic="Ada Lovelace")
        'Decide whether this statement about Ada Lovelace is true.'
    """
    resource = files(__name__) / f"{name}.txt"
    if not _NAME.fullmatch(name) or not resource.is_file():
        raise PromptError(f"no prompt named {name!r}; known: {', '.join(prompt_names())}")
    text = resource.read_text(encoding="utf-8")
    return text.removesuffix("\n")


@cache
def load_demos(name: str, fields: int) -> tuple[tuple[str, ...], ...]:
    """The worked examples of ``<name>.txt``, each a tuple of ``fields`` strings.

    Args:
        name: the file's name without ``.txt``.
        fields: how many fields each example has; the last one may span several lines.

    Returns:
        The examples in file order.

    Raises:
        PromptError: no such file, or an example with fewer lines than ``fields``.

    Example:
        >>> load_demos("verify_demos", 2)[0]
        ('Mara Velden joined the Concertgebouw Orchestra in 1987.', 'True')
    """
    demos = []
    for n, block in enumerate(load_prompt(name).split("\n\n"), 1):
        lines = block.split("\n")
        if len(lines) < fields or not all(lines):
            raise PromptError(
                f"{name}.txt: example {n} has {len(lines)} lines, expected {fields} fields "
                "(one per line, the last may span lines; examples separated by a blank line)"
            )
        demos.append((*lines[: fields - 1], "\n".join(lines[fields - 1 :])))
    return tuple(demos)
