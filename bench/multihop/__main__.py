"""Multi-hop retrieval bench: HotpotQA or MuSiQue (HippoRAG's 100-question slices) through the service and
official LightRAG 1.5.7, side by side.

    .venv/bin/python -m bench.multihop --dataset hotpotqa|musique [--sample N] [--modes local,global,...]
                                       [--budgets default,tight] [--systems service,official]
                                       [--embeddings minilm|hashed] [--set SETTING=VALUE] [--app-dir DIR]
                                       [--cache-dir DIR] [--out result.json] [--reuse-official earlier.json]

Every passage is one document ("title\\ntext"); both systems ingest them with the real-text bench's
chunking, fake provider (spaCy extraction, keywords from the question, MiniLM) and budgets
(bench/realtext), so they hold the same records and differ by retrieval alone. Each question is asked for
context only in each mode and budget; a returned chunk counts for the passage it was cut from. Scored per
mode and budget: all-evidence (the share of questions whose every supporting passage is among the context's
chunks), passage recall, passages and tokens returned, latency p50 / p95. `--sample N` keeps the first N
questions and ingests only their own passages (a quicker, smaller haystack: not comparable with full runs).
`--reuse-official FILE` takes official's rows from an earlier `--out` of the same dataset and sample; `--out` is
written after each system's answers too (marked partial), so a run stopped later keeps what it finished.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.multihop import data

WIDE = {"chunk_top_k": 100, "max_total_tokens": 200_000}  # --diagnose: the ranking beyond the budget's cut


async def _ask_all(name: str, system: Any, questions: list[data.Question], locate: Any, args: Any) -> list[dict]:
    from app.providers.tokenizer import get_tokenizer
    from bench.multihop.scoring import evidence
    from bench.realtext.__main__ import BUDGETS, asked, content_text

    count = get_tokenizer().count
    rows = []
    async for budget, mode, q, context, seconds in asked(name, system, questions, args):
        found = locate.passages(c["content"] for c in context.get("chunks", []))
        complete, recall = evidence(q.gold, found)
        row = {
            "system": name,
            "budget": budget,
            "mode": mode,
            "id": q.id,
            "kind": q.kind,
            "seconds": seconds,
            "gold": list(q.gold),
            "found": found,
            "all_evidence": complete,
            "recall": recall,
            "entities": len(context.get("entities", [])),
            "relations": len(context.get("relations", [])),
            "tokens": count(content_text(context)),
        }
        if args.diagnose:  # the same search with room for every candidate: where each passage ranks
            wide = await system.query(q.text, mode, BUDGETS[budget] | WIDE)
            row["wide"] = locate.passages(c["content"] for c in wide.get("chunks", []))
        rows.append(row)
    return rows


async def run(args: argparse.Namespace, documents: dict[int, str], questions: list[data.Question]) -> dict:
    from bench.multihop.scoring import Locator
    from bench.realtext.__main__ import CHUNK_OVERLAP, CHUNK_SIZE, save_partial
    from bench.realtext.provider import ProviderProcess

    texts = list(documents.values())
    locate = Locator(documents)
    file_paths = [f"{args.dataset}-{i}.txt" for i in documents]  # official drops a document whose path it has seen
    corpus = f"bench.multihop.data:{args.dataset}_documents"
    provider = ProviderProcess(args.cache_dir, CHUNK_SIZE, CHUNK_OVERLAP, args.embeddings, corpus, rerank=args.rerank)
    result: dict[str, Any] = {"ingest_seconds": {}, "rows": []}
    try:
        if "service" in args.systems:
            from bench.multihop.specificity import keyword_profiles
            from bench.realtext.rerank import service_settings
            from bench.realtext.service_side import service

            settings: dict[str, Any] = {"chunk_size": CHUNK_SIZE, "chunk_overlap_size": CHUNK_OVERLAP}
            settings |= {"embedding_timeout": 600, "llm_timeout": 600}
            if args.rerank:
                settings |= service_settings(provider.url)
            settings |= dict(item.split("=", 1) for item in args.set)
            async with service(provider.url, settings, args.keep_data) as svc:
                result["ingest_seconds"]["service"] = await svc.ingest_once(texts, file_paths, settings)
                result["graph"] = {"service": await svc.graph_size()}
                print(f"service: ingested in {result['ingest_seconds']['service']:.1f}s, graph {result['graph']}")
                result["rows"] += await _ask_all("service", svc, questions, locate, args)
                result["keywords"] = await keyword_profiles(svc, questions)
                save_partial(args, result, "service")
        if "official" in args.systems:
            from bench.realtext.official_side import Official

            with tempfile.TemporaryDirectory(prefix="multihop-official-") as work_dir:
                official = Official(Path(work_dir), provider.url, CHUNK_SIZE, CHUNK_OVERLAP, rerank=args.rerank)
                try:
                    await official.start()
                    result["ingest_seconds"]["official"] = await official.ingest(texts, file_paths)
                    print(f"official: ingested in {result['ingest_seconds']['official']:.1f}s", flush=True)
                    result["rows"] += await _ask_all("official", official, questions, locate, args)
                    save_partial(args, result, "official")
                finally:
                    await official.stop()
    finally:
        provider.stop()
    return result


def reused_official(saved: dict[str, Any], questions: list[data.Question], args: argparse.Namespace) -> dict:
    """Official's rows and ingestion time from an earlier `--out` of this dataset, sample and embeddings, for
    exactly this run's questions, modes and budgets; ValueError when anything differs or is missing."""
    for key in ("dataset", "sample", "embeddings"):
        if saved["args"].get(key) != getattr(args, key):
            raise ValueError(f"the saved run used {key}={saved['args'].get(key)}, not {getattr(args, key)}")
    if bool(saved["args"].get("rerank")) != args.rerank:
        raise ValueError(f"the saved run has rerank {bool(saved['args'].get('rerank'))}, this one {args.rerank}")
    from bench.realtext.__main__ import official_rows

    rows = official_rows(saved, {q.id for q in questions}, args)
    return {"rows": rows, "ingest_seconds": saved.get("ingest_seconds", {}).get("official")}


def main() -> None:
    from bench.realtext.__main__ import add_run_options

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=data.DATASETS, required=True)
    parser.add_argument("--sample", type=int, default=None, help="the first N questions and their passages only")
    add_run_options(parser)
    parser.add_argument("--reuse-official", type=Path, default=None, metavar="FILE")
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="also ask each question with room for 100 chunks and keep where every passage ranks"
        " (python -m bench.multihop.diagnose reads it)",
    )
    parser.add_argument(
        "--keyword-examples", type=int, default=0, metavar="N", help="print N questions' high-level keywords"
    )
    args = parser.parse_args()
    args.modes, args.budgets, args.systems = args.modes.split(","), args.budgets.split(","), args.systems.split(",")
    if args.reuse_official:
        args.systems = [s for s in args.systems if s != "official"]
    from bench.quality_bench import use_app_from
    from bench.realtext.__main__ import check_out_path

    check_out_path(args)

    use_app_from(args.app_dir)
    data.verify()
    passages, all_questions = data.load(args.dataset)
    questions, kept = data.sample(all_questions, args.sample, len(passages))
    documents = {i: passages[i].document for i in kept}
    print(f"{args.dataset}: {len(documents)} passages, {len(questions)} questions", flush=True)
    reused = (
        reused_official(json.loads(args.reuse_official.read_text()), questions, args) if args.reuse_official else None
    )
    result = asyncio.run(run(args, documents, questions))
    result["texts"] = {q.id: q.text for q in questions}
    if reused:
        result["rows"] += reused["rows"]
        if reused["ingest_seconds"] is not None:
            result["ingest_seconds"]["official"] = reused["ingest_seconds"]
    _show(result, args)


def _show(result: dict[str, Any], args: argparse.Namespace) -> None:
    from bench.multihop.scoring import summarise, table
    from bench.realtext.__main__ import args_json

    seconds = result["ingest_seconds"]
    print("ingestion wall time: " + ", ".join(f"{k} {v:.1f}s" for k, v in seconds.items()))
    summary = summarise(result["rows"])
    print(table(summary))
    profiles = result.get("keywords")
    if profiles:  # global's high-level keywords, generic or specific, and each class's all-evidence
        from bench.multihop import specificity

        print(specificity.table(profiles, specificity.split(result["rows"], profiles)))
        if args.keyword_examples:
            print(specificity.examples(profiles, result["texts"], args.keyword_examples))
    if args.out:
        out = {
            "args": args_json(args),
            "ingest_seconds": seconds,
            "graph": result.get("graph"),
            "summary": summary,
            "keywords": profiles,
            "rows": result["rows"],
        }
        Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
