"""Text out of uploaded files: .txt/.md (tolerant decoding), .pdf (pypdf), .docx (python-docx), .html (streamed).

Every failure is a 422 with a clear message; a corrupt or unsupported file never becomes a 500. `extract_text`
is the pure function; the upload path calls `extract_text_isolated`, which runs it in a worker process that is
killed when it overruns its time budget (a thread could not be stopped), so a hostile file costs at most
PARSE_TIMEOUT seconds of one core and never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import codecs
import importlib
import io
import logging
import math
import multiprocessing
import re
import resource
import subprocess
import sys
import threading
import zipfile
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePath

from bs4.dammit import EntitySubstitution, UnicodeDammit

from app.domain.names import strip_control
from app.errors import InvalidInput

log = logging.getLogger(__name__)

_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
# Control characters and lone surrogates: PostgreSQL text cannot hold NUL, and none of them is content.
_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),  # before UTF-16: they share a prefix
    (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
]


@dataclass(frozen=True)
class ParseLimits:
    """Budgets of one file: seconds of parsing, bytes a .docx may inflate to, parser processes at once."""

    timeout: float = 30.0
    max_decompressed_bytes: int = 100 * 1024 * 1024
    workers: int = 2


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
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError,
            RecursionError, NotImplementedError) as exc:
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
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, OSError, EOFError,
            RuntimeError) as exc:  # RuntimeError: encrypted members
        raise InvalidInput(f"{filename}: not a readable DOCX ({type(exc).__name__})", code="invalid_file") from exc


def _check_directory(filename: str, members: list[zipfile.ZipInfo], cap: int) -> None:
    if len(members) > _MAX_ZIP_MEMBERS:
        raise InvalidInput(f"{filename}: the archive has {len(members)} members, above {_MAX_ZIP_MEMBERS}",
                           code="invalid_file")
    declared = sum(info.file_size for info in members)
    if declared > cap:
        raise InvalidInput(f"{filename}: the file decompresses to {declared} bytes, above the limit of {cap} "
                           f"(MAX_DECOMPRESSED_BYTES)", code="file_too_large")
    for info in members:
        member = info.filename[:200]
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise InvalidInput(f"{filename}: unsupported compression in {member}", code="invalid_file")
        if info.file_size > _RATIO_FLOOR and info.file_size > _MAX_RATIO * max(info.compress_size, 1):
            ratio = info.file_size // max(info.compress_size, 1)
            raise InvalidInput(f"{filename}: {member} inflates {ratio} times: refused as a decompression bomb",
                               code="invalid_file")


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


# --- .html: one streaming pass, no tree ---

_HTML_BLOCKS = frozenset([
    "p", "div", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "title", "section", "article", "header",
    "footer", "blockquote", "pre", "ul", "ol", "table", "dt", "dd", "main", "nav"])
_VOID = frozenset([
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "menuitem", "meta", "param",
    "source", "track", "wbr", "basefont", "bgsound", "command", "frame", "image", "isindex", "nextid", "spacer"])
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
        self._data.append(UnicodeDammit.numeric_character_reference(code)[0] + name[digits.end():])

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
            self._data.append(data[len("CDATA["):])
            self._flush(cdata=True)

    def close(self) -> None:
        tail = self.rawdata
        if not self.cdata_elem and len(tail) > 2 and tail.startswith("<"):
            # An unterminated tag, comment or declaration runs to the end of the input (HTML5, and newer
            # html.parser releases); older ones rescan the rest for every "<" in it: quadratic.
            self.rawdata = ""
            if tail.startswith("<![CDATA["):
                self.unknown_decl(tail[len("<!["):])
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
        return data.decode(_bom_encoding(data) or "utf-8")
    except UnicodeDecodeError:
        pass
    markup = UnicodeDammit(data, is_html=True).unicode_markup  # legacy encodings: reads <meta charset>, then guesses
    if markup is None:
        raise InvalidInput(f"{filename}: not readable HTML (unknown encoding)", code="invalid_file")
    return markup


def _html(filename: str, data: bytes, limits: ParseLimits) -> str:
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


def _text(filename: str, data: bytes, limits: ParseLimits) -> str:
    return decode_text(filename, data)


_PARSERS: dict[str, Callable[[str, bytes, ParseLimits], str]] = {
    ".txt": _text, ".text": _text, ".md": _text, ".markdown": _text,
    ".pdf": _pdf, ".docx": _docx, ".html": _html, ".htm": _html,
}

SUPPORTED_EXTENSIONS = tuple(sorted(_PARSERS))


def _parser_for(filename: str) -> Callable[[str, bytes, ParseLimits], str]:
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
    parser = _parser_for(filename)
    text = parser(filename, data, limits or ParseLimits())
    text = strip_control(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _BLANK_RUNS.sub("\n\n", text).strip()
    if not text:
        raise InvalidInput(f"{filename}: no text could be extracted", code="empty_document")
    return text


# --- parsing in worker processes ---

_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = "import sys; sys.path.insert(0, sys.argv[3]); from app.services.ingest.file_parsing import _serve; _serve()"
_START_TIMEOUT = 60.0
_RETIRE_RSS_KB = 512 * 1024  # a worker whose peak grew past this exits after answering; a fresh one follows


class _Worker:
    """One parser process, spoken to over two pipes; killed rather than reused when it overruns."""

    def __init__(self) -> None:
        job_reader, self._jobs = multiprocessing.Pipe(duplex=False)
        self._results, result_writer = multiprocessing.Pipe(duplex=False)
        fds = (job_reader.fileno(), result_writer.fileno())
        self.process = subprocess.Popen([sys.executable, "-c", _BOOT, *map(str, fds), _ROOT],
                                        pass_fds=fds, stdin=subprocess.DEVNULL)
        job_reader.close()
        result_writer.close()
        try:
            if not self._results.poll(_START_TIMEOUT) or self._results.recv() != "ready":
                raise RuntimeError("the parser process did not start")
        except BaseException as exc:
            self.kill()
            raise RuntimeError("the parser process did not start") from exc

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, job: tuple) -> None:
        self._jobs.send(job)

    def answer(self, timeout: float) -> tuple:
        """The worker's answer, or TimeoutError after `timeout` seconds; EOFError when the process died."""
        if not self._results.poll(timeout):
            raise TimeoutError
        return self._results.recv()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self._jobs.close()
        self._results.close()


class _Pool:
    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._executors: dict[int, ThreadPoolExecutor] = {}

    def executor(self, workers: int) -> ThreadPoolExecutor:
        """Threads that wait on the workers; their number bounds the parses running at once."""
        with self._lock:
            if workers not in self._executors:
                self._executors[workers] = ThreadPoolExecutor(workers, thread_name_prefix="file-parsing")
            return self._executors[workers]

    def pids(self) -> list[int]:
        with self._lock:
            return [worker.process.pid for worker in self._idle]

    def run(self, job: tuple, timeout: float) -> tuple:
        """(kind, payload, code) from a worker; the worker is killed on any failure, kept only when healthy."""
        worker = self._take()
        try:
            try:
                worker.send(job)
            except OSError:  # it died while idle, so the job never reached it: one fresh try
                worker.kill()
                worker = _Worker()
                worker.send(job)
            kind, payload, code, retiring = worker.answer(timeout)
        except BaseException:
            worker.kill()
            raise
        if retiring:
            worker.kill()
        else:
            with self._lock:
                self._idle.append(worker)
        return kind, payload, code

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                worker.kill()  # reap it
        return _Worker()


_POOL = _Pool()


def worker_pids() -> list[int]:
    """Process ids of the idle parser processes, the next one to be used last (for tests and benchmarks)."""
    return _POOL.pids()


def _run_isolated(filename: str, data: bytes, limits: ParseLimits) -> str:
    try:
        job = (filename, data, limits.max_decompressed_bytes, limits.timeout)
        kind, payload, code = _POOL.run(job, limits.timeout)
    except TimeoutError:
        log.warning("parsing %s took longer than %.3g s: its parser process was killed", filename, limits.timeout)
        raise InvalidInput(f"{filename}: parsing took longer than the limit of {limits.timeout:g} s "
                           f"(PARSE_TIMEOUT)", code="parse_timeout") from None
    except (EOFError, OSError):
        log.warning("the parser process died while reading %s", filename)
        raise InvalidInput(f"{filename}: the file could not be parsed (the parser process died)",
                           code="invalid_file") from None
    if kind != "ok":
        raise InvalidInput(payload, code=code)
    return payload


async def extract_text_isolated(filename: str, data: bytes, limits: ParseLimits) -> str:
    """`extract_text` off the event loop: plain text in a thread, other types in a worker process that is
    killed after `limits.timeout` seconds (422 parse_timeout)."""
    parser = _parser_for(filename)
    if parser is _text:
        return await asyncio.to_thread(extract_text, filename, data, limits)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_POOL.executor(limits.workers), _run_isolated, filename, data, limits)


def _serve() -> None:
    """A worker process's loop: (filename, data, decompression cap, budget) in, (kind, text or detail, code,
    retiring) out, until the parent closes the pipe or this process grew too big to keep."""
    from multiprocessing.connection import Connection

    jobs, results = Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False)
    for module in ("docx", "pypdf"):  # loaded before the first job's clock starts
        importlib.import_module(module)

    results.send("ready")
    while True:
        try:
            filename, data, cap, budget = jobs.recv()
        except EOFError:
            return
        _limit_cpu(budget)
        answer = _answer(filename, data, cap)
        retiring = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > _RETIRE_RSS_KB
        results.send((*answer, retiring))
        if retiring:
            return


def _limit_cpu(budget: float) -> None:
    """The kernel ends this process (SIGXCPU) about a second past the job's budget: the parent kills it sooner,
    but if the parent itself died mid-job, no one else would."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + budget) + 1
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _answer(filename: str, data: bytes, cap: int) -> tuple[str, str, str | None]:
    try:
        return "ok", extract_text(filename, data, ParseLimits(max_decompressed_bytes=cap)), None
    except InvalidInput as exc:
        return "error", exc.detail, exc.code
    except Exception as exc:
        log.exception("parsing %s failed", filename)
        return "error", f"{filename}: the file could not be parsed ({type(exc).__name__})", "invalid_file"
