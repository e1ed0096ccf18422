"""Scoring by passage: which corpus passages a returned context's chunks come from, and per question whether
every supporting passage is among them (all-evidence) and what share of them is (passage recall)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench.realtext.scoring import mean, percentile


class Locator:
    """Maps a chunk's text to the passage (corpus index) it was cut from: its whole text when the passage is
    one chunk, else the passage containing it."""

    def __init__(self, documents: dict[int, str]) -> None:
        self._documents = {i: d.strip() for i, d in documents.items()}
        self._exact = {d: i for i, d in self._documents.items()}

    def passage(self, chunk: str) -> int | None:
        text = chunk.strip()
        found = self._exact.get(text)
        if found is not None:
            return found
        return next((i for i, d in self._documents.items() if text and text in d), None)

    def passages(self, chunks: Iterable[str]) -> list[int]:
        """The distinct passages of the chunks, in the context's order; chunks of no passage are left out."""
        return list(dict.fromkeys(i for i in map(self.passage, chunks) if i is not None))


def evidence(gold: Iterable[int], found: Iterable[int]) -> tuple[bool, float]:
    """(every gold passage found, share of gold passages found)."""
    wanted, have = set(gold), set(found)
    if not wanted:
        raise ValueError("a question without supporting passages cannot be scored")
    hits = len(wanted & have)
    return hits == len(wanted), hits / len(wanted)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """{budget: {mode: {system: figures}}} from the per-question rows."""
    grouped: dict[str, Any] = {}
    for row in rows:
        grouped.setdefault(row["budget"], {}).setdefault(row["mode"], {}).setdefault(row["system"], []).append(row)
    out: dict[str, Any] = {}
    for budget, modes in grouped.items():
        for mode, systems in modes.items():
            for system, mine in systems.items():
                ms = [1000 * r["seconds"] for r in mine]
                out.setdefault(budget, {}).setdefault(mode, {})[system] = {
                    "questions": len(mine),
                    "all_evidence": mean(float(r["all_evidence"]) for r in mine),
                    "recall": mean(r["recall"] for r in mine),
                    "chunks": mean(len(r["found"]) for r in mine),
                    "tokens": mean(r["tokens"] for r in mine),
                    "ms_p50": percentile(ms, 0.5),
                    "ms_p95": percentile(ms, 0.95),
                }
    return out


def table(summary: dict[str, Any]) -> str:
    """Plain-text tables, one per budget: each mode's service and official figures and their difference."""
    lines = []
    for budget, modes in summary.items():
        lines += [
            f"\n[{budget} budget] all-evidence (share of questions with every gold passage), passage recall,"
            " passages returned, context tokens, ms",
            f"{'mode':7}{'system':9}{'all-ev':>7}{'recall':>7}{'pass.':>6}{'tokens':>8}{'p50':>7}{'p95':>7}",
        ]
        for mode, systems in modes.items():
            for system in ("service", "official"):
                s = systems.get(system)
                if s is not None:
                    lines.append(
                        f"{mode:7}{system:9}{s['all_evidence']:7.3f}{s['recall']:7.3f}{s['chunks']:6.1f}"
                        f"{s['tokens']:8.0f}{s['ms_p50']:7.0f}{s['ms_p95']:7.0f}"
                    )
            if "service" in systems and "official" in systems:
                a, b = systems["service"], systems["official"]
                lines.append(
                    f"{'':7}{'diff':9}{a['all_evidence'] - b['all_evidence']:+7.3f}{a['recall'] - b['recall']:+7.3f}"
                    f"{a['chunks'] - b['chunks']:+6.1f}{a['tokens'] - b['tokens']:+8.0f}"
                    f"{a['ms_p50'] - b['ms_p50']:+7.0f}{a['ms_p95'] - b['ms_p95']:+7.0f}"
                )
    return "\n".join(lines)
