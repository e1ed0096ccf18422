"""Text out of uploaded files: .txt/.md (tolerant decoding), .pdf (pypdf), .docx (python-docx), .html (streamed).

Every failure is a 422 with a clear message; a corrupt or unsupported file never becomes a 500. These are pure
functions; `isolation` runs them in killable worker processes for the upload path.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from app.core.errors import InvalidInput
from app.domain.names import strip_control
from app.services.ingest.parsing.encodings import decode_text
from app.services.ingest.parsing.html_text import html_to_text

_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


@dataclass(frozen=True)
class ParseLimits:
    """Budgets of one file: seconds of parsing, bytes a .docx may inflate to, parser processes at once."""

    timeout: float = 30.0
    max_decompressed_bytes: int = 100 * 1024 * 1024
    workers: int = 2


def _pdf(filename: str, data: bytes, limits: ParseLimits) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InvalidInput(f"{filename}: the PDF is password protected", code="invalid_file")
        return "\n\n".join((page.extract_text() or "").strip() for page in reader.pages)
    except InvalidInput:
        raise
    except (
        PyPdfError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        IndexError,
        OSError,
        RecursionError,
        NotImplementedError,
    ) as exc:
        raise InvalidInput(f"{filename}: not a readable PDF ({type(exc).__name__})", code="invalid_file") from exc


# --- .docx: the zip is checked before python-docx inflates it ---

_MAX_ZIP_MEMBERS = 10_000
# Office XML deflates 5-20x; a member past 100x (and big enough to matter) is built to inflate, not to be read.
_MAX_RATIO = 100
_RATIO_FLOOR = 1024 * 1024
_READ_CHUNK = 64 * 1024


def _check_zip(filename: str, data: bytes, cap: int) -> None:
    """Refuse archives that would inflate past `cap` bytes, judged by their directory and then by reading them.

    Reading every member in bounded chunks catches lying headers: zipfile stops a member at its declared size
    and fails its CRC, while python-docx's whole-member reads would inflate the real payload first.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            _check_directory(filename, members, cap)
            for info in members:
                with archive.open(info) as member:
                    while member.read(_READ_CHUNK):
                        pass
    except InvalidInput:
        raise
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        ValueError,
        OSError,
        EOFError,
        RuntimeError,
    ) as exc:  # RuntimeError: encrypted members
        raise InvalidInput(f"{filename}: not a readable DOCX ({type(exc).__name__})", code="invalid_file") from exc


def _check_directory(filename: str, members: list[zipfile.ZipInfo], cap: int) -> None:
    if len(members) > _MAX_ZIP_MEMBERS:
        raise InvalidInput(
            f"{filename}: the archive has {len(members)} members, above {_MAX_ZIP_MEMBERS}", code="invalid_file"
        )
    declared = sum(info.file_size for info in members)
    if declared > cap:
        raise InvalidInput(
            f"{filename}: the file decompresses to {declared} bytes, above the limit of {cap} (MAX_DECOMPRESSED_BYTES)",
            code="file_too_large",
        )
    for info in members:
        member = info.filename[:200]
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise InvalidInput(f"{filename}: unsupported compression in {member}", code="invalid_file")
        if info.file_size > _RATIO_FLOOR and info.file_size > _MAX_RATIO * max(info.compress_size, 1):
            ratio = info.file_size // max(info.compress_size, 1)
            raise InvalidInput(
                f"{filename}: {member} inflates {ratio} times: refused as a decompression bomb", code="invalid_file"
            )


def _docx(filename: str, data: bytes, limits: ParseLimits) -> str:
    import docx
    from docx.table import Table

    _check_zip(filename, data, limits.max_decompressed_bytes)
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


def _html(filename: str, data: bytes, limits: ParseLimits) -> str:
    return html_to_text(filename, data)


def plain_text(filename: str, data: bytes, limits: ParseLimits) -> str:
    return decode_text(filename, data)


_PARSERS: dict[str, Callable[[str, bytes, ParseLimits], str]] = {
    ".txt": plain_text,
    ".text": plain_text,
    ".md": plain_text,
    ".markdown": plain_text,
    ".pdf": _pdf,
    ".docx": _docx,
    ".html": _html,
    ".htm": _html,
}

SUPPORTED_EXTENSIONS = tuple(sorted(_PARSERS))


def parser_for(filename: str) -> Callable[[str, bytes, ParseLimits], str]:
    suffix = PurePath(filename or "").suffix.lower()
    parser = _PARSERS.get(suffix)
    if parser is None:
        raise InvalidInput(
            f"{filename or 'file'}: unsupported file type {suffix or '(none)'}; "
            f"supported: {', '.join(SUPPORTED_EXTENSIONS)}",
            code="unsupported_file_type",
        )
    return parser


def extract_text(filename: str, data: bytes, limits: ParseLimits | None = None) -> str:
    """The document text of an uploaded file, whitespace tidied; 422 when it cannot be read or holds no text."""
    parser = parser_for(filename)
    text = parser(filename, data, limits or ParseLimits())
    text = strip_control(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _BLANK_RUNS.sub("\n\n", text).strip()
    if not text:
        raise InvalidInput(f"{filename}: no text could be extracted", code="empty_document")
    return text
