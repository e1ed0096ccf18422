"""What a claim says, as the citation check compares it with source text: content words, and the facts that
must appear in a supporting passage (numbers, dates, proper names); the passages (sentences) of a chunk."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.domain.claim_split import ends_with_abbreviation

_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[^\W\d_][\w'’-]*", re.UNICODE)
_MARKUP = re.compile(r"\[\d{1,4}\]|[*_`~]+|https?://\S+")
_PASSAGE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
_STOPWORD_TEXT = """\
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our ours out over own same she should so some such than that the their theirs them
    then there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours according based document documents context text chunk
    chunks says said mentioned mentions stated states shows show described describes one two however
    therefore thus"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_MAX_PASSAGE = 600  # characters: a longer "sentence" (a list, a table) is cut into pieces this long


def _stem(word: str) -> str:
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _number(token: str) -> str:
    return token.replace(",", "").rstrip(".")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(_MARKUP.sub(" ", text))


def content_words(text: str) -> frozenset[str]:
    """Lower-cased, lightly stemmed words and numbers that carry meaning."""
    words: set[str] = set()
    for token in tokens(text):
        if token[0].isdigit():
            words.add(_number(token))
        elif len(token) > 2 and token.lower() not in _STOPWORDS:
            words.add(_stem(token))
    return frozenset(words)


def facts(text: str) -> frozenset[str]:
    """Numbers (dates included) and proper-name words: what a supporting passage must contain. The first word
    of a sentence counts as a name only when the next word is capitalised too ("Kikstuk Foods signed")."""
    found: set[str] = set()
    words = tokens(text)
    for i, token in enumerate(words):
        if token[0].isdigit():
            found.add(_number(token))
            continue
        if not token[0].isupper() or token.lower() in _STOPWORDS or len(token) < 3:
            continue
        if i == 0 and not (len(words) > 1 and words[1][0].isupper()):
            continue
        found.add(_stem(token))
    return frozenset(found)


@dataclass(frozen=True)
class Passage:
    """A sentence of a context chunk: the chunk's position in the context and the span in its content."""

    chunk: int
    start: int
    end: int
    text: str
    words: frozenset[str]
    facts: frozenset[str]


def _mid_sentence(content: str, dot_end: int, next_start: int) -> bool:
    """A full stop that does not end the sentence: after a title or abbreviation ("Dr.", "e.g."), or followed
    by a lower-case word ("Acme Corp. signed")."""
    if content[dot_end - 1 : dot_end] not in (".", "!", "?"):
        return False
    following = content[next_start : next_start + 1]
    if following.islower() or following in ("(", "["):
        return True
    return content[dot_end - 1 : dot_end] == "." and ends_with_abbreviation(content, dot_end - 1)


def passages(chunk: int, content: str) -> list[Passage]:
    found: list[Passage] = []
    begin = 0
    bounds = [m.end() for m in _PASSAGE_END.finditer(content) if not _mid_sentence(content, m.start(), m.end())]
    bounds.append(len(content))
    for stop in bounds:
        while begin < stop:
            end = min(stop, begin + _MAX_PASSAGE)
            piece = content[begin:end]
            lead = len(piece) - len(piece.lstrip())
            text = piece.strip()
            if text:
                found.append(
                    Passage(chunk, begin + lead, begin + lead + len(text), text, content_words(text), facts(text))
                )
            begin = end
    return found
