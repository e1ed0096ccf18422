"""The committed multi-hop slices (bench/data/multihop, HippoRAG's): checksums, passages, questions with their
gold passages, and a sample that keeps only the sampled questions' own passages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from bench.realtext import data as realtext_data

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "multihop"
CHECKSUMS = {
    "hotpotqa_train.json": "6c0e2689d03c94b3bb4d5f94ed806ea4f4eb4f46c12132f8e91df774ad5c5a22",
    "hotpotqa_train_corpus.json": "2671af600095eabc5b3f3bc3728861682f14fcced84ef1386509a8ae92647f88",
    "musique_train.json": "bca674746844637f5c68408a96b67bc0542d98e7c53715f3acafe144bd5e4ff4",
    "musique_train_corpus.json": "79845dd085f9df49c8ce440208763e2611aeb86c81ee0bdad2094504381bb651",
}
DATASETS = ("hotpotqa", "musique")


@dataclass(frozen=True)
class Passage:
    title: str
    text: str

    @property
    def document(self) -> str:
        """What both systems ingest: one document per passage."""
        return f"{self.title}\n{self.text}"


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answer: str
    kind: str
    gold: tuple[int, ...]  # indexes of the supporting passages in the corpus
    context: tuple[int, ...]  # indexes of the passages the question came with (gold and distractors)


def verify(data_dir: Path = DATA_DIR, checksums: dict[str, str] = CHECKSUMS) -> None:
    """Raise ValueError naming the file whose sha256 is not the recorded one (the Medical bench's check)."""
    realtext_data.verify(data_dir, checksums)


def _read(name: str, data_dir: Path) -> object:
    return json.loads((data_dir / name).read_text())


def load(dataset: str, data_dir: Path = DATA_DIR) -> tuple[list[Passage], list[Question]]:
    if dataset == "hotpotqa":
        return _hotpotqa(data_dir)
    if dataset == "musique":
        return _musique(data_dir)
    raise ValueError(f"unknown dataset {dataset!r}; one of {', '.join(DATASETS)}")


def _hotpotqa(data_dir: Path) -> tuple[list[Passage], list[Question]]:
    corpus = _read("hotpotqa_train_corpus.json", data_dir)
    assert isinstance(corpus, dict)
    passages = [Passage(title, "".join(sentences)) for title, sentences in corpus.items()]
    index = {p.title: i for i, p in enumerate(passages)}
    questions = []
    for number, q in enumerate(_read("hotpotqa_train.json", data_dir)):  # type: ignore[arg-type]
        gold = tuple(dict.fromkeys(index[title] for title, _ in q["supporting_facts"]))
        context = tuple(index[title] for title, _ in q["context"])
        questions.append(
            Question(q.get("_id", f"hotpotqa-{number}"), q["question"], q["answer"], q["type"], gold, context)
        )
    return passages, questions


def _musique(data_dir: Path) -> tuple[list[Passage], list[Question]]:
    corpus = _read("musique_train_corpus.json", data_dir)
    assert isinstance(corpus, list)
    passages = [Passage(p["title"], p["text"]) for p in corpus]
    index = {(p.title, p.text): i for i, p in enumerate(passages)}
    questions = []
    for q in _read("musique_train.json", data_dir):  # type: ignore[attr-defined]
        context = tuple(index[(p["title"], p["paragraph_text"])] for p in q["paragraphs"])
        gold = tuple(index[(p["title"], p["paragraph_text"])] for p in q["paragraphs"] if p["is_supporting"])
        kind = q["id"].split("__")[0]  # "2hop", "3hop1", "4hop3", ...
        questions.append(Question(q["id"], q["question"], q["answer"], kind, gold, context))
    return passages, questions


def sample(questions: list[Question], count: int | None, corpus_size: int) -> tuple[list[Question], list[int]]:
    """The first `count` questions (None: all) and the corpus indexes to ingest: the whole corpus when every
    question is kept, else only the kept questions' own passages (gold and distractors)."""
    if count is None or count >= len(questions):
        return list(questions), list(range(corpus_size))
    kept = questions[:count]
    return kept, sorted({i for q in kept for i in q.context})


def hotpotqa_documents() -> list[str]:
    """The provider's corpus loader (bench/realtext/provider.py parses these chunks before serving)."""
    return [p.document for p in load("hotpotqa")[0]]


def musique_documents() -> list[str]:
    return [p.document for p in load("musique")[0]]
