"""Tables of the real-text bench: per budget, mode and system, answer coverage overall and per question type,
the share of questions covered ≥ 0.8, context tokens and latency; with the service − official difference."""

from __future__ import annotations

from typing import Any

from bench.realtext.data import QUESTION_TYPES
from bench.realtext.scoring import mean, percentile, share_at_least

SHORT = {
    "Fact Retrieval": "fact",
    "Complex Reasoning": "complex",
    "Contextual Summarize": "summ",
    "Creative Generation": "creat",
}
SYSTEMS = ("service", "official")


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """{budget: {mode: {system: figures}}} from the per-question rows."""
    out: dict[str, Any] = {}
    for row in rows:
        out.setdefault(row["budget"], {}).setdefault(row["mode"], {}).setdefault(row["system"], [])
        out[row["budget"]][row["mode"]][row["system"]].append(row)
    for modes in out.values():
        for systems in modes.values():
            for system, mine in systems.items():
                ms = [1000 * r["seconds"] for r in mine]
                systems[system] = {
                    "questions": len(mine),
                    "coverage": mean(r["coverage"] for r in mine),
                    "covered_0_8": share_at_least(r["coverage"] for r in mine),
                    "by_type": {t: mean(r["coverage"] for r in mine if r["type"] == t) for t in QUESTION_TYPES},
                    "covered_0_8_by_type": {
                        t: share_at_least(r["coverage"] for r in mine if r["type"] == t) for t in QUESTION_TYPES
                    },
                    "tokens": mean(r["tokens"] for r in mine),
                    "ms_p50": percentile(ms, 0.5),
                    "ms_p95": percentile(ms, 0.95),
                }
    return out


def _f(value: float | None, width: int = 6, digits: int = 3) -> str:
    return ("-" if value is None else f"{value:.{digits}f}").rjust(width)


def _d(a: float | None, b: float | None, width: int = 6, digits: int = 3) -> str:
    return ("-" if a is None or b is None else f"{a - b:+.{digits}f}").rjust(width)


def table(summary: dict[str, Any]) -> str:
    """Plain-text tables, one per budget: for each mode the service, official and their difference."""
    types = "".join(f"{SHORT[t]:>8}" for t in QUESTION_TYPES)
    lines = []
    for budget, modes in summary.items():
        lines += [
            f"\n[{budget} budget] answer coverage (mean), share covered >= 0.8, per type mean; context tokens; ms",
            f"{'mode':7}{'system':9}{'cov':>7}{'>=0.8':>7}{types}{'tokens':>8}{'p50':>7}{'p95':>7}",
        ]
        for mode, systems in modes.items():
            for system in SYSTEMS:
                s = systems.get(system)
                if s is None:
                    continue
                cells = "".join(_f(s["by_type"][t], 8) for t in QUESTION_TYPES)
                lines.append(
                    f"{mode:7}{system:9}{_f(s['coverage'], 7)}{_f(s['covered_0_8'], 7)}{cells}"
                    f"{s['tokens'] or 0:8.0f}{s['ms_p50']:7.0f}{s['ms_p95']:7.0f}"
                )
            if all(k in systems for k in SYSTEMS):
                a, b = systems["service"], systems["official"]
                cells = "".join(_d(a["by_type"][t], b["by_type"][t], 8) for t in QUESTION_TYPES)
                lines.append(
                    f"{'':7}{'diff':9}{_d(a['coverage'], b['coverage'], 7)}{_d(a['covered_0_8'], b['covered_0_8'], 7)}"
                    f"{cells}{(a['tokens'] or 0) - (b['tokens'] or 0):+8.0f}"
                    f"{a['ms_p50'] - b['ms_p50']:+7.0f}{a['ms_p95'] - b['ms_p95']:+7.0f}"
                )
    return "\n".join(lines)


def headroom_lines(headroom: dict[str, dict[str, Any]]) -> str:
    """One line per budget: what retrieval could reach (bench/realtext/headroom.py)."""
    lines = ["\nheadroom (upper bounds: the oracles read the answers; greedy choice of corpus chunks)"]
    for budget, h in headroom.items():
        lines.append(
            f"[{budget}] whole-corpus ceiling {_f(h['ceiling'], 0)}; oracle within {h['tokens']} chunk tokens "
            f"{_f(h['oracle'], 0)}; oracle within {h['tokens']} tokens and {h['chunk_top_k']} chunks "
            f"{_f(h['oracle_top_k'], 0)}"
        )
    return "\n".join(lines)


def ceiling_lines(pools: dict[str, dict[str, Any]], summary: dict[str, Any]) -> str:
    """Per budget, the candidate pool's oracle (bench/realtext/ceiling.py) and hybrid's own candidate order cut at
    chunk_top_k and twice that (chunk text only), beside the combining modes' coverage, overall and per question
    type: how much of their gap to the oracle is ranking, and how far their own order is from closing it."""
    types = "".join(f"{SHORT[t]:>8}" for t in QUESTION_TYPES)
    lines = ["\ncandidate-pool ceiling (answer-aware best choice among the chunks any mode considers)"]
    for budget, p in pools.items():
        lines += [
            f"[{budget}] pool {p['pool_chunks'] or 0:.0f} chunks a question, holding {_f(p['pool_terms'], 0)} of the "
            f"answer terms; best choice within the tokens {_f(p['pool_oracle'], 0)}, and chunk_top_k "
            f"{_f(p['pool_oracle_top_k'], 0)}",
            f"{'':16}{'cov':>7}{types}",
            f"{'pool oracle':16}{_f(p['pool_oracle_top_k'], 7)}"
            + "".join(_f(p["by_type"][t]["pool_oracle_top_k"], 8) for t in QUESTION_TYPES),
            f"{'hybrid first k':16}{_f(p['hybrid_first_top_k'], 7)}"
            + "".join(_f(p["by_type"][t]["hybrid_first_top_k"], 8) for t in QUESTION_TYPES),
            f"{'hybrid first 2k':16}{_f(p['hybrid_first_2_top_k'], 7)}"
            + "".join(_f(p["by_type"][t]["hybrid_first_2_top_k"], 8) for t in QUESTION_TYPES),
        ]
        for mode in ("hybrid", "mix"):
            for system, s in summary.get(budget, {}).get(mode, {}).items():
                cells = "".join(_f(s["by_type"][t], 8) for t in QUESTION_TYPES)
                lines.append(f"{mode + ' ' + system:16}{_f(s['coverage'], 7)}{cells}")
    return "\n".join(lines)
