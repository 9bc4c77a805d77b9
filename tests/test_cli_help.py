"""The fscore command line's help and option names: headings, help for every option, the
rule list from the verifier registry, and the old spellings of renamed options."""

from __future__ import annotations

import dataclasses

import click
import pytest
from click.core import ParameterSource
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.cli.groups import HEADINGS
from factscore_local.cli.options import listed_rules
from factscore_local.declarations import verifiers
from factscore_local.model_store import DEFAULT_LM, EMBEDDED_MODELS


def walk(command: click.Command, path: tuple[str, ...] = ("fscore",)):
    """Every command of the tree, with its path."""
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from walk(sub, (*path, name))


def help_of(*args: str) -> str:
    result = CliRunner().invoke(main, [*args, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output


def option_help(text: str, flag: str) -> str:
    """The help text of one option in a --help page (its lines up to the next option)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(flag + " "))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if line.startswith("  -") or not line.startswith(" "):  # the next option, a heading
            break
        block.append(line)
    return " ".join(" ".join(block).split())


def test_every_option_of_every_command_has_help():
    ctx = click.Context(main)
    missing = [
        f"{' '.join(path)} {param.opts[0]}"
        for path, command in walk(main)
        for param in command.get_params(ctx)
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    assert not missing, missing


def test_eval_help_lists_its_options_under_headings_in_order():
    text = help_of("eval")
    positions = [text.index(f"\n{heading}:\n") for heading in HEADINGS]
    assert positions == sorted(positions)
    assert max(len(line) for line in text.splitlines()) <= 80
    # each option under the heading of its purpose
    placed = {"Input and output": "--input", "Atomic facts": "--use-atomic-facts",
              "Model": "--lm", "Evidence": "--k", "Decision": "--verifier",
              "Runtime": "--ray-workers"}  # fmt: skip
    for heading, flag in placed.items():
        section = text.split(f"\n{heading}:\n")[1].split("\n\n")[0]
        assert f"  {flag} " in section, (heading, flag)


def test_eval_help_opens_with_examples_that_parse():
    """Examples come before the long option list, and each is a valid eval command line."""
    text = help_of("eval")
    head = text.split(f"\n{HEADINGS[0]}:\n")[0]
    examples = [
        line.split() for line in head.splitlines() if line.strip().startswith("fscore eval")
    ]
    assert len(examples) >= 3 and text.index("Examples:") < text.index("--index")
    eval_cmd = main.get_command(click.Context(main), "eval")
    for words in examples:
        eval_cmd.make_context("eval", words[2:])  # every option exists, nothing required lacks
    assert any("--lm" in words for words in examples)
    assert any("--settings" in words for words in examples)


@pytest.mark.parametrize("command", ["calibrate", "factcheck", "veriscore", "build-index"])
def test_the_other_long_commands_are_grouped_too(command):
    text = help_of(command)
    assert "\nInput and output:\n" in text and "\nRuntime:\n" in text


def test_verifier_help_lists_the_registry_one_rule_a_line():
    text = help_of("eval")
    block = text.split("  --verifier NAME")[1].split("\n  --margin ")[0]
    rules = listed_rules()
    # each rule on lines of its own, in the registry's order (a name too long for the
    # column breaks at a hyphen: compare without the line breaks)
    lines = [line.strip() for line in block.splitlines()]
    starts = [i for i, line in enumerate(lines) for name, _ in rules if line.startswith(name[:8])]
    squeezed = "".join(block.split())
    where = [squeezed.index("".join(f"{name}: {text}".split())) for name, text in rules]
    assert rules and where == sorted(where) and len(starts) >= len(rules)
    # the help string itself (what a docs generator reads): one whole line per rule
    option = next(p for p in main.commands["eval"].params if p.name == "verifier")
    lines = option.help.splitlines()
    for name, description in rules:
        assert f"{name}: {description}" in lines
    assert "[default:" not in block and "|" not in text.split("  --verifier")[1].split("\n")[0]


def test_verifier_help_follows_the_registry():
    base = verifiers.get_verifier("random")
    extra = {"listed": True} if "listed" in {f.name for f in dataclasses.fields(base)} else {}
    added = dataclasses.replace(base, name="coin-flip-test", description="a test rule", **extra)
    verifiers.register(added)
    try:
        option = next(p for p in main.commands["eval"].params if p.name == "verifier")
        assert "coin-flip-test: a test rule" in option.help.splitlines()
    finally:
        verifiers.unregister("coin-flip-test")
    assert "coin-flip-test" not in option.help


def test_lm_help_shows_the_default_and_the_embedded_models():
    text = option_help(help_of("eval"), "--lm")
    assert f"{DEFAULT_LM} (the default)" in text
    assert all(name in text for name in EMBEDDED_MODELS)


def test_margin_help_shows_no_misleading_default():
    text = option_help(help_of("eval"), "--margin")
    assert "[default" not in text and "Default: the model's fitted rule" in text


def test_quiet_has_help():
    assert option_help(help_of("eval"), "--quiet") == "--quiet No progress bars."


# --- renamed options: the new names, and the old ones as hidden deprecated aliases -----
def parse(command: str, args: list[str]) -> click.Context:
    """The context a command's arguments give (parsing only: nothing runs)."""
    cmd = main.commands[command]
    parent = click.Context(main, info_name="fscore")
    return cmd.make_context(command, list(args), parent=parent)  # click consumes the list


EVAL_ARGS = ["--index", "idx", "--input", "bios.jsonl"]
BUILD_ARGS = ["--source", "pages.jsonl", "--out", "idx"]
FACTCHECK_ARGS = ["--index", "idx", "--out", "out"]
RENAMED = [  # command, required args, old flag, new flag, parameter, value
    ("eval", EVAL_ARGS, "--workers", "--ray-workers", "ray_workers", 3),
    ("build-index", BUILD_ARGS, "--workers", "--parse-workers", "workers", 4),
    ("build-index", BUILD_ARGS, "--threads", "--bm25-threads", "threads", 3),
    ("factcheck", FACTCHECK_ARGS, "--limit", "--n-samples", "n_samples", 2),
]


@pytest.mark.parametrize("command, args, old, new, name, value", RENAMED)
def test_an_old_spelling_still_works_with_a_notice(capsys, command, args, old, new, name, value):
    ctx = parse(command, [*args, old, str(value)])
    assert ctx.params[name] == value
    assert ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    err = capsys.readouterr().err
    assert err == f"note: {old} is deprecated; use {new} (same meaning)\n"


@pytest.mark.parametrize("command, args, old, new, name, value", RENAMED)
def test_the_new_spelling_says_nothing(capsys, command, args, old, new, name, value):
    ctx = parse(command, [*args, new, str(value)])
    assert ctx.params[name] == value and capsys.readouterr().err == ""
    default = parse(command, args)
    assert default.get_parameter_source(name) is ParameterSource.DEFAULT
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("command, args, old, new, name, value", RENAMED)
def test_an_old_spelling_is_hidden_and_checked_alike(command, args, old, new, name, value):
    text = help_of(command)
    assert f"  {new} " in text and f"  {old} " not in text
    with pytest.raises(click.BadParameter):
        parse(command, [*args, old, "x"])


def test_the_workers_flags_mean_one_thing_each():
    """--ray-workers is Ray's workers in both commands that have it; build-index's wikitext
    processes are --parse-workers."""
    assert "With --engine ray: workers" in option_help(help_of("eval"), "--ray-workers")
    build = help_of("build-index")
    assert "With --engine ray: workers" in option_help(build, "--ray-workers")
    assert "wikitext" in option_help(build, "--parse-workers")
