"""The documentation site: it builds in strict mode; opened from a file (file://) in
headless Chromium its navigation opens pages and its search finds them, with nothing
fetched from a network; the pages a newcomer opens first fit their column; and the CLI
reference states every command's options with the code's own defaults."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import click
import cloup
import pytest

from docs.generate import cli_reference
from docs.generate.cli_reference import (
    UNSET,
    default_text,
    option_sections,
    reference,
    stated_default,
)
from factscore_local.cli import main as fscore
from factscore_local.config import build_config
from scripts.common import RESULTS, read_results

ROOT = Path(__file__).resolve().parents[1]
# The pages a newcomer opens first: home, install, the eval guide, the paper's tables.
FIRST_PAGES = ("index.html", "get-started/install.html", "guide/eval.html",
               "guide/full-wikipedia.html", "guide/other-lm.html",
               "benchmarks/tables-98.html")  # fmt: skip


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    """The site as ``scripts/docs_build.sh`` builds it: mkdocs build --strict, offline."""
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    site = tmp_path_factory.mktemp("docs") / "site"
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "docs_build.sh"), "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return site


@pytest.mark.slow
def test_docs_build_strict(built_site: Path) -> None:
    """Every link, page and API reference resolves; pages are files (``page.html``), so
    their links work from a file; the CLI page is the generated one."""
    api = (built_site / "reference" / "api.html").read_text("utf-8")
    assert 'id="factscore_local.evaluate"' in api
    assert 'id="index.reader.KnowledgeSource"' in api
    assert not (built_site / "reference" / "api" / "index.html").exists()
    cli = (built_site / "reference" / "cli.html").read_text("utf-8")
    assert 'id="fscore-eval"' in cli and "Sentinel" not in cli and "UNSET" not in cli
    # The search index sits in a script too (the offline plugin), and the search worker
    # starts from a local script, not a CDN.
    assert (built_site / "search" / "search_index.js").read_text("utf-8").startswith("var ")
    home = (built_site / "index.html").read_text("utf-8")
    assert "assets/javascripts/file-worker.js" in home
    # every benchmark page is named by its record's title, not its file name (a page of
    # the navigation by its title there)
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    for path in sorted(RESULTS.glob("*.json")):
        record = read_results(path)
        if f": benchmarks/{record['name']}.md" in nav:
            continue
        built = (built_site / "benchmarks" / f"{record['name']}.html").read_text("utf-8")
        assert f"<title>{html.escape(record['title'], quote=False)} - " in built, path.name
    assert not re.search(r"<script[^>]+src=\"https?://", home)


def _record_requests(page) -> list[str]:
    """The URLs the page asks for from now on, other than its own files."""
    remote: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "blob:"))
            else remote.append(r.url))  # fmt: skip
    return remote


RENDERED = """() => ({title: document.title,
    article: !!document.querySelector('article.md-content__inner h1'),
    listing: document.title.startsWith('Index of') || !!document.querySelector('#listing')})"""


@pytest.mark.slow
def test_nav_links_open_pages_from_a_file(built_site: Path, browser_page) -> None:
    """From ``site/index.html`` by file://, a click on a nav link opens that page, and
    every page of the navigation is a rendered page (not a directory listing)."""
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 900})  # the navigation beside the page
    remote = _record_requests(page)
    page.goto((built_site / "index.html").as_uri())
    links = page.eval_on_selector_all(
        "nav.md-nav--primary a.md-nav__link[href]",
        "els => els.map(a => a.href).filter(h => !h.includes('#'))",
    )
    pages = sorted(set(links))
    assert len(pages) >= 20, pages
    assert all(h.startswith("file://") and h.endswith(".html") for h in pages), pages
    # A real click first: the install page from the home page's navigation.
    page.locator("nav.md-nav--primary a.md-nav__link[href$='get-started/install.html']").click()
    page.wait_for_load_state()
    assert page.url.endswith("get-started/install.html")
    shown = page.evaluate(RENDERED)
    assert shown["article"] and not shown["listing"], shown
    for href in pages:
        page.goto(href)
        shown = page.evaluate(RENDERED)
        assert shown["article"] and not shown["listing"], (href, shown)
    assert remote == [] and page.errors == []


@pytest.mark.slow
def test_search_finds_a_page_from_a_file(built_site: Path, browser_page) -> None:
    """Search is shown and answers on file:// (the inlined index, the local worker), and
    its first result opens a page of the site."""
    page = browser_page
    remote = _record_requests(page)
    page.goto((built_site / "guide" / "eval.html").as_uri())
    box = page.locator("input.md-search__input")
    box.click()
    box.fill("calibrate")
    results = page.locator(".md-search-result__item a")
    results.first.wait_for(timeout=20_000)
    assert results.count() >= 1
    meta = page.locator(".md-search-result__meta").inner_text()
    assert re.search(r"\d+ matching document", meta), meta
    href = results.first.get_attribute("href")
    assert href.startswith("file://") and ".html" in href, href
    results.first.click()
    page.wait_for_load_state()
    assert page.evaluate(RENDERED)["article"], page.url
    assert remote == [] and page.errors == []


# A code block is cut when its lines are wider than the block: the reader must scroll it
# sideways to see the end of a command.
CUT_BLOCKS = """() => [...document.querySelectorAll('pre > code')]
    .filter(code => code.scrollWidth > code.clientWidth + 1)
    .map(code => code.textContent.split('\\n')[0])"""
# A table wider than the column must scroll inside it, and then each of its cells is one
# line (not squeezed to a word a line); the page itself never scrolls sideways.
TABLES = """() => {
  const column = document.querySelector('article.md-content__inner').getBoundingClientRect();
  const lines = cell => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    const rects = [...range.getClientRects()];
    if (!rects.length) return 0;
    const height = Math.max(...rects.map(r => r.bottom)) - Math.min(...rects.map(r => r.top));
    return height / parseFloat(getComputedStyle(cell).lineHeight);
  };
  const bad = [];
  for (const table of document.querySelectorAll('article table')) {
    const wrap = table.closest('.md-typeset__scrollwrap');
    const box = (wrap || table).getBoundingClientRect();
    if (box.right > column.right + 24 || box.left < column.left - 24) {
      bad.push(['past the column', table.rows[0].textContent.trim().slice(0, 40)]);
    }
    if (table.getBoundingClientRect().width <= column.width + 1) continue;
    if (!wrap || wrap.scrollWidth <= wrap.clientWidth) {
      bad.push(['wide, not scrolling', table.rows[0].textContent.trim().slice(0, 40)]);
    }
    for (const cell of table.querySelectorAll('td, th')) {
      if (lines(cell) > 1.5) bad.push(['squeezed cell', cell.textContent.slice(0, 40)]);
    }
  }
  if (document.documentElement.scrollWidth > innerWidth) bad.push(['page scrolls sideways']);
  return bad;
}"""


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 1024])
def test_first_pages_fit_their_column(built_site: Path, browser_page, width) -> None:
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    wide_tables = 0
    for name in FIRST_PAGES:
        page.goto((built_site / name).as_uri())
        assert page.locator("pre > code").count() >= 1, name
        assert page.evaluate(CUT_BLOCKS) == [], name
        assert page.evaluate(TABLES) == [], name
        wide_tables += page.evaluate(
            "() => [...document.querySelectorAll('article table')].filter(t =>"
            " t.getBoundingClientRect().width > t.closest('article').clientWidth).length"
        )
    assert wide_tables >= 1  # tables-98's: the check above saw a scrolling table
    assert page.errors == []


@pytest.mark.slow
def test_the_full_wikipedia_tables_fit_without_scrolling(built_site: Path, browser_page) -> None:
    """The full-size build's table, whose disk columns a reader needs, is no wider than the
    page's column at 1280 px (it does not scroll them out of sight)."""
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto((built_site / "guide" / "full-wikipedia.html").as_uri())
    column, widths = page.evaluate(
        "() => [document.querySelector('article.md-content__inner').clientWidth,"
        " [...document.querySelectorAll('article table')].map(t => t.scrollWidth)]"
    )
    assert widths and max(widths) <= column, (column, widths)


# --- the CLI reference ------------------------------------------------------------------
def _contexts(command: click.Command, ctx: click.Context):
    """Every command's context, depth first."""
    yield ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            child = command.get_command(ctx, name)
            yield from _contexts(child, click.Context(child, info_name=name, parent=ctx))


def _fscore_contexts() -> list[click.Context]:
    return list(_contexts(fscore, click.Context(fscore, info_name="fscore")))


def _code_default(option: click.Option) -> str | None:
    """What the reference must show for an option whose default is a plain value, read
    from the Option object itself (None: not a plain value)."""
    value = option.default
    if value is None or value is UNSET or value == () or callable(value):
        return None
    if option.is_flag and option.secondary_opts:  # --clean / --no-clean
        return (option.opts if value else option.secondary_opts)[0].lstrip("-")
    if option.is_flag:
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def test_cli_reference_has_no_sentinel_and_every_command() -> None:
    text = cli_reference.fscore_reference()
    assert "Sentinel" not in text and "UNSET" not in text
    for ctx in _fscore_contexts():
        assert f"## {ctx.command_path} {{ #" in text, ctx.command_path
        # The summary in its group's list is its help's whole first paragraph.
        summary = cli_reference.summary(ctx.command)
        if ctx.parent is not None and not ctx.command.short_help:
            assert summary.endswith((".", ")")), (ctx.command_path, summary)
        for param in ctx.command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert f"`{param.opts[0]}" in text, (ctx.command_path, param.opts)


def test_cli_reference_defaults_are_the_codes() -> None:
    """Each option's Default cell is the code's: "required", the ``show_default`` string,
    the default its help states in words, or the Option's own value; never None."""
    checked = 0
    for ctx in _fscore_contexts():
        rows = {row.names: row for _, _, rows in option_sections(ctx) for row in rows}
        for param in ctx.command.params:
            if not isinstance(param, click.Option) or param.hidden:
                continue
            names = ", ".join(param.opts) + (
                " / " + ", ".join(param.secondary_opts) if param.secondary_opts else ""
            )
            cell = rows[names].default
            assert cell not in ("None", "N/A") and "Sentinel" not in cell, (names, cell)
            if param.required:
                assert cell == "required", (ctx.command_path, names, cell)
            elif isinstance(param.show_default, str):
                assert cell == param.show_default
            elif stated_default(param.help):
                assert cell == stated_default(param.help)
            elif param.show_default is not False and param.expose_value:
                expected = _code_default(param)
                if expected is not None:
                    assert cell == expected, (ctx.command_path, names, cell, param.default)
                    checked += 1
    assert checked >= 30
    eval_ctx = next(c for c in _fscore_contexts() if c.command_path == "fscore eval")
    k = next(p for p in eval_ctx.command.params if p.name == "k")
    assert default_text(k, eval_ctx) == str(k.default)


def test_cli_reference_shows_the_eval_default_rule() -> None:
    """``eval --verifier``'s default is the model's fitted rule (what its help says), not
    the click value it falls back to."""
    ctx = next(c for c in _fscore_contexts() if c.command_path == "fscore eval")
    verifier = next(p for p in ctx.command.params if p.name == "verifier")
    cell = default_text(verifier, ctx)
    rule = build_config({"index": "idx"}).verifier  # what eval runs with no --verifier
    assert rule and rule in re.findall(r"[\w+.-]+", cell), (rule, cell)
    if rule != verifier.default:  # click's value is only the fallback: not shown as it
        assert cell != str(verifier.default), cell
    section = cli_reference.fscore_reference().split("## fscore eval {")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if line.startswith("| `--verifier"))
    assert cli_reference._cell(cell) in row


def test_reference_of_a_grouped_command() -> None:
    """Generic introspection: cloup's option groups become tables in their order; kept
    lines, choices, ranges, flags, a required option, a ``show_default`` string, a
    default stated in words, an option without one and an argument all read right."""

    @cloup.command("run")
    @cloup.argument("files", nargs=-1, required=True)
    @cloup.option_group(
        "Input",
        cloup.option("--index", required=True, type=click.Path(), help="The index."),
        cloup.option("--mode", type=click.Choice(["a", "b"]), default="a", help="Mode."),
    )
    @cloup.option_group(
        "Runtime",
        cloup.option("--threads", type=click.IntRange(1), help="Threads; default: all cores."),
        cloup.option("--quiet", is_flag=True, help="No bars."),
        cloup.option("--fit / --no-fit", default=True, help="Fit <first>."),
    )
    @cloup.option("--rule", default="x", show_default="the fitted rule",
                  help="A rule:\n\n\b\nx: one\ny: two")  # fmt: skip
    @cloup.option("--note", help="No default | here.")
    def run(**_):
        """Run it. Second sentence stays.

        More text.
        """

    text = reference(run, "run")
    assert text.index("**Arguments**") < text.index("**Input**") < text.index("**Runtime**")
    assert text.index("**Runtime**") < text.index("**Other options**")
    assert "- `FILES...`: required" in text
    assert "| `--index PATH` | required | The index. |" in text
    assert "| `--mode CHOICE` | a | Mode.<br><br>One of: a, b. |" in text
    assert "| `--threads INTEGER RANGE` | all cores | Threads; default: all cores." in text
    assert "Range: x\\>=1." in text
    assert "| `--quiet` | off | No bars. |" in text
    assert "| `--fit / --no-fit` | fit | Fit &lt;first\\>. |" in text
    assert "| `--rule TEXT` | the fitted rule | A rule:<br><br>x: one<br>y: two |" in text
    assert "| `--note TEXT` |  | No default \\| here. |" in text
    assert "Run it. Second sentence stays.\n\nMore text." in text
    assert "Sentinel" not in text


def test_stated_default_reads_the_sentence() -> None:
    assert stated_default("Supported above this; default: 0.3 (NPM's) for a masked LM.") == (
        "0.3 (NPM's) for a masked LM"
    )
    assert stated_default("Default: the LM's own rule (e.g. 'default'). More.") == (
        "the LM's own rule (e.g. 'default')"
    )
    assert stated_default("Keeps states. Off by default.") == "off"
    assert stated_default("The default rule decides.") is None
    assert stated_default("Rules:\n\n\b\ndefault: the fitted rule") is None
