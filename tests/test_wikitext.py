"""Tests for index.wikitext: wikitext -> FActScore-style plain-text sections."""

from __future__ import annotations

import bz2
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from factscore_local.index import wikitext
from factscore_local.index.wikitext import (
    DISAMBIGUATION_TEMPLATES,
    CleanPage,
    clean_page,
    is_disambiguation,
)

# Real dump excerpts live next to the checkout (shared/, outside the repository).
DUMPS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "wiki-dumps"
BIG_DUMP = DUMPS / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
TABLE_DUMP = DUMPS / "enwiki-table-markup.xml.bz2"

# Markup that must never survive cleaning, on any page.
FORBIDDEN = ["{{", "}}", "[[", "]]", "{|", "|}", "<ref", "</ref>", "<!--", "'''", "''"]
FORBIDDEN += ["__TOC__", "\n", "\x00"]


def iter_dump(path: Path, *, redirects: bool = False) -> Iterator[tuple[str, str]]:
    """Yield (title, wikitext) of the pages of a bz2 MediaWiki XML export."""
    with bz2.open(path) as fh:
        for _, elem in ET.iterparse(fh):
            if not elem.tag.endswith("}page"):
                continue
            ns = elem.tag[: -len("page")]
            title = elem.findtext(f"{ns}title") or ""
            text = elem.findtext(f"{ns}revision/{ns}text") or ""
            if redirects or elem.find(f"{ns}redirect") is None:
                yield title, text
            elem.clear()


def _load(path: Path, *, redirects: bool = False) -> dict[str, str]:
    if not path.is_file():
        pytest.skip(f"wiki dump excerpt not available: {path}")
    return dict(iter_dump(path, redirects=redirects))


@pytest.fixture(scope="module")
def big_pages() -> dict[str, str]:
    return _load(BIG_DUMP)


@pytest.fixture(scope="module")
def big_cleaned(big_pages: dict[str, str]) -> dict[str, CleanPage]:
    return {title: clean_page(title, text) for title, text in big_pages.items()}


@pytest.fixture(scope="module")
def table_cleaned() -> dict[str, CleanPage]:
    pages = _load(TABLE_DUMP)
    return {title: clean_page(title, text) for title, text in pages.items()}


def body(text: str, title: str = "T") -> str:
    """The lead section's text without the "{title} " prefix (for one-paragraph inputs)."""
    sections = clean_page(title, text).sections
    assert sections[0].startswith(title)
    return sections[0][len(title) :].strip()


# ------------------------------------------------------------------------------------------
# Links
# ------------------------------------------------------------------------------------------


def test_wikilinks_keep_display_text() -> None:
    assert body("[[A|B]] and [[A]] and [[A]]s.") == "B and A and As."


def test_wikilink_text_markup_and_pipe_trick() -> None:
    assert body("[[Foo|''Bar'' baz]] x") == "Bar baz x"
    assert body("[[Paris (band)|]] played") == "Paris played"
    assert body("the [[OS&nbsp;X]] system") == "the OS X system"


def test_external_links() -> None:
    assert body("See [http://x.org The Title] and [http://y.org] now.") == "See The Title and now."


def test_file_links_dropped_with_nested_links_in_caption() -> None:
    text = (
        "A [[File:X.jpg|thumb|Caption with [[link]] and [[other|text]] [above] here]] B "
        "[[Image:y.png|left|200px]] C [[media:z.ogg]] D"
    )
    assert body(text) == "A B C D"


def test_category_and_interlanguage_links_dropped() -> None:
    text = "Text [[Category:Foo]][[Category:Bar|sort]] [[fr:Bonjour]] [[de:Hallo]] [[zh-yue:X]] end"
    assert body(text) == "Text end"


def test_visible_namespace_links_kept() -> None:
    # A leading colon makes a category link visible; wiktionary links are ordinary links.
    assert body("[[:Category:Baz]] and [[wikt:word|word]]") == "Category:Baz and word"


# ------------------------------------------------------------------------------------------
# Removed constructs
# ------------------------------------------------------------------------------------------


def test_nested_templates_removed() -> None:
    text = (
        "{{Infobox person\n| name = X\n| spouse = {{marriage|[[Y]]|1900}}\n}}\n"
        "Start {{a|{{b|{{c}}}}|d=[[x]]}} end."
    )
    assert body(text) == "Start end."


def test_refs_removed() -> None:
    text = (
        'Text.<ref>{{cite web|url=http://x|title=T}}</ref> More<ref name="a"/> done'
        "<ref name=b group=n>y <i>z</i></ref>. <references/>"
    )
    assert body(text) == "Text. More done."


def test_unclosed_ref_tag_does_not_leak() -> None:
    out = body("a <ref>unclosed")
    assert "<ref" not in out
    assert out.startswith("a")


def test_tables_removed() -> None:
    text = (
        "Before\n{| class=wikitable\n|+ Caption\n|-\n! A !! B\n|-\n| 1 || 2\n"
        "|-\n|\n{|\n| nested\n|}\n|}\nAfter <table><tr><td>x</td></tr></table> end"
    )
    assert body(text) == "Before After end"


def test_comments_magic_words_math_gallery_removed() -> None:
    text = (
        "__TOC__ __NOTOC__ A <!-- hidden\ncomment --> B <math>x^2</math> C "
        "<gallery>\nA.jpg|cap [[x]]\n</gallery> D"
    )
    assert body(text) == "A B C D"


def test_html_tags_keep_inner_text() -> None:
    text = (
        "<b>bold</b> <i>it</i> <span style='x'>sp</span> x<sup>2</sup> <small>sm</small> "
        "<sub>s</sub> <div>dv</div> <blockquote>bq</blockquote> <nowiki>nw</nowiki> "
        "<code>cd</code>"
    )
    assert body(text) == "bold it sp x2 sm s dv bq nw cd"


def test_br_becomes_space_and_style_quotes_removed() -> None:
    assert body("one<br>two<br />three") == "one two three"
    assert body("'''Bold''' and ''italic'' and '''''both'''''") == "Bold and italic and both"


def test_html_entities_decoded() -> None:
    assert body("a&nbsp;b &ndash; c &amp; d &lt;x&gt; &#91;1&#93;") == "a b – c & d <x> [1]"


def test_braces_inside_literal_tags_do_not_break_template_removal() -> None:
    # The pre-parse template scan must not count braces inside <nowiki>/<math>.
    assert body("{{t|<nowiki>}}</nowiki> hidden}} keep") == "keep"
    assert body("<math>\\frac{{a}}{b}</math> {{t|x}} keep") == "keep"
    # A table closing right before the template's end: "|}}}" is table end + template end.
    assert body("{{Navbox|list=\n{|\n| a\n|}}} after") == "after"


# ------------------------------------------------------------------------------------------
# Section format
# ------------------------------------------------------------------------------------------


def test_heading_chain_and_empty_sections() -> None:
    text = (
        "Lead text.\n"
        "== Filmography ==\n"
        "=== Television ===\nShow one.\n\nShow two.\n"
        "==== Guest roles ====\nGuest.\n"
        "=== Film ===\n"
        "== ''Awards'' {{anchor|aw}} ==\nWon.\n"
        "== References ==\n{{reflist}}\n"
    )
    assert clean_page("Jane Doe", text).sections == [
        "Jane Doe Lead text.",
        "Filmography.",
        "Filmography.:Television. Show one. Show two.",
        "Filmography.:Television.:Guest roles. Guest.",
        "Filmography.:Film.",
        "Awards. Won.",
        "References.",
    ]


def test_lead_without_text_is_just_the_title() -> None:
    assert clean_page("T", "{{Infobox}}\n== H ==\nx").sections == ["T", "H. x"]
    assert clean_page("T", "").sections == ["T"]


def test_no_newlines_and_whitespace_collapsed() -> None:
    out = clean_page("T", "Para  one\tline\nwrapped.\n\n\nPara two.\n== H ==\n\n  a \n\n b\n")
    assert out.sections == ["T Para one line wrapped. Para two.", "H. a b"]


def test_lists_become_inline_items() -> None:
    text = (
        "== Soundtracks ==\n* 1996: item one\n* 1998: ''item'' two\n** nested\n"
        "# numbered\n;term:definition\n: indented\n<ul><li>h1</li><li>h2</li></ul>\n"
        "* {{only a template}}\n"
    )
    assert clean_page("T", text).sections == [
        "T",
        "Soundtracks. - 1996: item one - 1998: item two - nested - numbered"
        " - term: definition - indented - h1 - h2",
    ]


def test_empty_parentheses_tidied() -> None:
    text = (
        "'''Abraham Lincoln''' ({{IPAc-en|ˈ|eɪ}}; February 12, 1809 – April 15, 1865) was. "
        "Born ( ) in X{{efn|x}} . Y ({{lang|x|y}}, born 1950; {{z}}) Z , "
        "w {{IPA|a}}, {{IPA|b}}, ok."
    )
    assert body(text, "Abraham Lincoln") == (
        "Abraham Lincoln (February 12, 1809 – April 15, 1865) was. "
        "Born in X. Y (born 1950) Z, w, ok."
    )


def test_tidy_keeps_legitimate_punctuation() -> None:
    assert body("e.g., the .NET framework; i.e., fine (see below).") == (
        "e.g., the .NET framework; i.e., fine (see below)."
    )


def test_sections_never_empty_strings() -> None:
    text = "\n== {{anchor|x}} ==\n\n== H ==\n{{x}}\n"
    sections = clean_page("", text).sections
    assert all(s.strip() == s and s for s in sections)
    assert sections == ["H."]


# ------------------------------------------------------------------------------------------
# Robustness
# ------------------------------------------------------------------------------------------

MALFORMED = [
    "{{Infobox | a = b\n text [[unclosed link and <ref>unclosed ref",
    "]]}}{{|}[[{{]]<<>>''''' '''x''",
    "{{" * 500 + "deep" + "}}" * 3,
    "[[" * 300 + "x",
    "{| unclosed table\n| cell\n== H ==\ntext",
    "<div><span><b>unclosed tags",
    "== unbalanced heading =\n=\n==\n====== x ======",
    "{{{1|{{{2}}}}}} {{{arg}}} text",
    "<ref name=a>{{cite|x}}<ref>nested</ref></ref> y",
    "&bogus; &#xZZ; &#99999999; text",
    "\x00 nul \x00* item",
    "".join(chr(c) for c in range(1, 3000)),
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_input_does_not_raise(text: str) -> None:
    page = clean_page("Bad", text)
    assert isinstance(page, CleanPage)
    assert page.sections and all(isinstance(s, str) and s for s in page.sections)
    assert all("\n" not in s and "\x00" not in s for s in page.sections)


def test_regex_fallback_when_parser_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (
        "{{Infobox|x={{y}}}}'''Foo''' is a [[bar|baz]].<ref>r</ref> [[File:a.jpg|thumb|a [[b]]]]\n"
        "== History ==\n=== Early ===\n* one\n* two\n{|\n| cell\n|}\n[[Category:C]]"
    )
    expected = ["Foo Foo is a baz.", "History.", "History.:Early. - one - two"]
    assert clean_page("Foo", text).sections == expected

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(wikitext.mwparserfromhell, "parse", boom)
    assert clean_page("Foo", text).sections == expected


# ------------------------------------------------------------------------------------------
# Disambiguation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("Mercury (disambiguation)", "'''Mercury''' may refer to:"),
        ("Mercury", "'''Mercury''' may refer to:\n{{Disambiguation}}"),
        ("Mercury", "{{disambig}}"),
        ("Mercury", "{{ dab }}"),
        ("Mercury", "{{Disambiguation|geo|hndis}}"),
        ("Mercury", "{{Disambiguation_page}}"),
        ("Mercury", "{{Template:Disambiguation}}"),
        ("John Smith", "{{Hndis|Smith, John}}"),
        ("Aa River", "{{geodis}}"),
        ("X", "{{Human name disambiguation}}"),
        ("X", "{{place name disambiguation}}"),
        ("X", "{{Letter disambiguation}}"),
        ("X", "{{number disambiguation}}"),
        ("X", "{{mil-unit-dis}}"),
        ("X", "{{Hospital disambiguation}}"),
        ("X", "{{school_disambiguation}}"),
    ],
)
def test_disambiguation_detected(title: str, text: str) -> None:
    assert is_disambiguation(title, text)
    assert clean_page(title, text).is_disambiguation


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("Mercury", "'''Mercury''' is a planet."),
        ("Smith", "{{surname}}"),
        ("John", "{{given name}}"),
        ("HMS X", "{{ship index}}"),
        ("X", "{{set index article}}"),
        ("X", "{{distinguish|Y}} {{Redirect2|A|B|other uses|A (disambiguation)}}"),
        ("X", "<!-- {{disambiguation}} --> text"),
    ],
)
def test_not_disambiguation(title: str, text: str) -> None:
    assert not is_disambiguation(title, text)
    assert not clean_page(title, text).is_disambiguation


def test_disambiguation_names_are_normalised() -> None:
    assert all(name == name.lower().replace("_", " ").strip() for name in DISAMBIGUATION_TEMPLATES)
    not_dab = {"set index article", "surname", "given name", "ship index"}
    assert not not_dab & DISAMBIGUATION_TEMPLATES


# ------------------------------------------------------------------------------------------
# Real dump excerpts
# ------------------------------------------------------------------------------------------


def test_excerpt_loaded(big_pages: dict[str, str]) -> None:
    assert len(big_pages) == 106  # 206 pages, 100 of them redirects
    assert {"Anarchism", "Abraham Lincoln", "Aristotle"} <= big_pages.keys()


def test_anarchism_lead(big_cleaned: dict[str, CleanPage]) -> None:
    lead = big_cleaned["Anarchism"].sections[0]
    assert lead.startswith("Anarchism ")
    first_sentence = lead[len("Anarchism ") :].split(". ")[0]
    assert first_sentence == (
        "Anarchism is a political philosophy that advocates self-governed societies "
        "based on voluntary institutions"
    )
    assert not big_cleaned["Anarchism"].is_disambiguation


def test_abraham_lincoln_lead(big_cleaned: dict[str, CleanPage]) -> None:
    lead = big_cleaned["Abraham Lincoln"].sections[0]
    assert lead.startswith(
        "Abraham Lincoln Abraham Lincoln (February 12, 1809 – April 15, 1865) was the "
        "16th President of the United States"
    )
    for bad in ["{{", "}}", "[[", "]]", "<ref", "|", "{|", "&nbsp;", "()", "(;"]:
        assert bad not in lead, bad
    assert len(lead) > 2000  # the whole multi-paragraph lead, not just the first line


def test_aristotle_headings(big_cleaned: dict[str, CleanPage]) -> None:
    sections = big_cleaned["Aristotle"].sections
    headings = [s.split(". ", 1)[0].rstrip(".") for s in sections[1:]]
    for expected in [
        "Life",
        "Thought",
        "Thought.:Logic",
        "Thought.:Physics.:Motion",
        "Thought.:Psychology.:Dreams.:Sleep",
        "Legacy",
        "See also",
        "External links",
    ]:
        assert expected in headings, expected
    life = next(s for s in sections if s.startswith("Life. "))
    assert "Stagira" in life


def test_every_page_clean(big_cleaned: dict[str, CleanPage]) -> None:
    for title, page in big_cleaned.items():
        assert page.sections, title
        assert page.sections[0].startswith(title), title
        for section in page.sections:
            assert section and section == section.strip(), title
            assert "  " not in section, title
            for bad in FORBIDDEN:
                assert bad not in section, (title, bad, section[:200])


def test_table_dump_has_no_table_syntax(table_cleaned: dict[str, CleanPage]) -> None:
    assert len(table_cleaned) == 5
    for title, page in table_cleaned.items():
        assert len(page.sections[0]) > len(title) + 50, title  # the lead prose survives
        for section in page.sections:
            for bad in [*FORBIDDEN, "|-", "||", "!!", "|+"]:
                assert bad not in section, (title, bad, section[:200])


def test_table_only_sections_become_heading_only(table_cleaned: dict[str, CleanPage]) -> None:
    sections = table_cleaned["Academy Award for Best Production Design"].sections
    assert "Best Interior Decoration.:1920s." in sections


def test_excerpt_disambiguation_pages(big_cleaned: dict[str, CleanPage]) -> None:
    found = {title for title, page in big_cleaned.items() if page.is_disambiguation}
    assert found == {
        "Austin (disambiguation)",
        "Aberdeen (disambiguation)",
        "Argument (disambiguation)",
        "Animal (disambiguation)",
        "Asia Minor (disambiguation)",
        "Alien",  # {{disambiguation}} without the title suffix
        "Ada",  # {{Disambiguation|geo|hndis}}
        "Aa River",  # {{geodis}}
    }


def test_redirect_pages_do_not_raise() -> None:
    pages = _load(BIG_DUMP, redirects=True)
    assert len(pages) == 206
    for title, text in pages.items():
        assert all(clean_page(title, text).sections), title
