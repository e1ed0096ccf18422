"""The one place that decides how graph items are turned into text: for embeddings, for the query
context and for display. (The official implementation embeds relations in two different layouts
depending on the code path; every path here calls these builders.)"""

from __future__ import annotations

import hashlib

SEP = "<SEP>"  # joins raw description fragments in storage, as the official format does


def fragments(description: str) -> list[str]:
    return [f for f in description.split(SEP) if f.strip()] if description else []


def join_fragments(parts: list[str]) -> str:
    return SEP.join(parts)


def readable(description: str) -> str:
    """Description as a person (and the answering LLM) should see it: fragments on separate lines."""
    return "\n".join(fragments(description))


def entity_embedding_text(name: str, description: str) -> str:
    return f"{name}\n{readable(description)}"


def relation_embedding_text(src_name: str, tgt_name: str, keywords: str, description: str) -> str:
    return f"{keywords}\t{src_name}\n{tgt_name}\n{readable(description)}"


def text_hash(text: str) -> str:
    """Stored beside an embedding, so unchanged items are never re-embedded."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()
