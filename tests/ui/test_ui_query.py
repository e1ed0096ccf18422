"""The query page in Chromium as a reader uses it: a Markdown answer rendered and sanitised (nothing the model
writes runs), one References list of the cited documents, claims whose sources light up on hover and focus, an
unsupported claim marked, the cited passage opened at its chunk with the span marked, stop keeping the partial
answer, retry asking again, and the newest turn in view. Most claims come from a stream the browser is served by
Playwright (page.route), so the page is tested whatever the service's citation check answers; one test takes them
from the service itself."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.fakes.cited_answers import chunk_with, citing
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import LiveServer
from tests.ui.conftest import API_KEY, keyed_page

pytestmark = pytest.mark.slow

TIMEOUT = 60_000
DOCS = {
    "platform.md": "# Platform\n\nAlice Chen leads the Platform Team in Berlin. The Platform Team builds the "
    "deployment tools. Alice Chen reports to Bob Ortiz.\n",
    "acme.txt": "Bob Ortiz runs Acme Corp from Munich. Acme Corp sells robots.\n",
}
MARKDOWN_ANSWER = """### Who leads the team

Alice Chen leads the **Platform Team**. In short:

- based in Berlin
- reports to *Bob Ortiz*

| person | city |
| --- | --- |
| Alice Chen | Berlin |

Use `deploy --all` to ship.

<script>window.__injected = 'script'</script>
<img src=x onerror="window.__injected = 'onerror'">

A [link](javascript:window.__injected='link') and an image ![x](x" onerror="window.__injected='img').

### References

- [1] teams/platform.md
"""


VENDOR = Path(__file__).resolve().parents[2] / "app" / "web" / "ui_static" / "vendor"


def test_the_vendored_renderer_and_sanitiser_are_the_pinned_files_and_are_served(ui_server: LiveServer) -> None:
    recorded = re.findall(r"`([\w./-]+\.js)`.*?`([0-9a-f]{64})`", (VENDOR / "VENDORED.md").read_text())
    assert {path for path, _ in recorded} >= {"marked/marked.esm.js", "dompurify/purify.es.js"}
    for path, sha256 in recorded:
        assert hashlib.sha256((VENDOR / path).read_bytes()).hexdigest() == sha256, path
        assert (VENDOR / path).parent.joinpath("LICENSE").is_file(), path
        served = httpx.get(f"{ui_server.url}/ui/vendor/{path}")
        assert served.status_code == 200 and "javascript" in served.headers["content-type"], path


def _http(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)


@pytest.fixture(scope="module")
def documents(ui_server: LiveServer) -> dict[str, dict]:
    """The two documents, processed: file path → {id, chunks}."""
    with _http(ui_server) as http:
        documents = [{"text": text, "file_path": name} for name, text in DOCS.items()]
        assert http.post("/documents", json={"documents": documents, "wait": True}).status_code == 200
        docs = http.get("/documents").json()["documents"]
        assert [d["status"] for d in docs] == ["processed"] * len(DOCS)
        return {
            d["file_path"]: {"id": d["id"], "chunks": http.get(f"/documents/{d['id']}/chunks").json()["chunks"]}
            for d in docs
        }


@pytest.fixture
def page(ui_server: LiveServer, browser, fake_llm: FakeOpenAI) -> Iterator:  # noqa: ANN001
    with keyed_page(browser, ui_server.url + "/ui/#/query", TIMEOUT) as page:
        yield page


def _ask(page, question: str) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    page.fill("#question", question)
    page.click("#ask")
    expect(page.locator("#ask")).to_have_text("Ask", timeout=TIMEOUT)


def test_a_markdown_answer_is_rendered_and_nothing_in_it_runs(documents, page, fake_llm: FakeOpenAI) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    fake_llm.handlers["query"] = lambda messages: MARKDOWN_ANSWER
    _ask(page, "Who leads the Platform Team?")
    answer = page.locator("#answer-0")
    expect(answer.locator("h3")).to_have_text("Who leads the team")
    expect(answer.locator("strong")).to_have_text("Platform Team")
    expect(answer.locator("ul > li")).to_have_count(2)
    expect(answer.locator("table td").first).to_have_text("Alice Chen")
    expect(answer.locator("code")).to_have_text("deploy --all")
    # The model's HTML is shown as text, never run: no script, no image, no javascript: link.
    expect(answer).to_contain_text("<script>")
    assert answer.locator("script, img, [onerror]").count() == 0
    assert answer.locator("a[href^='javascript']").count() == 0
    answer.get_by_text("link", exact=True).click()
    assert page.evaluate("window.__injected") is None
    # One References list: the page's own; the model's "### References" section is not shown again.
    expect(page.get_by_role("heading", name="References")).to_have_count(1)
    expect(page.locator(".references li")).to_have_count(1)
    expect(page.locator(".references a.reference")).to_have_text("platform.md")
    # Its link opens the cited chunk beside the answer, at the chunk's start.
    page.locator(".references a.reference").click()
    expect(page.locator("#source-viewer .source-text")).to_contain_text("Alice Chen leads the Platform Team")
    assert page.locator("#source-viewer .source-text").evaluate("el => el.scrollTop") == 0
    # The inspector starts collapsed.
    expect(page.locator("#inspector-box")).not_to_have_attribute("open", "")


CLAIMS_ANSWER = """## Team

Alice Chen leads the **Platform Team** in Berlin [1]. The team has 40 engineers in Lisbon.

### What it does

- The Platform Team builds the *deployment tools* [1].
- Alice Chen reports to Bob Ortiz [1], who runs Acme Corp from Hamburg [2].
"""
# (claim as written in the answer, support, [(file, supporting sentence of its chunk)])
CLAIMS = [
    (
        "Alice Chen leads the **Platform Team** in Berlin [1].",
        "supported",
        [("platform.md", "Alice Chen leads the Platform Team in Berlin.")],
    ),
    ("The team has 40 engineers in Lisbon.", "unsupported", []),
    (
        "The Platform Team builds the *deployment tools* [1].",
        "supported",
        [("platform.md", "The Platform Team builds the deployment tools.")],
    ),
    (
        "Alice Chen reports to Bob Ortiz [1], who runs Acme Corp from Hamburg [2].",
        "partial",
        [("platform.md", "Alice Chen reports to Bob Ortiz."), ("acme.txt", "Bob Ortiz runs Acme Corp from Munich.")],
    ),
]


def _claims_stream(documents: dict[str, dict]) -> str:
    """The stream of an answer with claims citing spans of the two documents' chunks, one claim invented; its
    references name a third document no claim cites."""

    def citation(file: str, sentence: str) -> dict:
        doc = documents[file]
        chunk = doc["chunks"][0]
        start = chunk["content"].index(sentence)
        return {
            "chunk_id": chunk["id"],
            "document_id": doc["id"],
            "file_path": file,
            "start": start,
            "end": start + len(sentence),
            "score": 0.9,
        }

    claims = [
        {
            "text": text,
            "start": CLAIMS_ANSWER.index(text),
            "end": CLAIMS_ANSWER.index(text) + len(text),
            "support": support,
            "citations": [citation(*cited) for cited in sources],
        }
        for text, support, sources in CLAIMS
    ]
    platform = documents["platform.md"]
    chunk = platform["chunks"][0]
    context_chunk = {
        "id": chunk["id"],
        "document_id": platform["id"],
        "file_path": "platform.md",
        "reference_id": "1",
        "source": "vector",
        "rerank_score": None,
        "content": chunk["content"] + " More text." * 40,
    }
    references = [
        {"reference_id": "1", "document_id": platform["id"], "file_path": "platform.md"},
        {"reference_id": "2", "document_id": documents["acme.txt"]["id"], "file_path": "acme.txt"},
        {"reference_id": "3", "document_id": "doc-never-cited", "file_path": "unused.md"},
    ]
    done = {
        "type": "done",
        "mode": "mix",
        "keywords": {"high_level": [], "low_level": ["Alice Chen"]},
        "context": {"entities": [], "relations": [], "chunks": [context_chunk]},
        "references": references,
        "claims": claims,
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }
    events = [{"type": "chunk", "text": CLAIMS_ANSWER[:30]}, {"type": "chunk", "text": CLAIMS_ANSWER[30:]}, done]
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


def test_claims_light_up_their_sources_and_an_invented_fact_is_marked(
    documents,  # noqa: ANN001
    page,  # noqa: ANN001
    artifacts: Path,
) -> None:
    from playwright.sync_api import expect

    body = _claims_stream(documents)
    page.route("**/query/stream", lambda route: route.fulfill(status=200, content_type="text/event-stream", body=body))
    _ask(page, "Who leads the Platform Team and what does it do?")
    answer = page.locator("#answer-0")
    claim = [answer.locator(f"span.claim[data-claim='{i}']") for i in range(len(CLAIMS))]
    expect(claim[0].first).to_have_text("Alice Chen leads the ")
    expect(claim[1]).to_have_text("The team has 40 engineers in Lisbon.")
    expect(claim[1]).to_have_class("claim claim-unsupported")
    expect(claim[1]).to_have_attribute("title", "Not supported by the sources")
    expect(answer.locator(".visually-hidden").first).to_have_text(" (not supported by the sources)")
    expect(claim[0].first).to_have_attribute("title", "Supported by: platform.md")
    expect(claim[2].first).to_have_text("The Platform Team builds the ")  # inside a list item
    expect(claim[3].first).to_have_class("claim claim-partial")
    expect(claim[3].first).to_have_attribute("title", "Partly supported by: platform.md, acme.txt")
    # One list, of the cited documents only (the references named a third), by their files' names.
    references = page.locator(".references li")
    expect(references).to_have_count(2)
    expect(references.nth(0)).to_contain_text("platform.md")
    expect(references.nth(1)).to_contain_text("acme.txt")
    # Hover, then keyboard focus, light up the claim's sources, and only those.
    highlighted = page.locator(".references li.highlight")
    expect(highlighted).to_have_count(0)
    claim[0].first.hover()
    expect(highlighted).to_have_count(1)
    expect(highlighted).to_contain_text("platform.md")
    expect(highlighted.locator("a.cited")).to_have_text(["platform.md", "1"])  # the claim's own passage
    page.locator("#question").hover()
    expect(highlighted).to_have_count(0)
    claim[3].first.focus()
    expect(highlighted).to_have_count(2)
    claim[3].first.blur()
    # The inline markers are links; one opens the cited span, marked, in its chunk shown from the start.
    expect(answer.locator("a.marker")).to_have_text(["[1]", "[1]", "[1]", "[2]"])
    answer.locator("a.marker").first.click()
    expect(page.locator("#source-viewer mark")).to_have_text("Alice Chen leads the Platform Team in Berlin.")
    expect(page.locator("#source-viewer h2")).to_have_text("platform.md")
    assert page.locator("#source-viewer .source-text").evaluate("el => el.scrollTop") == 0
    page.locator(".references a.reference", has_text="acme.txt").click()
    expect(page.locator("#source-viewer mark")).to_have_text("Bob Ortiz runs Acme Corp from Munich.")
    # The inspector is collapsed, and its long chunk is cut until asked for.
    inspector = page.locator("#inspector-box")
    expect(inspector).not_to_have_attribute("open", "")
    inspector.locator("> summary").click()
    inspector.locator("summary", has_text="Chunks (1)").click()
    chunk = inspector.locator("li pre")
    assert len(chunk.inner_text()) < 300
    inspector.get_by_role("button", name="Show all").click()
    expect(chunk).to_contain_text("More text. More text.")
    inspector.locator("> summary").click()
    claim[3].first.hover()
    page.evaluate("document.querySelector('#toasts').replaceChildren()")
    page.screenshot(path=str(artifacts / "query-claims.png"))


def _cited_answer(chunks: list[dict]) -> str:
    """A Markdown answer as a citing model writes it: chunk markers, one invented fact, its own references list."""
    platform = chunk_with(chunks, "Platform Team")["id"]
    return (
        "## The team\n\n"
        f"Alice Chen leads the **Platform Team** in Berlin [{platform}]. "
        f"The team has 40 engineers in Lisbon [{platform}].\n\n"
        "### What it does\n\n"
        f"- The Platform Team builds the *deployment tools* [{platform}].\n"
        f"- Alice Chen reports to Bob Ortiz ({platform})\n\n"
        "### References\n\n- [1] platform.md\n"
    )


def test_the_service_claims_reach_the_page(documents, page, fake_llm: FakeOpenAI, artifacts: Path) -> None:  # noqa: ANN001
    """No interception: the service rewrites the model's chunk markers as document numbers, checks the claims
    and ends the stream with the answer they index; the page renders that answer with them."""
    from playwright.sync_api import expect

    fake_llm.handlers["query"] = citing(_cited_answer)
    _ask(page, "Who leads the Platform Team and what does it do?")
    answer = page.locator("#answer-0")
    expect(answer.locator("h2")).to_have_text("The team")
    expect(answer.locator("strong")).to_have_text("Platform Team")
    expect(answer.locator("ul > li")).to_have_count(2)
    assert "[c" not in answer.inner_text() and "(c" not in answer.inner_text()
    # The turn keeps the final event's `response`, not the streamed text with the model's own references list.
    kept = page.evaluate("JSON.parse(sessionStorage.getItem('lightrag.conversation.default'))[0].answer")
    assert "[1]" in kept and "References" not in kept
    # The model's own list is gone (the service left it out of `response`); the page's lists the cited file.
    expect(page.get_by_role("heading", name="References")).to_have_count(1)
    expect(page.locator(".references li")).to_have_count(1)
    expect(page.locator(".references a.reference")).to_have_text("platform.md")
    invented = answer.locator("span.claim-unsupported")
    expect(invented).to_have_text(re.compile(r"^The team has 40 engineers in Lisbon \[1\]\.$"))
    expect(invented).to_have_attribute("title", "Not supported by the sources")
    supported = answer.locator("span.claim-supported").first
    expect(supported).to_contain_text("Alice Chen leads the")
    highlighted = page.locator(".references li.highlight")
    expect(highlighted).to_have_count(0)
    supported.hover()
    expect(highlighted).to_have_text(re.compile("platform.md"))
    # The service's [1] markers link to the reference of that number, opening the cited span.
    expect(answer.locator("a.marker").first).to_have_text("[1]")
    answer.locator("a.marker").first.click()
    expect(page.locator("#source-viewer h2")).to_have_text("platform.md")
    expect(page.locator("#source-viewer mark")).to_have_text("Alice Chen leads the Platform Team in Berlin.")
    supported.hover()
    page.evaluate("document.querySelector('#toasts').replaceChildren()")
    page.screenshot(path=str(artifacts / "query-service-claims.png"))  # the README's docs/ui-query.png, when copied


def test_stop_keeps_the_partial_turn_retry_asks_again_and_copy_copies(
    documents,  # noqa: ANN001
    page,  # noqa: ANN001
    fake_llm: FakeOpenAI,
    artifacts: Path,
) -> None:
    from playwright.sync_api import expect

    words = " ".join(f"word{i}" for i in range(60))
    fake_llm.handlers["query"] = lambda messages: f"Slow answer: {words}."
    fake_llm.stream_delay = 0.1
    page.fill("#question", "Tell me slowly about Alice Chen")
    page.click("#ask")
    answer = page.locator("#answer-0")
    expect(answer).to_contain_text("word3", timeout=TIMEOUT)
    page.click("#stop")
    expect(page.locator("#ask")).to_have_text("Ask")
    expect(page.locator(".turn .stopped")).to_be_visible()
    expect(answer).to_contain_text("Slow answer: word0")
    expect(answer).not_to_contain_text("word59")

    fake_llm.stream_delay = 0
    with page.expect_request(lambda r: r.url.endswith("/query/stream")) as sent:
        page.locator(".turn").first.get_by_role("button", name="Retry").click()
    assert sent.value.post_data_json["query"] == "Tell me slowly about Alice Chen"
    assert sent.value.post_data_json["conversation_history"] == []
    expect(page.locator("#ask")).to_have_text("Ask", timeout=TIMEOUT)
    expect(answer).to_contain_text("word59.")
    expect(page.locator(".turn")).to_have_count(1)
    expect(page.locator(".turn .stopped")).to_have_count(0)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator(".turn").first.get_by_role("button", name="Copy").click()
    expect(page.locator("#toasts")).to_contain_text("Answer copied")
    assert page.evaluate("navigator.clipboard.readText()") == f"Slow answer: {words}."

    # Long answers: the newest turn is the one in view, the question box stays at the bottom.
    fake_llm.handlers["query"] = lambda messages: "\n\n".join(f"Paragraph {i}: {words}" for i in range(8))
    for question in ("What does the Platform Team build?", "Where is the Platform Team?"):
        _ask(page, question)
    expect(page.locator(".turn")).to_have_count(3)
    expect(page.locator(".turn").last.locator(".turn-actions")).to_be_in_viewport()
    expect(page.locator("#question")).to_be_in_viewport()
    page.evaluate("document.querySelector('#toasts').replaceChildren()")
    page.screenshot(path=str(artifacts / "query-chat.png"))
    page.set_viewport_size({"width": 800, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    page.screenshot(path=str(artifacts / "query-chat-800.png"))


ALIGNMENT = """
async ([source, claims]) => {
  const {renderMarkdown} = await import('./js/markdown.js');
  const {wrapClaims} = await import('./js/claims.js');
  const box = document.createElement('div');
  box.append(renderMarkdown(source));
  const spans = wrapClaims(box, source, claims);
  return spans.map((pieces) => pieces.map((s) => s.textContent).join('|'));
}
"""


def test_claim_offsets_land_on_the_rendered_words(page) -> None:  # noqa: ANN001
    """Offsets in the Markdown source (counted in code points, as the service does) mark the rendered words, through
    emphasis, links, list items, table cells and an emoji; a claim whose offsets are wrong is found by its text."""
    source = (
        "🚀 **Alice** leads [the team](https://example.com/the-team) in Berlin.\n\n"
        "- Bob runs *Acme*.\n\n"
        "| who | where |\n| --- | --- |\n| Carol | Lisbon |\n\n"
        "Dana joined in 2024."
    )
    claims = [
        ("Alice** leads [the team](https://example.com/the-team) in Berlin.", None),
        ("Bob runs *Acme*.", None),
        ("Lisbon", None),
        ("Dana joined in 2024.", (0, 5)),  # wrong offsets: found by its text
    ]
    sent = []
    for text, wrong in claims:
        start = len(source[: source.index(text)])  # code points, as Python counts
        sent.append(
            {"text": text, "start": wrong[0] if wrong else start, "end": wrong[1] if wrong else start + len(text)}
        )
    marked = page.evaluate(ALIGNMENT, [source, sent])
    assert marked == ["Alice| leads |the team| in Berlin.", "Bob runs |Acme|.", "Lisbon", "Dana joined in 2024."]
