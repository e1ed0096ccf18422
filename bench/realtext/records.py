"""What the fake model answers, built from NLP output (bench/realtext/nlp.py) so it can be tested without it.

A parsed text is a list of sentences `{"text": str, "mentions": [[name, label], ...]}` in reading order:
named entities (spaCy labels) and cleaned noun chunks (label TERM for specific terms: a proper noun or a
compound of nouns such as "basal cell carcinoma"; NOUN for other noun chunks). Extraction keeps the most
salient mentions (named first, then by frequency in the chunk, then by first position), at most
`max_entities`, described by the first sentence naming them; relations join neighbouring mentions of a
sentence, described by that sentence, keywords = the sentence's verbs; at most `max_records` rows in all.
The caps (25 entities, 60 rows) are about what a real model gives for a 1,200-token chunk, below the limits
official LightRAG writes in its prompt (40 / 100); they also keep the graph small enough to embed with
MiniLM on a CPU in minutes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

TUPLE = "<|#|>"
COMPLETE = "<|COMPLETE|>"
TYPES = {
    "PERSON": "Person",
    "ORG": "Organization",
    "NORP": "Organization",
    "GPE": "Location",
    "LOC": "Location",
    "FAC": "Location",
    "EVENT": "Event",
    "PRODUCT": "Artifact",
    "WORK_OF_ART": "Artifact",
    "LAW": "Concept",
    "LANGUAGE": "Concept",
    "TERM": "Concept",
    "NOUN": "Concept",
}
NAMED = frozenset(TYPES) - {"TERM", "NOUN"}
SUMMARY_WORDS = 300


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().replace(TUPLE, " ")


def name_of(mention: list[str] | tuple[str, str]) -> str:
    """Named entities keep their spelling; noun chunks are lowercased so "Skin cancer" meets "skin cancer"."""
    text, label = mention
    return _clean(text) if label in NAMED else _clean(text).lower()


def extraction(
    sentences: list[dict[str, Any]], max_entities: int = 25, max_records: int = 60
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str, str]]]:
    """(entities as (name, type, description), relations as (source, target, keywords, description))."""
    seen: dict[str, dict[str, Any]] = {}
    for index, sentence in enumerate(sentences):
        for mention in sentence["mentions"]:
            if mention[1] not in TYPES:
                continue
            name = name_of(mention)
            entry = seen.setdefault(name, {"label": mention[1], "count": 0, "first": index, "order": len(seen)})
            entry["count"] += 1
            if mention[1] in NAMED:
                entry["label"] = mention[1]
    ranked = sorted(seen, key=lambda n: (seen[n]["label"] not in NAMED, -seen[n]["count"], seen[n]["order"]))
    kept = set(ranked[:max_entities])
    entities = [
        (name, TYPES[seen[name]["label"]], _clean(sentences[seen[name]["first"]]["text"]))
        for name in sorted(kept, key=lambda n: seen[n]["order"])
    ]
    relations: list[tuple[str, str, str, str]] = []
    pairs: set[frozenset[str]] = set()
    for sentence in sentences:
        names = list(dict.fromkeys(name_of(m) for m in sentence["mentions"] if m[1] in TYPES))
        names = [n for n in names if n in kept]
        keywords = ", ".join(dict.fromkeys(sentence.get("verbs", []))) or "related"
        for i, a in enumerate(names):
            for b in names[i + 1 : i + 2]:
                pair = frozenset((a, b))
                if pair in pairs or len(entities) + len(relations) >= max_records:
                    continue
                pairs.add(pair)
                relations.append((a, b, keywords, _clean(sentence["text"])))
    return entities, relations


def format_records(entities: Iterable[tuple[str, str, str]], relations: Iterable[tuple[str, str, str, str]]) -> str:
    """The official LightRAG record lines, ending with the completion delimiter."""
    lines = [TUPLE.join(("entity", *e)) for e in entities]
    lines += [TUPLE.join(("relation", *r)) for r in relations]
    return "\n".join([*lines, COMPLETE])


def keywords(sentences: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(high-level, low-level): names and specific terms are low-level, the other noun chunks high-level;
    with no specific term, the noun chunks serve as both."""
    high: list[str] = []
    low: list[str] = []
    for sentence in sentences:
        for mention in sentence["mentions"]:
            name = name_of(mention)
            if mention[1] == "NOUN":
                high.append(name)
            elif mention[1] in TYPES:
                low.append(name)
    high, low = list(dict.fromkeys(high)), list(dict.fromkeys(low))
    return (high or low), (low or high)


def summary(fragments: Iterable[str], max_words: int = SUMMARY_WORDS) -> str:
    """A faithful but bounded summariser: the distinct fragments joined, cut at `max_words` words."""
    words = " ".join(dict.fromkeys(_clean(f) for f in fragments if f.strip())).split(" ")
    return " ".join(words[:max_words])
