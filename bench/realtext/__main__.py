"""Real-text retrieval bench: GraphRAG-Bench Medical through the service and official LightRAG 1.5.7.

    .venv/bin/python -m bench.realtext [--sample 60 | --all] [--seed 7] [--modes local,global,...]
                                       [--budgets default,tight] [--systems service,official]
                                       [--embeddings minilm|hashed] [--set SETTING=VALUE] [--app-dir DIR]
                                       [--out result.json] [--reuse-official earlier.json] [--ceiling] [--rerank]

Both systems ingest the committed corpus (checksums verified first) with the same chunking (1200 / 100
o200k tokens) against one deterministic fake provider (bench/realtext/provider.py: spaCy extraction and
keywords, MiniLM embeddings), so they hold the same records and differ by retrieval alone. Then every
sampled question (a fixed-seed stratified sample, `--sample` per question type) is asked for context
only in each mode at the default budget and a tight one (top_k 10, chunk_top_k 5, 1500 / 2500 / 8000
tokens). Scored without a judge (bench/realtext/scoring.py): answer coverage, the share of questions with
coverage >= 0.8, context tokens (o200k), latency p50 / p95. NLP parses and embeddings are cached in
.bench-cache/ (git-ignored) so reruns skip them. Needs the `bench` extra (`make bench-real`).
Official's figures do not depend on the service's code: `--reuse-official FILE` takes its rows from an earlier
run's `--out` file (same questions, modes and budgets, checked) and runs the service alone. `--ceiling` adds the
candidate-pool oracle (bench/realtext/ceiling.py) beside the whole-corpus one (bench/realtext/headroom.py).
`--rerank` has both systems rerank their chunks with one model, the provider's (bench/realtext/rerank.py).
`--out` is also written after each system's answers (marked partial), so a run stopped later keeps them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bench.realtext import data, rerank
from bench.realtext.cache import DEFAULT_DIR

MODES = ("local", "global", "hybrid", "mix", "naive")
BUDGETS: dict[str, dict[str, int]] = {
    "default": {
        "top_k": 40,
        "chunk_top_k": 20,
        "max_entity_tokens": 6000,
        "max_relation_tokens": 8000,
        "max_total_tokens": 30000,
    },
    "tight": {
        "top_k": 10,
        "chunk_top_k": 5,
        "max_entity_tokens": 1500,
        "max_relation_tokens": 2500,
        "max_total_tokens": 8000,
    },
}
CHUNK_SIZE, CHUNK_OVERLAP = 1200, 100


def content_text(context: dict[str, Any]) -> str:
    """What an answer model would read, the same way for both systems: entities, relations, chunk texts."""
    parts = [f"{e['name']} {e.get('type', '')} {e.get('description', '')}" for e in context.get("entities", [])]
    parts += [
        f"{r['source']} {r['target']} {r.get('keywords', '')} {r.get('description', '')}"
        for r in context.get("relations", [])
    ]
    parts += [c["content"] for c in context.get("chunks", [])]
    return "\n".join(parts)


async def asked(
    name: str, system: Any, questions: list[Any], args: Any
) -> AsyncIterator[tuple[str, str, Any, dict, float]]:
    """(budget, mode, question, context, seconds) for every question in each of `args`' budgets and modes, the
    keyword answers cached first so that none is timed; a line of progress after each budget and mode."""
    for q in questions:
        await system.query(q.text, "local", BUDGETS["default"])
    for budget in args.budgets:
        for mode in args.modes:
            for q in questions:
                started = time.perf_counter()
                context = await system.query(q.text, mode, BUDGETS[budget])
                yield budget, mode, q, context, time.perf_counter() - started
            print(f"  {name} {budget} {mode}: {len(questions)} questions asked", flush=True)


async def _ask_all(name: str, system: Any, questions: list[data.Question], args: argparse.Namespace) -> list[dict]:
    from app.providers.tokenizer import get_tokenizer
    from bench.realtext.scoring import coverage, terms

    count = get_tokenizer().count
    rows = []
    async for budget, mode, q, context, seconds in asked(name, system, questions, args):
        text = content_text(context)
        rows.append(
            {
                "system": name,
                "budget": budget,
                "mode": mode,
                "id": q.id,
                "type": q.type,
                "seconds": seconds,
                "coverage": coverage(q.answer, terms(text)),
                "tokens": count(text),
            }
        )
    return rows


async def run(args: argparse.Namespace, texts: list[str], questions: list[data.Question]) -> dict[str, Any]:
    from bench.realtext.provider import ProviderProcess

    provider = ProviderProcess(args.cache_dir, CHUNK_SIZE, CHUNK_OVERLAP, args.embeddings, rerank=args.rerank)
    result: dict[str, Any] = {"ingest_seconds": {}, "chunks": {}, "rows": []}
    try:
        if "service" in args.systems:
            from bench.realtext.service_side import service

            settings: dict[str, Any] = {"chunk_size": CHUNK_SIZE, "chunk_overlap_size": CHUNK_OVERLAP}
            settings |= {"embedding_timeout": 600, "llm_timeout": 600}  # a loaded machine's MiniLM is slow
            if args.rerank:
                settings |= rerank.service_settings(provider.url)
            settings |= dict(item.split("=", 1) for item in args.set)
            async with service(provider.url, settings, args.keep_data) as svc:
                result["ingest_seconds"]["service"] = await svc.ingest_once(texts, None, settings)
                result["graph"] = {"service": await svc.graph_size()}
                result["chunks"]["service"] = sorted(c.strip() for c in await svc.chunks())
                print(f"service: ingested in {result['ingest_seconds']['service']:.1f}s, graph {result['graph']}")
                result["rows"] += await _ask_all("service", svc, questions, args)
                save_partial(args, result, "service")
                if args.ceiling:
                    from app.providers.tokenizer import get_tokenizer
                    from bench.realtext.ceiling import pool_rows

                    budgets = {b: BUDGETS[b] for b in args.budgets}
                    result["pools"] = await pool_rows(svc, questions, budgets, get_tokenizer().count)
        if "official" in args.systems:
            from bench.realtext.official_side import Official

            with tempfile.TemporaryDirectory(prefix="realtext-official-") as work_dir:
                official = Official(Path(work_dir), provider.url, CHUNK_SIZE, CHUNK_OVERLAP, rerank=args.rerank)
                try:
                    await official.start()
                    result["ingest_seconds"]["official"] = await official.ingest(texts)
                    result["chunks"]["official"] = sorted(c.strip() for c in await official.chunks())
                    print(f"official: ingested in {result['ingest_seconds']['official']:.1f}s")
                    result["rows"] += await _ask_all("official", official, questions, args)
                    save_partial(args, result, "official")
                finally:
                    await official.stop()
    finally:
        provider.stop()
    return result


def args_json(args: argparse.Namespace) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}


def save_partial(args: argparse.Namespace, result: dict[str, Any], system: str) -> None:
    """After each system's answers, what the run holds so far goes to `--out` (marked partial; the run's end
    overwrites it), so a run stopped later keeps them: `--reuse-official` reads official's rows from it."""
    if not args.out:
        return
    out = {
        "args": args_json(args),
        "partial": True,
        "ingest_seconds": result["ingest_seconds"],
        "graph": result.get("graph"),
        "official_chunks": result.get("chunks", {}).get("official"),
        "rows": result["rows"],
    }
    written = Path(args.out)
    staged = written.with_name(written.name + ".partial")
    staged.write_text(json.dumps(out, indent=1))
    staged.replace(written)
    print(f"{system}: answers written to {written} (partial until the run ends)", flush=True)


def check_out_path(args: argparse.Namespace) -> None:
    """A run writes `--out` as it goes: it must not be the file `--reuse-official` reads."""
    if args.out and args.reuse_official and Path(args.out).resolve() == Path(args.reuse_official).resolve():
        raise SystemExit("--out must not be the --reuse-official file (the run writes --out as it goes)")


def official_rows(saved: dict[str, Any], ids: set[str], args: argparse.Namespace) -> list[dict]:
    """Official's rows of an earlier `--out` file for exactly these questions, modes and budgets; ValueError when
    any is missing."""
    rows = [
        r
        for r in saved["rows"]
        if r["system"] == "official" and r["id"] in ids and r["mode"] in args.modes and r["budget"] in args.budgets
    ]
    wanted = {(b, m, i) for b in args.budgets for m in args.modes for i in ids}
    missing = wanted - {(r["budget"], r["mode"], r["id"]) for r in rows}
    if missing:
        raise ValueError(f"the saved run lacks {len(missing)} official answers, e.g. {sorted(missing)[0]}")
    return rows


def reused_official(saved: dict[str, Any], questions: list[data.Question], args: argparse.Namespace) -> dict:
    """Official's rows, chunks and ingestion time from an earlier `--out` file, for exactly this run's questions,
    modes and budgets; ValueError when the file lacks any of them or used other embeddings."""
    if saved["args"].get("embeddings") != args.embeddings:
        raise ValueError(f"the saved run used {saved['args'].get('embeddings')} embeddings, not {args.embeddings}")
    if bool(saved["args"].get("rerank")) != args.rerank:
        raise ValueError(f"the saved run has rerank {bool(saved['args'].get('rerank'))}, this one {args.rerank}")
    return {
        "rows": official_rows(saved, {q.id for q in questions}, args),
        "chunks": saved.get("official_chunks"),
        "ingest_seconds": _seconds(saved.get("ingest_seconds", {}).get("official")),
    }


def _seconds(value: Any) -> float | None:
    """An ingestion time as saved, None when a file put something else there (files joined from two runs hold a
    list), so the report leaves it out instead of failing at the end of a run."""
    return float(value) if isinstance(value, int | float) else None


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options both real-text benches take: what to run, where the service's code and data come from."""
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--budgets", default=",".join(BUDGETS))
    parser.add_argument("--systems", default="service,official")
    parser.add_argument(
        "--embeddings",
        choices=("minilm", "hashed"),
        default="minilm",
        help="MiniLM (default), or the test fake's hashed bag of words (a quick run; retrieval by words only)",
    )
    parser.add_argument("--set", action="append", default=[], metavar="SETTING=VALUE", help="a service setting")
    parser.add_argument("--app-dir", default=None, help="run the service code of this checkout")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument(
        "--rerank",
        action="store_true",
        help="rerank both systems' chunks with the bench's MiniLM passage reranker (bench/realtext/rerank.py)",
    )
    parser.add_argument("--out", default=None, help="also write the tables' figures and every row as JSON")
    parser.add_argument(
        "--keep-data",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep the service's database in DIR; a later run on the same documents cut the same way skips ingestion",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=60, help="questions per type (stratified, fixed seed)")
    parser.add_argument("--all", action="store_true", help="all 2,062 questions")
    parser.add_argument("--seed", type=int, default=7)
    add_run_options(parser)
    parser.add_argument(
        "--reuse-official", type=Path, default=None, metavar="FILE", help="official's rows from an earlier --out"
    )
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="also the candidate-pool oracle: the best choice among the chunks the service's modes consider",
    )
    args = parser.parse_args()
    args.modes, args.budgets = args.modes.split(","), args.budgets.split(",")
    args.systems = args.systems.split(",")
    if args.reuse_official:
        args.systems = [s for s in args.systems if s != "official"]
    from bench.quality_bench import use_app_from

    check_out_path(args)
    use_app_from(args.app_dir)
    data.verify()
    texts = data.corpus()
    questions = data.stratified(data.questions(), None if args.all else args.sample, args.seed)
    print(f"corpus: {len(texts)} document(s), {sum(map(len, texts))} characters; questions: {len(questions)}")
    reused = (
        reused_official(json.loads(args.reuse_official.read_text()), questions, args) if args.reuse_official else None
    )
    result = asyncio.run(run(args, texts, questions))
    if reused:
        result["rows"] += reused["rows"]
        if reused["chunks"] is not None:
            result["chunks"]["official"] = reused["chunks"]
        if reused["ingest_seconds"] is not None:
            result["ingest_seconds"]["official"] = reused["ingest_seconds"]
    _show(result, args, questions)


def _headroom(result: dict[str, Any], questions: list[data.Question], args: argparse.Namespace) -> dict | None:
    """The whole-corpus ceiling and the answer-aware oracle per budget (bench/realtext/headroom.py), on the
    chunks of either system (identical when both ran)."""
    from app.providers.tokenizer import get_tokenizer
    from bench.realtext.headroom import Corpus, headroom

    chunks = result["chunks"].get("service") or result["chunks"].get("official")
    if not chunks:
        return None
    corpus = Corpus.of(chunks, get_tokenizer().count)
    return headroom([q.answer for q in questions], corpus, {b: BUDGETS[b] for b in args.budgets})


def _show(result: dict[str, Any], args: argparse.Namespace, questions: list[data.Question]) -> None:
    from bench.realtext.ceiling import summarise_pools
    from bench.realtext.data import QUESTION_TYPES
    from bench.realtext.report import ceiling_lines, headroom_lines, summarise, table

    chunks = result["chunks"]
    if len(chunks) == 2:
        same = len(set(chunks["service"]) & set(chunks["official"]))
        print(f"chunks: service {len(chunks['service'])}, official {len(chunks['official'])}, identical {same}")
    seconds = result["ingest_seconds"]
    print("ingestion wall time: " + ", ".join(f"{k} {v:.1f}s" for k, v in seconds.items()))
    summary = summarise(result["rows"])
    print(table(summary))
    limits = _headroom(result, questions, args)
    if limits:
        print(headroom_lines(limits))
    pools = summarise_pools(result["pools"], QUESTION_TYPES) if result.get("pools") else None
    if pools:
        print(ceiling_lines(pools, summary))
    if args.out:
        out = {
            "args": args_json(args),
            "ingest_seconds": seconds,
            "graph": result.get("graph"),
            "chunk_counts": {k: len(v) for k, v in chunks.items()},
            "official_chunks": chunks.get("official"),
            "summary": summary,
            "headroom": limits,
            "ceiling": pools,
            "pool_rows": result.get("pools"),
            "rows": result["rows"],
        }
        Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
