"""Tokens of the two extraction formats (EXTRACTION_FORMAT=records|json) on the same input.

    .venv/bin/python -m bench.format_bench                      # offline: prompts and equivalent answers
    .venv/bin/python -m bench.format_bench --url http://127.0.0.1:8080/v1 --model NAME   # a real endpoint

Offline, each passage's answer is the same set of records written both ways (the fake LLM's deterministic
extraction, then as JSON), so the difference is the format's alone; tokens are counted with the service's
tokenizer (TOKENIZER_ENCODING). With --url, both prompts go to the endpoint (JSON with response_format
json_schema) and the provider's reported usage and the records parsed from each answer are printed too.
"""

from __future__ import annotations

import argparse
import json
import time

import httpx

from app.core.config import DEFAULT_ENTITY_TYPES
from app.domain.extraction_parser import parse_extraction
from app.prompts import structured
from app.prompts.extraction import extraction_messages
from app.providers.tokenizer import Tokenizer
from tests.support.fakes.openai_server import default_extract, records_to_json

PASSAGES = [
    "Ada Lindqvist is a marine biologist at the Norrsund Institute in Bergen. In 2019 she led the Coral Atlas "
    "project, which the Halvorsen Foundation funded. Her colleague Tomas Berg built Skarv, the underwater drone "
    "that photographed the reefs for the Coral Atlas.",
    "The Kestrel database engine stores its indexes as log-structured merge trees. Version 4.2, released by "
    "Northwind Labs together with the University of Oslo, cut write latency by 40 percent. Maria Holm led the "
    "release at Northwind Labs, and Jonas Weber of the University of Oslo designed the new compaction scheme. "
    "The release was presented at the VLDB Conference in Vancouver.",
    "In March 1885 the steamship Albatross left Liverpool for Buenos Aires under Captain Henry Doyle. Off the "
    "coast of Portugal a storm damaged her rudder, and the crew sheltered in Lisbon for three weeks. The "
    "Lloyd's agent Carlos Mendes arranged repairs at the Tagus Dockyard, and the Albatross reached Buenos Aires "
    "in May, where the Anglo-Argentine Trading Company received her cargo of textiles.",
]


def _tokens(tokenizer: Tokenizer, messages: list[dict]) -> int:
    return sum(tokenizer.count(m["content"]) for m in messages)


def offline(tokenizer: Tokenizer) -> None:
    print(f"{'passage':>7} {'format':>7} {'system':>7} {'user':>6} {'answer':>7} {'records':>7}")
    totals = {"records": [0, 0], "json": [0, 0]}
    for index, passage in enumerate(PASSAGES, 1):
        records_messages = extraction_messages(passage, DEFAULT_ENTITY_TYPES, "English")
        json_messages = structured.json_extraction_messages(passage, DEFAULT_ENTITY_TYPES, "English")
        records_answer = default_extract(records_messages)
        json_answer = records_to_json(records_answer)
        for name, messages, answer in (
            ("records", records_messages, records_answer),
            ("json", json_messages, json_answer),
        ):
            parsed = parse_extraction(answer, "c", None, 500, DEFAULT_ENTITY_TYPES)
            answer_tokens = tokenizer.count(answer)
            totals[name][0] += _tokens(tokenizer, messages)
            totals[name][1] += answer_tokens
            print(
                f"{index:>7} {name:>7} {tokenizer.count(messages[0]['content']):>7} "
                f"{tokenizer.count(messages[1]['content']):>6} {answer_tokens:>7} {parsed.recovered:>7}"
            )
    (rp, ra), (jp, ja) = totals["records"], totals["json"]
    print(f"\ntotal prompt tokens: records {rp}, json {jp} ({(jp - rp) / rp:+.1%})")
    print(f"total answer tokens: records {ra}, json {ja} ({(ja - ra) / ra:+.1%})")


def online(url: str, model: str, max_tokens: int) -> None:
    schema = {
        "type": "json_schema",
        "json_schema": {"name": structured.EXTRACTION_SCHEMA_NAME, "schema": structured.EXTRACTION_SCHEMA},
    }
    print(f"\n{url} {model}")
    with httpx.Client(timeout=1800) as client:
        for index, passage in enumerate(PASSAGES, 1):
            for name in ("records", "json"):
                build = structured.json_extraction_messages if name == "json" else extraction_messages
                body = {
                    "model": model,
                    "messages": build(passage, DEFAULT_ENTITY_TYPES, "English"),
                    "max_tokens": max_tokens,
                    "temperature": 0,
                }
                if name == "json":
                    body["response_format"] = schema
                started = time.perf_counter()
                response = client.post(url.rstrip("/") + "/chat/completions", json=body)
                seconds = time.perf_counter() - started
                if response.status_code != 200:
                    print(f"{index} {name}: HTTP {response.status_code} {response.text[:160]!r}")
                    continue
                data = response.json()
                answer = data["choices"][0]["message"]["content"] or ""
                parsed = parse_extraction(answer, "c", None, 500, DEFAULT_ENTITY_TYPES)
                print(
                    f"{index} {name:>7}: {json.dumps(data.get('usage'))} {seconds:.1f}s, finish "
                    f"{data['choices'][0].get('finish_reason')}, records {parsed.recovered}, "
                    f"unparseable {parsed.malformed}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="an OpenAI-compatible base URL to measure real usage on")
    parser.add_argument("--model", default="model")
    parser.add_argument("--max-tokens", type=int, default=1000)
    parser.add_argument("--encoding", default="o200k_base")
    args = parser.parse_args()
    offline(Tokenizer(args.encoding))
    if args.url:
        online(args.url, args.model, args.max_tokens)


if __name__ == "__main__":
    main()
