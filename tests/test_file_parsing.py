"""Text extraction from uploaded files: real small files built in the test, clear 422s for bad ones."""

from __future__ import annotations

import io

import docx
import pytest

from app.errors import InvalidInput
from app.services.file_parsing import extract_text


def make_pdf(lines: list[str]) -> bytes:
    """A minimal valid one-page PDF whose content stream draws `lines` in Helvetica."""
    ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"({escaped}) Tj T*")
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


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


@pytest.mark.parametrize(("name", "data", "expected"), [
    ("a.txt", "Plain text, ünïcode ✓\r\nsecond line".encode(), "Plain text, ünïcode ✓\nsecond line"),
    ("A.TXT", b"upper-case extension", "upper-case extension"),
    ("notes.md", b"# Title\n\n\n\n\nBody **bold**", "# Title\n\nBody **bold**"),
    ("bom.txt", "\ufeffwith utf-8 bom".encode(), "with utf-8 bom"),
    ("le.txt", "utf-16 text ✓".encode("utf-16"), "utf-16 text ✓"),
    ("be.txt", "\ufeffutf-16 big endian".encode("utf-16-be"), "utf-16 big endian"),
])
def test_text_files_decode(name, data, expected):
    assert extract_text(name, data) == expected


def test_pdf_text_is_extracted():
    data = make_pdf(["Acme Robotics was founded in Oslo.", "Alice Walker (CEO) leads it."])
    text = extract_text("report.pdf", data)
    assert "Acme Robotics was founded in Oslo." in text
    assert "Alice Walker (CEO) leads it." in text


def test_docx_paragraphs_and_tables_in_order():
    text = extract_text("report.docx", make_docx())
    assert text.splitlines() == ["Quarterly Report", "Acme Robotics opened an office in Oslo.", "City\tStaff",
                                 "Oslo\t42", "Bob Stone leads the team."]


def test_html_drops_scripts_and_styles_and_keeps_blocks():
    html = (b"<html><head><title>Page</title><style>body{color:red}</style>"
            b"<script>var secret = 1;</script></head><body><h1>Acme</h1><p>Founded in <b>Oslo</b>.</p>"
            b"<ul><li>one</li><li>two</li></ul>line<br>break<noscript>enable js</noscript></body></html>")
    text = extract_text("page.html", html)
    assert "secret" not in text and "color" not in text and "enable js" not in text
    assert text == "Page\n\nAcme\n\nFounded in Oslo.\n\none\n\ntwo\n\nline\nbreak"
    assert extract_text("x.htm", "<p>caf\u00e9</p>".encode()) == "caf\u00e9"


@pytest.mark.parametrize(("name", "data", "code"), [
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
])
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
