"""HTML to text in one streaming pass with html.parser: no tree is built, so a huge page costs memory in
proportion to its text, and blocks become line breaks."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser

from bs4.dammit import EntitySubstitution, UnicodeDammit

from app.core.errors import InvalidInput
from app.services.ingest.parsing.encodings import bom_encoding

_HTML_BLOCKS = frozenset(
    [
        "p",
        "div",
        "li",
        "tr",
        "td",
        "th",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "title",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "table",
        "dt",
        "dd",
        "main",
        "nav",
    ]
)
_VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "keygen",
        "link",
        "menuitem",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
        "basefont",
        "bgsound",
        "command",
        "frame",
        "image",
        "isindex",
        "nextid",
        "spacer",
    ]
)
_DROPPED = frozenset(["script", "style", "noscript", "template"])  # with everything inside
_RUBY = frozenset(["rt", "rp"])  # their own strings are annotations, not text
_PRESERVE = frozenset(["pre", "textarea"])
_ASCII_SPACES = " \n\t\x0c\r"
# "&#" that html.parser cannot read as a reference: it stops its main loop there and reparses the rest in
# close(), where every unterminated construct costs a scan to the end of the input.
_BAD_CHARREF = re.compile(r"&#(?!(?:[0-9]+|[xX][0-9a-fA-F]+)[^0-9a-fA-F])")
_DIGITS = {10: re.compile(r"[0-9]+"), 16: re.compile(r"[0-9a-fA-F]+")}


class _HtmlText(HTMLParser):
    """The text of a page in one pass over html.parser's events, as BeautifulSoup's html.parser tree would give
    it: block elements set off by line breaks, <br> a line break, script/style/noscript/template dropped.

    Only a stack of open tag names is kept (end tags close up to the most recent open tag of that name, stray
    ones are ignored), so time is linear in the input and nesting depth costs nothing but the stack.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self._data: list[str] = []
        self._stack: list[str] = []
        self._open: Counter[str] = Counter()
        self._closed_voids: Counter[str] = Counter()  # "<br>" seen: a later "</br>" is its end tag
        self._dropped = self._ruby = self._preserve = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._flush()
        self._push(tag)
        if tag in _VOID:
            self._flush()
            self._pop_to(tag)
            self._closed_voids[tag] += 1

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self._flush()
        self._push(tag)
        self._flush()
        self._pop_to(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._closed_voids[tag]:
            self._closed_voids[tag] -= 1
            return
        self._flush()
        self._pop_to(tag)

    def handle_data(self, data: str) -> None:
        self._data.append(data)

    def handle_charref(self, name: str) -> None:
        hexa = name[:1] in ("x", "X")
        digits = _DIGITS[16 if hexa else 10].match(name, 1 if hexa else 0)
        if digits is None:
            self._data.append(name)
            return
        value = digits.group().lstrip("0") or "0"
        code = int(value, 16 if hexa else 10) if len(value) <= 8 else 0x110000
        self._data.append(UnicodeDammit.numeric_character_reference(code)[0] + name[digits.end() :])

    def handle_entityref(self, name: str) -> None:
        self._data.append(EntitySubstitution.HTML_ENTITY_TO_CHARACTER.get(name) or f"&{name}")

    def handle_comment(self, data: str) -> None:
        self._flush()

    def handle_decl(self, decl: str) -> None:
        self._flush()

    def handle_pi(self, data: str) -> None:
        self._flush()

    def unknown_decl(self, data: str) -> None:
        self._flush()
        if data.upper().startswith("CDATA["):
            self._data.append(data[len("CDATA[") :])
            self._flush(cdata=True)

    def close(self) -> None:
        tail = self.rawdata
        if not self.cdata_elem and len(tail) > 2 and tail.startswith("<"):
            # An unterminated tag, comment or declaration runs to the end of the input (HTML5, and newer
            # html.parser releases); older ones rescan the rest for every "<" in it: quadratic.
            self.rawdata = ""
            if tail.startswith("<![CDATA["):
                self.unknown_decl(tail[len("<![") :])
        super().close()
        self._flush()
        while self._stack:
            self._pop()

    def _push(self, tag: str) -> None:
        self._stack.append(tag)
        self._open[tag] += 1
        self._count(tag, 1)
        if not self._dropped and (tag in _HTML_BLOCKS or tag == "br"):
            self.out.append("\n")

    def _pop(self) -> str:
        tag = self._stack.pop()
        self._open[tag] -= 1
        self._count(tag, -1)
        if not self._dropped and tag in _HTML_BLOCKS:
            self.out.append("\n")
        return tag

    def _pop_to(self, tag: str) -> None:
        if self._open[tag]:
            while self._pop() != tag:
                pass

    def _count(self, tag: str, step: int) -> None:
        if tag in _DROPPED:
            self._dropped += step
        elif tag in _RUBY:
            self._ruby += step
        elif tag in _PRESERVE:
            self._preserve += step

    def _flush(self, cdata: bool = False) -> None:
        if not self._data:
            return
        text = "".join(self._data)
        self._data.clear()
        if not self._preserve and not text.strip(_ASCII_SPACES):
            text = "\n" if "\n" in text else " "
        if not self._dropped and (cdata or not self._ruby):
            self.out.append(text)


def _decode_html(filename: str, data: bytes) -> str:
    try:
        return data.decode(bom_encoding(data) or "utf-8")
    except UnicodeDecodeError:
        pass
    markup = UnicodeDammit(data, is_html=True).unicode_markup  # legacy encodings: reads <meta charset>, then guesses
    if markup is None:
        raise InvalidInput(f"{filename}: not readable HTML (unknown encoding)", code="invalid_file")
    return markup


def html_to_text(filename: str, data: bytes) -> str:
    parser = _HtmlText()
    try:
        parser.feed(_BAD_CHARREF.sub("&amp;#", _decode_html(filename, data)))
        parser.close()
    except InvalidInput:
        raise
    except Exception as exc:  # html.parser gives up on some declarations with AssertionError
        raise InvalidInput(f"{filename}: not readable HTML ({type(exc).__name__})", code="invalid_file") from exc
    lines = (" ".join(line.split()) for line in "".join(parser.out).splitlines())
    return "\n".join(lines)
