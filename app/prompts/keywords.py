"""Keyword-extraction prompt: one JSON object with thematic (high-level) and specific (low-level) keywords.

The invariant part (role, rules, examples) comes first so provider prefix caching applies; the recent
conversation and the query come last. Recent turns are included so follow-ups ("and his sister?") resolve.
"""

from __future__ import annotations

import json

from app.domain.chat import Message

_INSTRUCTIONS = """You extract search keywords for a retrieval system that indexes a knowledge graph \
(entities and the relationships between them) and the documents it was built from.

Read the query and answer with exactly one JSON object and nothing else:
{{"high_level_keywords": [...], "low_level_keywords": [...]}}

- high_level_keywords: the broad themes, concepts and intent of the question: what kind of relationship, \
topic or idea is being asked about. Use short multi-word phrases where they carry meaning ("economic impact", \
"mentor relationship").
- low_level_keywords: the concrete things named or clearly implied: people, organisations, places, products, \
events, technical terms, dates. Keep proper nouns exactly as written.
- Use only what the question (and, for follow-ups, the conversation) supports; do not invent facts or names.
- If the question refers back to the conversation ("he", "that company", "tell me more"), resolve the reference \
to the named thing it means and use that name.
- No duplicates. At most 10 keywords per list. Write keywords in {language}, but keep proper nouns unchanged.
- For greetings or meaningless input return two empty lists.

Examples

Query: Who is Charlie Gordon?
{{"high_level_keywords": ["character identity", "personal background"], \
"low_level_keywords": ["Charlie Gordon"]}}

Query: How does rising sea temperature affect coral reef ecosystems?
{{"high_level_keywords": ["climate change impact", "marine ecosystem health", "ocean warming"], \
"low_level_keywords": ["sea temperature", "coral reefs", "coral bleaching"]}}

Query: What are the main themes of the story?
{{"high_level_keywords": ["main themes", "story narrative", "central ideas"], "low_level_keywords": []}}

Query: What role did the Federal Reserve play in the 2008 financial crisis?
{{"high_level_keywords": ["monetary policy", "financial crisis response", "central bank role"], \
"low_level_keywords": ["Federal Reserve", "2008 financial crisis"]}}

Query: hello
{{"high_level_keywords": [], "low_level_keywords": []}}
"""

_HISTORY_CHARS = 2000  # per message: enough to resolve references, small enough to keep the call cheap


def keyword_messages(query: str, history: list[Message], language: str) -> list[Message]:
    parts = [_INSTRUCTIONS.format(language=language)]
    if history:
        lines = [f"{m['role']}: {m['content'][:_HISTORY_CHARS]}" for m in history]
        parts.append("Conversation so far (for resolving references only):\n" + "\n".join(lines))
    parts.append(f"Query: {query}")
    return [{"role": "user", "content": "\n\n".join(parts)}]


def keywords_json(high: list[str], low: list[str]) -> str:
    return json.dumps({"high_level_keywords": high, "low_level_keywords": low}, ensure_ascii=False)
