"""The streaming JSON value counter agrees with a parse, however the body is cut into pieces."""

from __future__ import annotations

import json
import random

from app.web.json_values import JsonValueCounter


def _structure(value: object) -> int:
    """Commas, brackets and braces a compact encoding of `value` has outside its strings."""
    if isinstance(value, list):
        return 1 + max(len(value) - 1, 0) + sum(_structure(v) for v in value)
    if isinstance(value, dict):
        return 1 + max(len(value) - 1, 0) + sum(_structure(v) for v in value.values())
    return 0


def _count(body: bytes, cuts: list[int], limit: int = 10**9) -> tuple[int, bool]:
    counter = JsonValueCounter(limit)
    ok, start = True, 0
    for cut in [*cuts, len(body)]:
        ok = counter.feed(body[start:cut]) and ok
        start = cut
    return counter.count, ok


TRICKY = ["a,b", "[{", "\\", '\\"', '"', "\\\\", 'x\\\\"y', '\\\\\\"', ",,,[[{{", "plain", "\u00e9\u4e2d", ""]


def test_counts_match_the_structure_for_any_cut():
    rng = random.Random(5)
    for _ in range(1000):
        value = {
            "messages": [
                {"role": rng.choice(TRICKY), "content": rng.choice(TRICKY) * rng.randint(0, 3)}
                for _ in range(rng.randint(0, 6))
            ],
            rng.choice(TRICKY): [rng.choice(TRICKY), 1, None, [], {}],
        }
        body = json.dumps(value, separators=(",", ":"), ensure_ascii=rng.random() < 0.5).encode()
        cuts = sorted(rng.sample(range(len(body) + 1), min(len(body) + 1, rng.randint(0, 40))))
        assert _count(body, cuts) == (_structure(value), True), (body, cuts)


def test_stops_past_the_limit_and_ignores_strings():
    many = json.dumps({"messages": [{"role": "user"}] * 1000}).encode()
    counter = JsonValueCounter(100)
    assert counter.feed(many) is False
    text = json.dumps({"text": ",[{" * 100_000}).encode()
    assert _count(text, [7, 8, 1000]) == (1, True)
