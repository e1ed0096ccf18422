"""Answer prompt: instructions first (stable prefix for provider caching), then the retrieved context.

The user's question is sent as the last user message, after any conversation history.
"""

from __future__ import annotations

_SYSTEM = """You are a careful assistant answering questions about a collection of documents. You are given \
context retrieved for the question: entities and relationships from a knowledge graph built from the \
documents, and excerpts (chunks) of the documents themselves.

How to answer:
- Use only the information in the context below. If it does not contain the answer, say that you do not know; \
never make facts up.
- Combine knowledge-graph facts with the document chunks; prefer the chunks' wording for details.
- Take the conversation history into account when the question refers back to it.
- Every chunk has a short id ("c1", "c2", …) and a reference_id pointing into the reference list.
- Cite as you write: right after each sentence or list item that uses a chunk, put the chunk's id in square \
brackets, e.g. [c3]; for several chunks write [c3][c7]. Cite only ids that appear in the context, never a \
reference_id or a file name, and leave a sentence without a marker when no chunk states it.
- Write in the same language as the question, formatted as Markdown, in this style: {response_type}.
- Do not add a references or sources section at the end: the cited documents are listed for the reader \
from your markers.

Additional instructions: {user_prompt}

---Context---

"""

NO_CONTEXT_ANSWER = (
    "I could not find anything in this project's knowledge base that relates to your question, "
    "so I cannot answer it from the documents."
)

PROMPT_QUERY_SEPARATOR = "\n\n---User Query---\n\n"


def system_head(response_type: str, user_prompt: str | None) -> str:
    """The instructions; the context follows directly (the head ends with a blank line)."""
    return _SYSTEM.format(response_type=response_type, user_prompt=(user_prompt or "").strip() or "n/a")


def system_prompt(context: str, response_type: str, user_prompt: str | None) -> str:
    return system_head(response_type, user_prompt) + context


ENTITY_SECTION = "Knowledge graph entities (one JSON object per line):"
RELATION_SECTION = "Knowledge graph relationships (one JSON object per line):"
CHUNK_SECTION = (
    "Document chunks (one JSON object per line; id is what a citation marker names, reference_id points "
    "into the reference list; chunks are ordered by relevance):"
)
REFERENCE_SECTION = "Reference list (reference_id and document):"
