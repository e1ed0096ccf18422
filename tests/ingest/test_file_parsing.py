"""Text extraction from uploaded files: real small files built in the test, clear 422s for bad ones."""

from __future__ import annotations

import io
import os
import signal
import struct
import time
import tracemalloc
import zipfile
import zlib

import docx
import pytest

from app.core.errors import InvalidInput
from app.services.ingest.parsing import ParseLimits, extract_text, extract_text_isolated, isolation, worker_pids
from tests.support.file_samples import DOCX_CONTENT_TYPES, DOCX_RELS, pdf_with_content


def make_pdf(lines: list[str]) -> bytes:
    """A minimal valid one-page PDF whose content stream draws `lines` in Helvetica."""
    ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"({escaped}) Tj T*")
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    return pdf_with_content(stream, flate=False)


def make_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Quarterly Report", level=1)
    document.add_paragraph("Acme Robotics opened an office in Oslo.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "City", "Staff"
    table.cell(1, 0).text, table.cell(1, 1).text = "Oslo", "42"
    document.add_paragraph("Bob Stone leads the team.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("a.txt", "Plain text, ünïcode ✓\r\nsecond line".encode(), "Plain text, ünïcode ✓\nsecond line"),
        ("A.TXT", b"upper-case extension", "upper-case extension"),
        ("notes.md", b"# Title\n\n\n\n\nBody **bold**", "# Title\n\nBody **bold**"),
        ("bom.txt", "\ufeffwith utf-8 bom".encode(), "with utf-8 bom"),
        ("le.txt", "utf-16 text ✓".encode("utf-16"), "utf-16 text ✓"),
        ("be.txt", "\ufeffutf-16 big endian".encode("utf-16-be"), "utf-16 big endian"),
    ],
)
def test_text_files_decode(name, data, expected):
    assert extract_text(name, data) == expected


def test_pdf_text_is_extracted():
    data = make_pdf(["Acme Robotics was founded in Oslo.", "Alice Walker (CEO) leads it."])
    text = extract_text("report.pdf", data)
    assert "Acme Robotics was founded in Oslo." in text
    assert "Alice Walker (CEO) leads it." in text


def test_docx_paragraphs_and_tables_in_order():
    text = extract_text("report.docx", make_docx())
    assert text.splitlines() == [
        "Quarterly Report",
        "Acme Robotics opened an office in Oslo.",
        "City\tStaff",
        "Oslo\t42",
        "Bob Stone leads the team.",
    ]


def test_html_drops_scripts_and_styles_and_keeps_blocks():
    html = (
        b"<html><head><title>Page</title><style>body{color:red}</style>"
        b"<script>var secret = 1;</script></head><body><h1>Acme</h1><p>Founded in <b>Oslo</b>.</p>"
        b"<ul><li>one</li><li>two</li></ul>line<br>break<noscript>enable js</noscript></body></html>"
    )
    text = extract_text("page.html", html)
    assert "secret" not in text and "color" not in text and "enable js" not in text
    assert text == "Page\n\nAcme\n\nFounded in Oslo.\n\none\n\ntwo\n\nline\nbreak"
    assert extract_text("x.htm", "<p>caf\u00e9</p>".encode()) == "caf\u00e9"


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("image.png", b"\x89PNG...", "unsupported_file_type"),
        ("noextension", b"text", "unsupported_file_type"),
        ("sheet.xlsx", b"PK\x03\x04", "unsupported_file_type"),
        ("latin1.txt", "caf\u00e9 cr\u00e8me".encode("latin-1"), "cannot_decode"),
        ("binary.txt", b"abc\x00\x00def", "cannot_decode"),
        ("broken.pdf", b"%PDF-1.4\nthis is not a pdf at all", "invalid_file"),
        ("random.pdf", bytes(range(256)) * 4, "invalid_file"),
        ("broken.docx", b"PK\x03\x04 not really a zip", "invalid_file"),
        ("text.docx", b"just some text", "invalid_file"),
        ("empty.txt", b"  \n\t\n ", "empty_document"),
        ("empty.html", b"<html><script>only()</script></html>", "empty_document"),
        ("blank.pdf", make_pdf([]), "empty_document"),
    ],
)
def test_bad_files_are_invalid_input(name, data, code):
    with pytest.raises(InvalidInput) as err:
        extract_text(name, data)
    assert err.value.code == code
    assert err.value.status_code == 422
    assert name in err.value.detail or code == "unsupported_file_type"


def test_control_characters_and_surrogates_are_removed():
    assert extract_text("c.txt", b"tab\tkept\x07 bell\x1b gone") == "tab\tkept bell gone"
    html = b"<p>a\x01b</p><p>&#xD800;c</p>"
    assert extract_text("c.html", html) == "ab\n\n\ufffdc"  # html.parser maps the surrogate reference to U+FFFD
    latin1 = '<html><head><meta charset="iso-8859-1"></head><body><p>caf\u00e9</p></body></html>'
    assert extract_text("l.html", latin1.encode("latin-1")) == "caf\u00e9"


def test_truncated_pdf_is_invalid_input():
    data = make_pdf(["Some text here."])
    with pytest.raises(InvalidInput) as err:
        extract_text("cut.pdf", data[: len(data) // 3])
    assert err.value.code == "invalid_file"


# Expected texts are what the former BeautifulSoup tree reading (decompose, replace <br>, insert line breaks
# around blocks, get_text) gave for the same markup: the streaming reader keeps its output.
@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (b"<div><p>a<span>b</div>c", "ab\n\nc"),
        (b"<p>one<p>two</p>three", "one\ntwo\nthree"),
        (b"<ul>\n  <li>x</li>\n\n\n  <li>y</li>\n</ul>", "x\n\ny"),
        (b"<span>a</span>\n\n\n<span>b</span>", "a\nb"),
        (b"<pre>  keep\n\n\n   spaces </pre>after", "keep\n\nspaces\nafter"),
        (b"<ruby>Kan<rt>kan</rt><rp>(</rp>ji</ruby> <![CDATA[raw]]>", "Kanji raw"),
        (b"<table><tr><th>City</th><td>Oslo</td></tr><tr><td>Bergen</td></tr></table>", "City\n\nOslo\n\nBergen"),
        (b"a<br>b<br/>c</br>d<br></br>e", "a\nb\ncd\ne"),
        (b"<noscript><p>hidden</p></noscript><template><p>t</p></template>shown", "shown"),
        (b"&nbsp;&amp;&lt;&#150;&#x41;&#0;&copy AT&T &bogus;", "&<\u2013A\ufffd\u00a9 AT&T &bogus"),
        (b"<!DOCTYPE html><!-- note --><?php x ?><p>ok</p>", "ok"),
        (b"<p>unclosed <b>bold", "unclosed bold"),
        (b"<div>stray</span> end</div>", "stray end"),
        (b"<h1>T</h1><h2>S</h2><blockquote>q</blockquote><dl><dt>k</dt><dd>v</dd></dl>", "T\n\nS\n\nq\n\nk\n\nv"),
        (b"<p/>x<div/>y", "x\n\ny"),
        (b"<textarea>  a\n\n  b </textarea>", "a\n\nb"),
        (b"<script>if (a < b) { x = '</p>'; }</script><style>p{}</style>after", "after"),
        (b"price &#z; here", "price &#z; here"),
    ],
)
def test_html_text_matches_the_former_tree_reading(html, expected):
    assert extract_text("page.html", html).replace("\xa0", " ") == expected.replace("\xa0", " ")


def _cpu(call):
    start = time.process_time()
    result = call()
    return result, time.process_time() - start


def test_html_extraction_is_linear_in_flat_and_nested_markup():
    # The tree-mutating reading took ~47 s of CPU on the flat page and ~166 s on the nested one.
    flat, seconds = _cpu(lambda: extract_text("flat.html", b"<p>x</p>" * 20_000))
    assert flat.split("\n\n") == ["x"] * 20_000
    assert seconds < 3
    nested, seconds = _cpu(lambda: extract_text("deep.html", b"<div>" * 60_000 + b"deep" + b"</div>" * 60_000))
    assert nested == "deep"  # no RecursionError, however deep
    assert seconds < 5


def test_unterminated_markup_at_the_end_is_dropped_in_linear_time():
    # Older html.parser rescans the rest of the input for each unterminated "<" at the end: ~10 s here.
    start = time.process_time()
    with pytest.raises(InvalidInput) as err:
        extract_text("open.html", b"<!--" * 40_000)
    assert err.value.code == "empty_document" and time.process_time() - start < 2
    text, seconds = _cpu(lambda: extract_text("tail.html", b"<p>kept</p>" + b"<a href='x" * 40_000))
    assert text == "kept" and seconds < 2
    assert extract_text("cdata.html", b"<p>a</p><![CDATA[b") == "a\nb"


def make_minimal_docx(paragraphs: int, text: bytes = b"lorem ipsum") -> bytes:
    """A valid .docx holding only its main part: `paragraphs` identical paragraphs (deflates ~340 times)."""
    body = b"<w:p><w:r><w:t>" + text + b"</w:t></w:r></w:p>"
    document = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w='
        b'"http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
        + body * paragraphs
        + b"</w:body></w:document>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", DOCX_CONTENT_TYPES)
        archive.writestr("_rels/.rels", DOCX_RELS)
        archive.writestr("word/document.xml", document)
    return out.getvalue()


def test_docx_bomb_is_refused_before_python_docx_inflates_it():
    bomb = make_minimal_docx(120_000)  # ~15 KB inflating to 5 MB: python-docx took ~3 s of CPU on it
    assert len(bomb) < 20_000
    start = time.process_time()
    with pytest.raises(InvalidInput) as err:
        extract_text("bomb.docx", bomb)
    assert err.value.code == "invalid_file" and "decompression bomb" in err.value.detail
    assert time.process_time() - start < 0.5
    assert extract_text("small.docx", make_minimal_docx(3)) == "lorem ipsum\nlorem ipsum\nlorem ipsum"


def test_docx_above_the_decompressed_cap_is_refused():
    data = make_docx()
    inflated = sum(info.file_size for info in zipfile.ZipFile(io.BytesIO(data)).infolist())
    assert extract_text("ok.docx", data, ParseLimits(max_decompressed_bytes=inflated)).startswith("Quarterly")
    with pytest.raises(InvalidInput) as err:
        extract_text("big.docx", data, ParseLimits(max_decompressed_bytes=inflated - 1))
    assert err.value.code == "file_too_large" and "MAX_DECOMPRESSED_BYTES" in err.value.detail


def _declare_size(archive: bytes, name: bytes, size: int) -> bytes:
    """The zip with the central directory's uncompressed size of `name` replaced (zipfile trusts it)."""
    entry = archive.rindex(name) - 46
    assert archive[entry : entry + 4] == b"PK\x01\x02"
    return archive[: entry + 24] + struct.pack("<I", size) + archive[entry + 28 :]


def test_docx_with_a_lying_size_is_refused_without_inflating_the_payload():
    document = b"<w:document>" + b" " * 30_000_000 + b"</w:document>"  # ~30 KB deflated
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", DOCX_CONTENT_TYPES)
        archive.writestr("_rels/.rels", DOCX_RELS)
        archive.writestr("word/document.xml", document)
    liar = _declare_size(out.getvalue(), b"word/document.xml", 2000)
    del document
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInput) as err:
            extract_text("liar.docx", liar)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err.value.code == "invalid_file"
    assert peak < 8_000_000  # whole-member reads inflated all 30 MB before noticing the bad CRC


def make_pdf_with_stream(stream: bytes) -> bytes:
    """A one-page PDF whose content stream is `stream`, declared as FlateDecode."""
    return pdf_with_content(stream, flate=True)


def test_pdf_bomb_stays_refused():
    packer = zlib.compressobj(1)
    spaces = b" " * (1 << 20)
    stream = b"".join(packer.compress(spaces) for _ in range(80)) + packer.flush()  # 80 MB in ~0.3 MB
    with pytest.raises(InvalidInput) as err:
        extract_text("bomb.pdf", make_pdf_with_stream(stream))
    assert err.value.code == "invalid_file"


async def test_isolated_parsing_answers_like_extract_text():
    limits = ParseLimits()
    assert await extract_text_isolated("page.html", b"<p>Hello</p><p>world</p>", limits) == "Hello\n\nworld"
    assert await extract_text_isolated("report.docx", make_docx(), limits) == extract_text("r.docx", make_docx())
    assert await extract_text_isolated("notes.txt", b"plain", limits) == "plain"
    for name, data, code in [
        ("bomb.docx", make_minimal_docx(120_000), "invalid_file"),
        ("empty.html", b"<p> </p>", "empty_document"),
        ("image.png", b"\x89PNG", "unsupported_file_type"),
    ]:
        with pytest.raises(InvalidInput) as err:
            await extract_text_isolated(name, data, limits)
        assert err.value.code == code


async def test_parse_over_budget_is_refused_and_its_process_killed():
    for _ in range(3):  # a worker grown big in an earlier test of this process retires after its job
        assert await extract_text_isolated("warm.html", b"<p>warm</p>", ParseLimits()) == "warm"
        if worker_pids():
            break
    pid = worker_pids()[-1]  # the most recently used idle worker takes the next job
    slow = b"<p>x</p>" * 500_000  # 4 MB: a second or more of parsing
    with pytest.raises(InvalidInput) as err:
        await extract_text_isolated("slow.html", slow, ParseLimits(timeout=0.05))
    assert err.value.code == "parse_timeout" and "PARSE_TIMEOUT" in err.value.detail
    assert pid not in worker_pids()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped, not left parsing
    assert await extract_text_isolated("after.html", b"<p>after</p>", ParseLimits()) == "after"


async def test_upload_over_the_parse_budget_is_a_422(make_settings, start_app):
    app = await start_app(make_settings(worker_enabled=False, parse_timeout=0.05))
    files = [("files", ("slow.html", b"<p>x</p>" * 500_000, "text/html"))]
    response = await app.http.post("/documents/upload", files=files)
    assert response.status_code == 422
    assert "slow.html: parsing took longer than the limit of 0.05 s (PARSE_TIMEOUT)" in response.json()["detail"]
    default = await start_app(make_settings(worker_enabled=False))
    bomb = [("files", ("bomb.docx", make_minimal_docx(120_000), "application/octet-stream"))]
    response = await default.http.post("/documents/upload", files=bomb)
    assert response.status_code == 422 and "decompression bomb" in response.json()["detail"]


@pytest.mark.slow  # a parent process killed mid-parse
def test_a_worker_left_parsing_by_a_dead_parent_is_stopped_by_the_kernel():
    worker = isolation._Worker()
    try:
        worker.send(("slow.html", b"<p>x</p>" * 2_000_000, 1 << 20, 0.05))  # ~15 s of parsing
        worker.process.send_signal(0)  # still there; now nobody will kill it on time
        assert worker.process.wait(timeout=20) == -signal.SIGXCPU  # ~1-2 s of CPU: its budget, rounded up, +1 s
    finally:
        worker.kill()


def test_a_parser_started_by_a_big_parent_is_kept_after_a_small_job():
    """Linux carries ru_maxrss across fork and exec: a parser started by a process that once held more than
    the retirement size must measure its own peak, or it retires after every job (a new process per file)."""
    from app.services.ingest.parsing.isolation import _RETIRE_RSS_KB, _Worker

    ballast = b"x" * ((_RETIRE_RSS_KB + 64 * 1024) * 1024)  # this process's peak passes the retirement size
    worker = _Worker()
    try:
        worker.send(("small.html", b"<p>small</p>", 10_000_000, 30.0))
        kind, payload, _code, retiring = worker.answer(30.0)
    finally:
        worker.kill()
        del ballast
    assert (kind, payload) == ("ok", "small") and not retiring
