"""The command-line reference (docs/reference/cli.md), generated from click's own
description of the ``fscore`` commands.

It walks the command tree as click sees it (a cloup command is a click command; its option
groups become one table each) and writes, per command, its usage, its full help and, per
option, its names, what it takes, its default and its full help. The default is the one
``--help`` would state, shown even where ``--help`` leaves it out: a ``show_default``
string as written; else the default the option's help states in words (``Default: ...``,
for a default computed at run time, such as the verifier's fitted rule, whose click value
is only a fallback); else click's own rendering of the value. An option with no default
(click's ``UNSET``, or None) shows none.

``docs/hooks/cli_reference.py`` puts the page together at every site build;
``python -m docs.generate.cli_reference`` prints it.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

import click

NO_DEFAULT = ""  # the Default cell of an option that has none
ARGUMENTS = "Arguments"  # the section of a command's positional arguments
# "Default: X." / "default is X" / "defaults to X" in an option's help: a default stated in
# words (one computed when the command runs).
STATED = re.compile(r"(?:^|(?<=[\s(;,.]))(?:[Dd]efault(?::| is)|[Dd]efaults to)\s+")
ON_OFF = re.compile(r"\b(on|off) by default\b", re.IGNORECASE)  # "Off by default."
UNSET = getattr(click.core, "UNSET", None)  # click 8.3+: an option given no default


@dataclass(frozen=True)
class OptionRow:
    """One option (or argument) as the reference lists it."""

    names: str  # e.g. "--clean / --no-clean"
    metavar: str  # what it takes ("PATH", "INTEGER RANGE", ""), click's own naming
    default: str  # the default as --help would state it; NO_DEFAULT where there is none
    help: str  # the full help, then choices, range and deprecation, as plain text


def _blocks(text: str) -> list[tuple[bool, list[str]]]:
    """Help text as click reads it: paragraphs, each ``(kept, lines)``; a paragraph that
    opens with ``\\b`` keeps its lines (``kept``), any other is one line."""
    text = inspect.cleandoc(text).split("\f", 1)[0]
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.splitlines()
        if lines and lines[0].strip() == "\b":
            out.append((True, [line.rstrip() for line in lines[1:] if line.strip()]))
        elif block.strip():
            out.append((False, [" ".join(line.strip() for line in lines)]))
    return out


def _paragraphs(text: str) -> list[list[str]]:
    return [lines for _, lines in _blocks(text)]


def stated_default(text: str | None) -> str | None:
    """The default an option's help states in words, up to the end of its sentence.

    Args:
        text: The option's help.

    Returns:
        What follows "Default:" (or "default is", "defaults to") up to the sentence's end
        outside parentheses ("on"/"off" for "On/Off by default"), or None when the help
        states no default. Kept-line paragraphs (lists) are not read: a list's "default:"
        line names an item.

    Example:
        >>> stated_default("Processes cleaning text; default: one per CPU.")
        'one per CPU'
        >>> stated_default("SQLite cache (default: <index>/eval-cache.db).")
        '<index>/eval-cache.db'
    """
    for kept, (line, *_) in _blocks(text or ""):
        found = None if kept else STATED.search(line)
        if found:
            return _sentence(line[found.end() :]) or None
        on_off = None if kept else ON_OFF.search(line)
        if on_off:
            return on_off.group(1).lower()
    return None


def _sentence(text: str) -> str:
    """``text`` up to its first full stop (". " or a final ".") outside parentheses, or
    up to the parenthesis it stands in."""
    depth = 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        end = char == "." and depth == 0 and (i + 1 == len(text) or text[i + 1].isspace())
        if end or depth < 0:
            return text[:i].strip()
    return text.strip()


def default_text(param: click.Parameter, ctx: click.Context) -> str:
    """The default of one parameter as the reference states it.

    Args:
        param: A click option or argument of the command ``ctx`` belongs to.
        ctx: The command's context.

    Returns:
        "required" for a required parameter; the ``show_default`` string; the default its
        help states in words; click's rendering of its value ("on"/"off" for a plain
        flag); or :data:`NO_DEFAULT`.
    """
    if param.required:
        return "required"
    if not isinstance(param, click.Option):
        value = param.default
        return NO_DEFAULT if value is None or value is UNSET or value == () else str(value)
    if not param.expose_value:  # --version and the like: an action, not a setting
        return NO_DEFAULT
    if isinstance(param.show_default, str):
        return param.show_default
    stated = stated_default(param.help)
    if stated:
        return stated
    if param.show_default is False:  # the author keeps the value out of --help
        return NO_DEFAULT
    shown = click.Context(ctx.command, parent=ctx.parent, info_name=ctx.info_name,
                          show_default=True)  # fmt: skip
    value = param.get_help_extra(shown).get("default")
    if param.is_flag and not param.secondary_opts and not param.count:
        return "on" if value else "off"
    return value or NO_DEFAULT


def _help_text(param: click.Parameter, ctx: click.Context) -> str:
    """The parameter's help with what ``--help`` adds to it (choices, range, env var)."""
    parts = ["\n\n".join("\n".join(p) for p in _paragraphs(getattr(param, "help", None) or ""))]
    if isinstance(param.type, click.Choice) and not param.metavar:
        parts.append("One of: " + ", ".join(map(str, param.type.choices)) + ".")
    extra = param.get_help_extra(ctx) if isinstance(param, click.Option) else {}
    if extra.get("range"):
        parts.append(f"Range: {extra['range']}.")
    if extra.get("envvars"):
        parts.append("Environment: " + ", ".join(extra["envvars"]) + ".")
    deprecated = getattr(param, "deprecated", False)
    if deprecated:
        parts.append("Deprecated" + (f": {deprecated}" if isinstance(deprecated, str) else "."))
    return "\n\n".join(p for p in parts if p)


def _metavar(param: click.Parameter, ctx: click.Context) -> str:
    if isinstance(param, click.Option) and param.is_flag and not param.count:
        return ""
    if param.metavar:
        return param.metavar
    if isinstance(param.type, click.Choice):
        return "CHOICE"  # the choices are listed in the help column
    return param.make_metavar(ctx)


def option_row(param: click.Parameter, ctx: click.Context) -> OptionRow:
    """One parameter's row.

    Args:
        param: An option or argument of ``ctx.command``.
        ctx: The command's context.

    Returns:
        Its names, metavar, default and help.
    """
    if isinstance(param, click.Option):
        names = ", ".join(param.opts)
        if param.secondary_opts:
            names += " / " + ", ".join(param.secondary_opts)
    else:
        names = param.human_readable_name
    return OptionRow(names, _metavar(param, ctx), default_text(param, ctx), _help_text(param, ctx))


def option_sections(ctx: click.Context) -> list[tuple[str, str, list[OptionRow]]]:
    """The command's parameters by section: arguments, then its option groups (cloup's,
    in order) and the options in none, each ``(title, help, rows)``; hidden ones left out.

    Args:
        ctx: The command's context.

    Returns:
        Sections with at least one row.
    """
    command = ctx.command
    visible = [p for p in command.params if not getattr(p, "hidden", False)]
    sections = [(ARGUMENTS, "", [p for p in visible if not isinstance(p, click.Option)])]
    grouped: set[int] = set()
    for group in getattr(command, "option_groups", None) or []:
        if getattr(group, "hidden", False):
            continue
        members = [p for p in group.options if p in visible]
        grouped |= {id(p) for p in group.options}
        sections.append((group.title, group.help or "", members))
    rest = [p for p in visible if isinstance(p, click.Option) and id(p) not in grouped]
    sections.append(("Other options" if grouped else "Options", "", rest))
    return [(title, text, [option_row(p, ctx) for p in params])
            for title, text, params in sections if params]  # fmt: skip


# --- Markdown ---------------------------------------------------------------------------
_SPECIAL = re.compile(r"([\\`*_\[\]{}#+!|>])")


def _escape(text: str) -> str:
    """Plain text as Markdown that renders it as written (no emphasis, links or HTML)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return _SPECIAL.sub(r"\\\1", text)


def _cell(text: str) -> str:
    """Plain text (paragraphs, kept lines) for one table cell."""
    paragraphs = ["<br>".join(_escape(line) for line in p.split("\n")) for p in text.split("\n\n")]
    return "<br><br>".join(paragraphs)


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def _prose(text: str | None) -> str:
    """Help text of a command as Markdown paragraphs (kept lines break where written)."""
    return "\n\n".join("<br>\n".join(_escape(line) for line in p) for p in _paragraphs(text or ""))


def command_help(command: click.Command) -> str:
    """A command's help text, whole (click's short help stops at its first sentence)."""
    return command.help or command.short_help or ""


def summary(command: click.Command) -> str:
    """A command's one-paragraph summary for a list of commands: its ``short_help`` if it
    sets one, else its help's whole first paragraph."""
    if command.short_help:
        return command.short_help
    paragraphs = _paragraphs(command_help(command))
    return " ".join(paragraphs[0]) if paragraphs else ""


def _anchor(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")


def command_section(ctx: click.Context, level: int) -> list[str]:
    """One command's part of the page, then its subcommands' (a group's).

    Args:
        ctx: The command's context (its parent's context as its parent).
        level: The Markdown heading level of its title.

    Returns:
        Markdown lines.
    """
    command = ctx.command
    path = ctx.command_path
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    lines = [f"{'#' * level} {path} {{ #{_anchor(path)} }}", ""]
    if getattr(command, "deprecated", False):
        lines += ["**Deprecated.**", ""]
    lines += [_prose(command_help(command)), "", "```text", usage, "```", ""]
    for title, text, rows in option_sections(ctx):
        lines += [f"**{_escape(title)}**", ""]
        if text:
            lines += [_prose(text), ""]
        if title == ARGUMENTS:
            lines += [f"- `{row.metavar}`: {row.default or 'optional'}" for row in rows] + [""]
            continue
        lines += ["| Option | Default | Description |", "| --- | --- | --- |"]
        for row in rows:
            option = _code(" ".join(part for part in (row.names, row.metavar) if part))
            lines.append(f"| {option} | {_cell(row.default)} | {_cell(row.help)} |")
        lines.append("")
    if isinstance(command, click.Group):
        children = [(name, command.get_command(ctx, name)) for name in command.list_commands(ctx)]
        children = [(name, c) for name, c in children if c is not None and not c.hidden]
        lines += ["| Command | What it does |", "| --- | --- |"]
        for name, child in children:
            link = f"[`{name}`](#{_anchor(f'{path} {name}')})"
            lines.append(f"| {link} | {_cell(summary(child))} |")
        lines.append("")
        for name, child in children:
            lines += command_section(click.Context(child, info_name=name, parent=ctx), level + 1)
    return lines


def reference(command: click.Command, prog: str) -> str:
    """The reference of a command tree, as Markdown.

    Args:
        command: The root command (``fscore``'s group).
        prog: The name it is run by.

    Returns:
        The page's body (no title): the root, then each command, each level a heading
        level deeper.

    Example:
        >>> @click.command()
        ... @click.option("--k", default=5, help="Passages.")
        ... def run(k): ...
        >>> "| `--k INTEGER` | 5 | Passages. |" in reference(run, "run")
        True
    """
    ctx = click.Context(command, info_name=prog)
    every = "Every command takes `-h` / `--help`, which prints the same as its section here."
    return "\n".join([every, "", *command_section(ctx, 2)]).rstrip() + "\n"


def fscore_reference() -> str:
    """The ``fscore`` command line's reference, as the site shows it."""
    from factscore_local.cli import main as fscore

    return reference(fscore, "fscore")


if __name__ == "__main__":
    print(fscore_reference(), end="")
