"""Text out of uploaded files: .txt/.md (tolerant decoding), .pdf (pypdf), .docx (python-docx), .html (bs4).

Every failure is a 422 with a clear message; a corrupt or unsupported file never becomes a 500.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import logging
import re
from collections.abc import Callable
from pathlib import PurePath

from app.domain.names import strip_control
from app.errors import InvalidInput

log = logging.getLogger(__name__)

_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
# Control characters and lone surrogates: PostgreSQL text cannot hold NUL, and none of them is content.
_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),  # before UTF-16: they share a prefix
    (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
]


def _bom_encoding(data: bytes) -> str | None:
    return next((name for bom, name in _BOMS if data.startswith(bom)), None)


def decode_text(filename: str, data: bytes) -> str:
    """UTF-8 (with or without BOM) or UTF-16/32 with a BOM; anything else is refused, not guessed."""
    encoding = _bom_encoding(data) or "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{filename}: cannot decode the file as {encoding} text", code="cannot_decode") from exc
    if "\x00" in text:
        raise InvalidInput(f"{filename}: cannot decode the file: it looks binary", code="cannot_decode")
    return text


def _pdf(filename: str, data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InvalidInput(f"{filename}: the PDF is password protected", code="invalid_file")
        return "\n\n".join((page.extract_text() or "").strip() for page in reader.pages)
    except InvalidInput:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError,
            RecursionError, NotImplementedError) as exc:
        raise InvalidInput(f"{filename}: not a readable PDF ({type(exc).__name__})", code="invalid_file") from exc


def _docx(filename: str, data: bytes) -> str:
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        parts: list[str] = []
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                for row in block.rows:
                    cells = [cell.text.strip() for cell in row.cells]
                    parts.append("\t".join(cells))
            else:
                parts.append(block.text)
        return "\n".join(parts)
    except Exception as exc:  # python-docx raises zipfile, lxml and KeyError variants for broken files
        raise InvalidInput(f"{filename}: not a readable DOCX ({type(exc).__name__})", code="invalid_file") from exc


_HTML_BLOCKS = ["p", "div", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "title", "section",
                "article", "header", "footer", "blockquote", "pre", "ul", "ol", "table", "dt", "dd", "main", "nav"]


def _html(filename: str, data: bytes) -> str:
    from bs4 import BeautifulSoup

    markup: str | bytes = data  # legacy encodings: bs4 reads the <meta charset> and detects the rest
    with contextlib.suppress(UnicodeDecodeError):  # bs4's own guess misreads UTF-8 holding control bytes
        markup = data.decode(_bom_encoding(data) or "utf-8")
    try:
        soup = BeautifulSoup(markup, "html.parser")
    except Exception as exc:  # bs4 parsers are lenient; this is for truly undecodable input
        raise InvalidInput(f"{filename}: not readable HTML ({type(exc).__name__})", code="invalid_file") from exc
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    for tag in soup.find_all("br"):
        tag.replace_with("\n")
    for tag in soup.find_all(_HTML_BLOCKS):
        tag.insert_before("\n")
        tag.insert_after("\n")
    lines = (" ".join(line.split()) for line in soup.get_text().splitlines())
    return "\n".join(lines)


def _text(filename: str, data: bytes) -> str:
    return decode_text(filename, data)


_PARSERS: dict[str, Callable[[str, bytes], str]] = {
    ".txt": _text, ".text": _text, ".md": _text, ".markdown": _text,
    ".pdf": _pdf, ".docx": _docx, ".html": _html, ".htm": _html,
}

SUPPORTED_EXTENSIONS = tuple(sorted(_PARSERS))


def extract_text(filename: str, data: bytes) -> str:
    """The document text of an uploaded file, whitespace tidied; 422 when it cannot be read or holds no text."""
    suffix = PurePath(filename or "").suffix.lower()
    parser = _PARSERS.get(suffix)
    if parser is None:
        raise InvalidInput(
            f"{filename or 'file'}: unsupported file type {suffix or '(none)'}; "
            f"supported: {', '.join(SUPPORTED_EXTENSIONS)}",
            code="unsupported_file_type",
        )
    text = strip_control(parser(filename, data).replace("\r\n", "\n").replace("\r", "\n"))
    text = _BLANK_RUNS.sub("\n\n", text).strip()
    if not text:
        raise InvalidInput(f"{filename}: no text could be extracted", code="empty_document")
    return text
