"""bench/query_ab.py: two trees (here the same checkout twice) asked in turn by their own worker processes give
figures for every round, mode and tree, and the same contexts."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import asyncpg

import bench
from app.providers.tokenizer import get_tokenizer
from bench.big_corpus_bench import questions
from bench.big_corpus_world import Vectors, build_world, load
from bench.query_ab import WARMUP, interleaved
from tests.support.database import TEST_DIM

CHECKOUT = Path(bench.__file__).resolve().parents[1]


async def test_two_trees_answer_every_round_and_one_code_gives_the_same_contexts(database_url: str):
    world = build_world(0.05, chunk_tokens=300, count=get_tokenizer().count)
    conn = await asyncpg.connect(database_url)
    try:
        await load(conn, world, "bench", Vectors(TEST_DIM))
    finally:
        await conn.close()
    rounds, per_round, modes = 2, 2, ["local", "naive"]
    asked = questions(world, rounds * per_round + WARMUP)
    setup = {"dim": TEST_DIM, "modes": modes, "questions": [q.model_dump() for q in asked[-WARMUP:] + asked[:-WARMUP]]}
    args = argparse.Namespace(rounds=rounds, askings=2, questions=per_round, modes=modes)
    url = database_url.replace("postgresql://", "postgresql+asyncpg://")

    figures, hashes = await asyncio.to_thread(interleaved, url, {"a": CHECKOUT, "b": CHECKOUT}, setup, args)

    assert len(figures) == rounds
    for round_figures in figures:
        for mode in modes:
            for label in ("a", "b"):
                cell = round_figures[mode][label]
                assert len(cell["wall"]) == len(cell["cpu"]) == per_round * 2  # both askings
                assert all(ms > 0 for ms in cell["wall"] + cell["cpu"])
                assert cell["p95"] in cell["wall"] and cell["cpu_p95"] in cell["cpu"]
    assert hashes["a"] == hashes["b"]
    assert all(len(hashes["a"][mode]) == rounds * per_round for mode in modes)
    assert len(set(hashes["a"]["local"])) == rounds * per_round  # every round asked its own questions
