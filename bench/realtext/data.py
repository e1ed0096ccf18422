"""The committed GraphRAG-Bench Medical files: checksums, loading, and a stratified sample of questions."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "graphrag_bench_medical"
CHECKSUMS = {
    "medical.json": "39ba262caf26bbc8070af7f96b48a09d9ed6a249c02837314229f3d783f0a0f6",
    "medical_questions.json": "c62cee56cf4c0cf9142751f4ac342ce2e6d1a35bdaa3e7666998352158e92c02",
}
QUESTION_TYPES = ("Fact Retrieval", "Complex Reasoning", "Contextual Summarize", "Creative Generation")


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answer: str
    type: str


def verify(data_dir: Path = DATA_DIR, checksums: dict[str, str] = CHECKSUMS) -> None:
    """Raise ValueError naming the file whose sha256 is not the recorded one."""
    for name, expected in checksums.items():
        digest = hashlib.sha256((data_dir / name).read_bytes()).hexdigest()
        if digest != expected:
            raise ValueError(f"{data_dir / name}: sha256 {digest}, expected {expected} (see SOURCE.md)")


def corpus(data_dir: Path = DATA_DIR) -> list[str]:
    return [entry["context"] for entry in json.loads((data_dir / "medical.json").read_text())]


def questions(data_dir: Path = DATA_DIR) -> list[Question]:
    return [
        Question(q["id"], q["question"], q["answer"], q["question_type"])
        for q in json.loads((data_dir / "medical_questions.json").read_text())
    ]


def stratified(items: list[Question], per_type: int | None, seed: int) -> list[Question]:
    """Up to `per_type` questions of each type, drawn with a fixed seed, in file order; None: all."""
    if per_type is None:
        return list(items)
    rng = random.Random(seed)
    chosen: set[str] = set()
    for kind in sorted({q.type for q in items}):
        of_kind = [q.id for q in items if q.type == kind]
        chosen.update(rng.sample(of_kind, min(per_type, len(of_kind))))
    return [q for q in items if q.id in chosen]
