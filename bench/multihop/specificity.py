"""How specific each question's high-level keywords are in the ingested graph, and the bench's figures split by it.

Global mode searches relations by the high-level keywords. On templated multi-hop questions ("Which film came
out first, X or Y?", "Where was the director of film X born?") those keywords are generic ("film", "director"):
each matches a large share of the relations and says little about which ones are meant. A keyword's
specificity is read from the data: the share of the graph's relations whose full-text vector matches it (its
relation document frequency). A question is

  generic   when even its most specific matching high-level keyword matches at least `GENERIC_SHARE` of
            the relations,
  specific  when one of them matches fewer,
  unmatched when none matches any relation (only the vector searches can find anything).
"""

from __future__ import annotations

from typing import Any

from bench.multihop.scoring import mean

GENERIC_SHARE = 0.01  # a keyword matching 1 relation in 100 or more tells little about which ones are meant
CLASSES = ("generic", "specific", "unmatched")

_DOCUMENT_FREQUENCY = """
SELECT k.kw, (SELECT count(*) FROM relations r
              WHERE r.project_id = :project_id AND r.search_vector @@ plainto_tsquery('english', k.kw)) AS matched
FROM unnest(CAST(:keywords AS text[])) AS k(kw)
WHERE numnode(plainto_tsquery('english', k.kw)) > 0
"""


async def keyword_profiles(svc: Any, questions: list[Any]) -> dict[str, list[tuple[str, float]]]:
    """{question id: [(high-level keyword, share of relations it matches), ...]} from the service's own keyword
    answers (cached by the bench's earlier questions) and its database."""
    from sqlalchemy import text

    asked: dict[str, list[str]] = {}
    for q in questions:
        body = {"query": q.text, "mode": "global", "only_need_context": True, "stream": False}
        response = await svc.client.post("/query", json=body)
        assert response.status_code == 200, response.text
        asked[q.id] = list(response.json()["keywords"]["high_level"])
    every = sorted({k for kws in asked.values() for k in kws})
    async with svc.app.state.container.db.transaction() as conn:
        total = int((await conn.execute(text("SELECT count(*) FROM relations WHERE project_id = 'default'"))).scalar())
        rows = await conn.execute(text(_DOCUMENT_FREQUENCY), {"project_id": "default", "keywords": every})
        matched = {kw: int(n) for kw, n in rows}
    return {qid: [(k, matched.get(k, 0) / max(1, total)) for k in kws] for qid, kws in asked.items()}


def classify(profile: list[tuple[str, float]], generic_share: float = GENERIC_SHARE) -> str:
    shares = [share for _, share in profile if share > 0]
    if not shares:
        return "unmatched"
    return "generic" if min(shares) >= generic_share else "specific"


def split(rows: list[dict[str, Any]], profiles: dict[str, list[tuple[str, float]]]) -> dict[str, Any]:
    """{budget: {mode: {system: {class: (questions, all-evidence)}}}} over the rows of profiled questions."""
    grouped: dict[tuple[str, str, str, str], list[bool]] = {}
    for r in rows:
        if r["id"] in profiles:
            key = (r["budget"], r["mode"], r["system"], classify(profiles[r["id"]]))
            grouped.setdefault(key, []).append(bool(r["all_evidence"]))
    out: dict[str, Any] = {}
    for (budget, mode, system, kind), found in grouped.items():
        cell = (len(found), mean(float(f) for f in found))
        out.setdefault(budget, {}).setdefault(mode, {}).setdefault(system, {})[kind] = cell
    return out


def table(profiles: dict[str, list[tuple[str, float]]], by_class: dict[str, Any]) -> str:
    counts = {kind: sum(classify(p) == kind for p in profiles.values()) for kind in CLASSES}
    lines = [
        f"\nhigh-level keywords by share of relations matched: generic (>= {GENERIC_SHARE:.0%}) {counts['generic']},"
        f" specific {counts['specific']}, unmatched {counts['unmatched']} questions; all-evidence per class",
        f"{'budget':8}{'mode':8}{'system':9}" + "".join(f"{kind:>14}" for kind in CLASSES),
    ]
    for budget, modes in by_class.items():
        for mode, systems in modes.items():
            for system in ("service", "official"):
                cells = systems.get(system)
                if cells is None:
                    continue
                shown = [f"{cells[k][1]:.3f} ({cells[k][0]})" if k in cells else "-" for k in CLASSES]
                lines.append(f"{budget:8}{mode:8}{system:9}" + "".join(f"{s:>14}" for s in shown))
    return "\n".join(lines)


def examples(profiles: dict[str, list[tuple[str, float]]], texts: dict[str, str], count: int) -> str:
    """The first `count` questions with their keywords and shares, most generic first."""

    def most_specific(item: tuple[str, list[tuple[str, float]]]) -> float:
        shares = [s for _, s in item[1] if s > 0]
        return -min(shares) if shares else 1.0

    lines = []
    for qid, profile in sorted(profiles.items(), key=most_specific)[:count]:
        keywords = ", ".join(f"{k} {s:.2%}" for k, s in profile)
        lines.append(f"  {classify(profile):9} {texts.get(qid, qid)[:70]!r}: {keywords}")
    return "\n".join(lines)
