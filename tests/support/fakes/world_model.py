"""A fake model that knows a synthetic world (bench/quality_world.py) and reads chunks the way a good model would.

- extraction: every surface form of the world written in the chunk becomes an entity record, named as
  written, with its type and "<form> is <description tail>."; every relation whose stating sentence is in
  the chunk becomes a relation record between the forms used in that sentence, keywords = its themes,
  description = the sentence. Which entity a form means is decided by the document the chunk comes from
  (a surname or a shared name means different people in different documents).
- keywords: the world's questions get their planned high- and low-level keywords; other queries fall
  back to the default fake's answer.
- summaries: the distinct fragments, joined (a faithful summariser that keeps every fact).
Embeddings stay the default fake's hashed bag of words. `install(fake)` plugs the handlers into a FakeOpenAI.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.fakes.openai_server import (
    COMPLETE,
    TUPLE,
    FakeOpenAI,
    chunk_text,
    default_keywords,
    default_summary,
)

_PROBE = 120  # characters of a chunk used to find its document


class WorldModel:
    def __init__(self, world: Any) -> None:
        self.world = world
        self.entities = world.entities
        self.keywords_by_query = {q.text: (q.hl, q.ll) for q in world.questions}
        # per document: forms longest first (so "Mira Tolven" is read before "Tolven"), one pattern each
        self._forms = {
            doc.id: [
                (form, re.compile(rf"(?<!\w){re.escape(form)}(?!\w)"))
                for form in sorted(doc.mentions, key=len, reverse=True)
            ]
            for doc in world.documents
        }

    def document_of(self, chunk: str) -> Any | None:
        probe = chunk.strip()[:_PROBE]
        found = [d for d in self.world.documents if probe in d.text]
        if len(found) > 1:
            found = [d for d in found if chunk.strip() in d.text] or found
        return found[0] if found else None

    def records(self, chunk: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str, str]]]:
        """(entities as (form, type, description), relations as (form a, form b, keywords, sentence))."""
        doc = self.document_of(chunk)
        if doc is None:
            return [], []
        masked, hits = chunk, []
        for form, pattern in self._forms[doc.id]:
            for match in pattern.finditer(masked):
                hits.append((match.start(), form))
            masked = pattern.sub(lambda m: "\0" * len(m.group(0)), masked)
        entities: list[tuple[str, str, str]] = []
        for _, form in sorted(hits):
            entity = self.entities[doc.mentions[form]]
            record = (form, entity.type, entity.description(form))
            if record not in entities:
                entities.append(record)
        relations = [
            (t.a, t.b, self.world.relations[t.relation].keywords, t.sentence) for t in doc.told if t.sentence in chunk
        ]
        return entities, list(dict.fromkeys(relations))

    def extract(self, messages: list[dict]) -> str:
        entities, relations = self.records(chunk_text(messages))
        lines = [f"entity{TUPLE}{name}{TUPLE}{kind}{TUPLE}{description}" for name, kind, description in entities]
        lines += [
            f"relation{TUPLE}{a}{TUPLE}{b}{TUPLE}{keywords}{TUPLE}{sentence}" for a, b, keywords, sentence in relations
        ]
        return "\n".join([*lines, COMPLETE])

    def keywords(self, messages: list[dict]) -> str:
        text = messages[-1]["content"]
        query = text.rsplit("Query:", 1)[-1].strip()
        planned = self.keywords_by_query.get(query)
        if planned is None:
            return default_keywords(messages)
        high, low = planned
        return json.dumps({"high_level_keywords": high, "low_level_keywords": low})

    def summary(self, messages: list[dict]) -> str:
        fragments: list[str] = []
        for line in messages[-1]["content"].splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict) and isinstance(value.get("description"), str):
                fragments.append(value["description"].strip())
        if not fragments:
            return default_summary(messages)
        return " ".join(dict.fromkeys(fragments))

    def install(self, fake: FakeOpenAI) -> None:
        fake.handlers.update({"extract": self.extract, "keywords": self.keywords, "summary": self.summary})
