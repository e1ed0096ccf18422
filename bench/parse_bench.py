"""CPU cost of extracting text from hostile and normal uploads, one case per fresh process.

    .venv/bin/python -m bench.parse_bench [--cases flat_p,nested_div,docx_bomb,normal_page,open_comments,pdf_bomb]
                                          [--budget 2.0]

Cases (built in memory):
  flat_p        20,000 flat <p> tags, 160 KB of HTML
  nested_div    60,000 nested <div> tags (~660 KB)
  docx_bomb     a ~52 KB .docx whose word/document.xml inflates to ~18 MB: 400,000 repetitive paragraphs
  normal_page   a ~60 KB article page (head, nav, headings, paragraphs, lists, a table, scripts)
  open_comments 40,000 unterminated "<!--" (160 KB): html.parser's end-of-input handling
  pdf_bomb      a ~80 KB PDF whose content stream inflates to 80 MB (pypdf stops at its own 75 MB limit)
Each case runs `extract_text` in its own process and prints the CPU seconds of that call, the growth of the
peak RSS, and the outcome (characters extracted, or the 422 code).

--budget N also sends the slowest HTML input that still parses (20 MB of flat <p>) through the upload path's
worker process with PARSE_TIMEOUT=N and prints how long the 422 took, the CPU the killed worker used in all
(its ~0.3 s start-up included) and whether it is still running.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import resource
import subprocess
import sys
import time
import zipfile

from tests.support.file_samples import DOCX_CONTENT_TYPES, DOCX_RELS, pdf_with_content

CASES = ["flat_p", "nested_div", "docx_bomb", "normal_page", "open_comments", "pdf_bomb"]


def flat_p() -> tuple[str, bytes]:
    return "flat.html", b"<p>x</p>" * 20_000


def nested_div() -> tuple[str, bytes]:
    return "nested.html", b"<div>" * 60_000 + b"deep" + b"</div>" * 60_000


def docx_bomb() -> tuple[str, bytes]:
    paragraph = b"<w:p><w:r><w:t>lorem ipsum</w:t></w:r></w:p>"
    head = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w='
        b'"http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
    )
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", DOCX_CONTENT_TYPES)
        archive.writestr("_rels/.rels", DOCX_RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            member.write(head)
            block = paragraph * 20_000
            for _ in range(18_000_000 // len(block)):
                member.write(block)
            member.write(b"</w:body></w:document>")
    return "bomb.docx", bomb.getvalue()


def normal_page() -> tuple[str, bytes]:
    section = (
        "<h2>Section {n}</h2><p>Acme Robotics opened an office in Oslo in {n}. Alice Walker, the CEO, said "
        "the <a href='/x'>new team</a> would build <b>warehouse robots</b> &amp; drones.</p>"
        "<ul><li>Staff: {n}</li><li>Budget: &euro;{n},000</li></ul>"
        "<table><tr><th>City</th><th>Staff</th></tr><tr><td>Oslo</td><td>{n}</td></tr></table>"
        "<script>track({n});</script>"
    )
    body = "".join(section.format(n=n) for n in range(120))
    page = (
        f"<!DOCTYPE html><html><head><title>Report</title><style>p{{margin:0}}</style></head><body>"
        f"<nav><a href='/'>Home</a></nav><main><h1>Annual report</h1>{body}</main>"
        f"<footer>&copy; Acme</footer></body></html>"
    )
    return "report.html", page.encode()


def open_comments() -> tuple[str, bytes]:
    return "comments.html", b"<!--" * 40_000


def pdf_bomb() -> tuple[str, bytes]:
    import zlib  # noqa: PLC0415

    packer = zlib.compressobj(9)
    stream = b"".join(packer.compress(b" " * (1 << 20)) for _ in range(80)) + packer.flush()
    return "bomb.pdf", pdf_with_content(stream, flate=True)


def run_case(name: str) -> dict:
    from app.core.errors import InvalidInput  # noqa: PLC0415
    from app.services.ingest.parsing import extract_text  # noqa: PLC0415

    filename, data = globals()[name]()
    for module in ("bs4", "docx", "pypdf"):  # imported before measuring
        importlib.import_module(module)

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        outcome = f"ok, {len(extract_text(filename, data))} chars"
    except InvalidInput as exc:
        outcome = f"422 {exc.code}"
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    return {
        "case": name,
        "input_bytes": len(data),
        "cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "rss_growth_mb": round(grown, 1),
        "outcome": outcome,
    }


def run_budget(budget: float) -> dict:
    import asyncio  # noqa: PLC0415
    import os  # noqa: PLC0415

    from app.core.errors import InvalidInput  # noqa: PLC0415
    from app.services.ingest import parsing  # noqa: PLC0415

    data = b"<p>x</p>" * 2_500_000
    limits = parsing.ParseLimits(timeout=budget)
    asyncio.run(parsing.extract_text_isolated("warmup.html", b"<p>warm</p>", limits))
    pid = parsing.worker_pids()[-1]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        outcome = f"ok, {len(asyncio.run(parsing.extract_text_isolated('big.html', data, limits)))} chars"
    except InvalidInput as exc:
        outcome = f"422 {exc.code}"
    took = time.perf_counter() - start
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker_cpu = reaped.ru_utime + reaped.ru_stime - children.ru_utime - children.ru_stime
    try:
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    return {
        "case": f"budget {budget:g}s, 20 MB html",
        "wall_s": round(took, 3),
        "outcome": outcome,
        "worker_cpu_s": round(worker_cpu, 3),
        "worker_still_running": alive,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--budget", type=float)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(
            json.dumps(run_budget(float(args.child[7:])) if args.child.startswith("budget:") else run_case(args.child))
        )
        return
    names = [n for n in args.cases.split(",") if n]
    if args.budget:
        names.append(f"budget:{args.budget}")
    for name in names:
        done = subprocess.run(
            [sys.executable, "-m", "bench.parse_bench", "--child", name], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            print(json.dumps({"case": name, "error": done.stderr.strip().splitlines()[-1:]}), flush=True)
            continue
        print(done.stdout.strip(), flush=True)


if __name__ == "__main__":
    main()
