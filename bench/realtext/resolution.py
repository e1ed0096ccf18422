"""Entity resolution on real text (issue 33): GraphRAG-Bench Medical, extracted offline by the real-text
bench's spaCy fake (bench/realtext/provider.py), ingested by the service with ENTITY_RESOLUTION=auto and off.

    .venv/bin/python -m bench.realtext.resolution collect [--embeddings hashed|minilm] [--out raw.json]
    .venv/bin/python -m bench.realtext.resolution sample  --raw raw.json [--seed 33]   # (re)writes the fixture
    .venv/bin/python -m bench.realtext.resolution report                                 # figures of the fixture

`collect` (needs the `bench` extra) ingests the corpus twice and keeps: the automatic merges (the ledger,
GET /entities/merges, auto run), the duplicate suggestions (GET /entities/duplicates: the pairs resolution
considered and did not apply, and same-type entities with close embeddings) of both runs, and every entity
of the off run (name, type, description), which shows each merged name as extracted. `sample` draws 100
pairs with a fixed seed (every automatic merge when there are at most MERGES_IN_SAMPLE, the rest from the
candidate pairs not merged) into bench/data/resolution_pairs_medical.json, keeping the hand labels already
there for pairs drawn again (a new pair gets label null until labelled). `report` prints the pairs
considered, the merges made, the precision of automatic merges on the labelled sample and the recall (the
share of the labelled same-entity pairs the service merged); the test suite checks the fixture's figures
are these (tests/bench/test_resolution_fixture.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "resolution_pairs_medical.json"
SAMPLE_SIZE = 100
MERGES_IN_SAMPLE = 60  # every automatic merge is labelled when there are at most this many
LABELS = ("same", "different", "unsure")
DESCRIPTION_CHARS = 200


def one_line(text: str) -> str:
    """The first fragment of a description (the service joins fragments with <SEP>), on one line, cut."""
    line = " ".join(text.split("<SEP>")[0].split())
    return line if len(line) <= DESCRIPTION_CHARS else line[: DESCRIPTION_CHARS - 1].rstrip() + "…"


def pair_id(a: str, b: str) -> str:
    x, y = sorted((a.casefold(), b.casefold()))
    return f"{x} | {y}"


# --- collect -------------------------------------------------------------------------------------------


async def _pages(client: Any, path: str, field: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        response = await client.get(path, params={"limit": 1000, "offset": len(out)})
        assert response.status_code == 200, response.text
        body = response.json()
        out += body[field]
        if not body[field] or len(out) >= body["total"]:
            return out


async def _one_run(provider_url: str, mode: str, texts: list[str]) -> dict[str, Any]:
    from sqlalchemy import text

    from bench.realtext.__main__ import CHUNK_OVERLAP, CHUNK_SIZE
    from bench.realtext.service_side import service

    settings: dict[str, Any] = {"chunk_size": CHUNK_SIZE, "chunk_overlap_size": CHUNK_OVERLAP}
    settings |= {"embedding_timeout": 600, "llm_timeout": 600, "entity_resolution": mode}
    async with service(provider_url, settings) as svc:
        seconds = await svc.ingest(texts)
        merges = await _pages(svc.client, "/entities/merges", "entries") if mode != "off" else []
        duplicates = await _pages(svc.client, "/entities/duplicates", "pairs")
        async with svc.app.state.container.db.transaction() as conn:
            rows = (
                await conn.execute(
                    text("SELECT name, entity_type, description FROM entities WHERE project_id = 'default'")
                )
            ).all()
    entities = {r[0]: {"type": r[1], "description": one_line(r[2] or "")} for r in rows}
    print(
        f"{mode}: ingested in {seconds:.1f}s, {len(entities)} entities, {len(merges)} ledger entries, "
        f"{len(duplicates)} duplicate pairs listed",
        flush=True,
    )
    return {"seconds": seconds, "merges": merges, "duplicates": duplicates, "entities": entities}


async def collect(embeddings: str, cache_dir: Path) -> dict[str, Any]:
    from bench.realtext import data
    from bench.realtext.__main__ import CHUNK_OVERLAP, CHUNK_SIZE
    from bench.realtext.provider import ProviderProcess

    data.verify()
    texts = data.corpus()
    provider = ProviderProcess(cache_dir, CHUNK_SIZE, CHUNK_OVERLAP, embeddings)
    try:
        return {
            "embeddings": embeddings,
            "runs": {mode: await _one_run(provider.url, mode, texts) for mode in ("auto", "off")},
        }
    finally:
        provider.stop()


# --- sample ----------------------------------------------------------------------------------------------


def _side(name: str, entities: dict[str, dict[str, str]]) -> dict[str, str]:
    by_key = {k.casefold(): v for k, v in entities.items()}
    found = entities.get(name) or by_key.get(name.casefold()) or {"type": "?", "description": ""}
    return {"name": name, "type": found["type"], "description": one_line(found["description"])}


def pairs_of(raw: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(automatic merges, candidate pairs not merged), each by pair_id, with both sides as the off run holds
    them (the name as extracted, its type and description)."""
    off = raw["runs"]["off"]["entities"]
    merged: dict[str, dict[str, Any]] = {}
    for entry in raw["runs"]["auto"]["merges"]:
        for name in entry["absorbed"]:
            if name.casefold() == entry["entity"].casefold():
                continue  # a spelling variant of the same key (case only): not a pair
            merged.setdefault(
                pair_id(name, entry["entity"]),
                {
                    "a": _side(name, off),
                    "b": _side(entry["entity"], off),
                    "decision": "merged",
                    "rule": entry["rule"],
                    "evidence": entry["evidence"],
                },
            )
    candidates: dict[str, dict[str, Any]] = {}
    for mode in ("auto", "off"):
        for p in raw["runs"][mode]["duplicates"]:
            key = pair_id(p["entity_a"], p["entity_b"])
            if key in merged or key in candidates:
                continue
            candidates[key] = {
                "a": _side(p["entity_a"], off),
                "b": _side(p["entity_b"], off),
                "decision": "not merged",
                "rule": None,
                "evidence": "; ".join(p["evidence"][:2]) + f" (found by {', '.join(p['found_by'])}, {mode} run)",
            }
    return merged, candidates


def draw(raw: dict[str, Any], seed: int, old: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    merged, candidates = pairs_of(raw)
    rng = random.Random(seed)
    merge_ids = sorted(merged)
    if len(merge_ids) > MERGES_IN_SAMPLE:
        merge_ids = sorted(rng.sample(merge_ids, MERGES_IN_SAMPLE))
    rest = sorted(candidates)
    chosen = merge_ids + sorted(rng.sample(rest, min(len(rest), SAMPLE_SIZE - len(merge_ids))))
    out = []
    for pid in chosen:
        item = {"id": pid, **(merged.get(pid) or candidates[pid])}
        previous = old.get(pid, {})
        item["label"] = previous.get("label")
        item["reason"] = previous.get("reason", "")
        out.append(item)
    return out


# --- report ----------------------------------------------------------------------------------------------


KINDS = (  # the resolution rule behind a merge, told by its ledger evidence (app/domain/resolution.py)
    ("(root)", "root alone (cross_document.lone_word_candidates)"),
    ("(partial)", "surname alone (cross_document.lone_word_candidates)"),
    ("alone in a document naming", "partial name in the document (resolution._partial_name)"),
    ("the document defines", "acronym defined in the text (resolution._defined_acronym)"),
    ("are the initials of", "acronym by initials (resolution._initials)"),
    ("once normalised", "same match key (name_matching.match_key)"),
    ("(similarity)", "near spelling (cross_document.near_spellings)"),
    ("(spelling)", "spelling variant: joined, hyphenated, plural (cross_document)"),
)


def rule_kind(evidence: str) -> str:
    return next((kind for marker, kind in KINDS if marker in evidence), "other")


def figures(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Precision of automatic merges and recall on the labelled same-entity pairs ("unsure" counts in neither)."""
    merged = [p for p in pairs if p["decision"] == "merged" and p["label"] in ("same", "different")]
    same = [p for p in pairs if p["label"] == "same"]
    right = sum(p["label"] == "same" for p in merged)
    return {
        "labelled": sum(p["label"] in LABELS for p in pairs),
        "merges_labelled": len(merged),
        "merges_right": right,
        "precision": round(right / len(merged), 4) if merged else None,
        "same_pairs": len(same),
        "same_merged": sum(p["decision"] == "merged" for p in same),
        "recall": round(sum(p["decision"] == "merged" for p in same) / len(same), 4) if same else None,
        "unsure": sum(p["label"] == "unsure" for p in pairs),
        "merges_by_kind": {  # kind → [labelled same, labelled different, unsure]
            kind: [
                sum(
                    p["label"] == label for p in pairs if p["decision"] == "merged" and rule_kind(p["evidence"]) == kind
                )
                for label in LABELS
            ]
            for kind in sorted({rule_kind(p["evidence"]) for p in pairs if p["decision"] == "merged"})
        },
    }


def counts(raw: dict[str, Any]) -> dict[str, Any]:
    merged, candidates = pairs_of(raw)
    runs = raw["runs"]
    return {
        "entities_off": len(runs["off"]["entities"]),
        "entities_auto": len(runs["auto"]["entities"]),
        "ledger_entries": len(runs["auto"]["merges"]),
        "merged_pairs": len(merged),
        "candidate_pairs_not_merged": len(candidates),
        "pairs_considered": len(merged) + len(candidates),
        "duplicates_listed_auto": len(runs["auto"]["duplicates"]),
        "duplicates_listed_off": len(runs["off"]["duplicates"]),
        "merges_by_rule": _by_rule(runs["auto"]["merges"]),
        "ingest_seconds": {m: round(r["seconds"], 1) for m, r in runs.items()},
        "embeddings": raw["embeddings"],
    }


def _by_rule(entries: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for entry in entries:
        out[entry["rule"]] = out.get(entry["rule"], 0) + len(entry["absorbed"])
    return dict(sorted(out.items()))


def show(fixture: dict[str, Any]) -> None:
    c, f = fixture["counts"], figures(fixture["pairs"])
    print(f"entities: off {c['entities_off']}, auto {c['entities_auto']} ({c['embeddings']} embeddings)")
    print(
        f"pairs considered: {c['pairs_considered']} (merged {c['merged_pairs']}, not merged "
        f"{c['candidate_pairs_not_merged']}); merges made: {c['merged_pairs']} by rule {c['merges_by_rule']}"
    )
    print(f"labelled sample: {f['labelled']} pairs ({f['unsure']} unsure)")
    print(f"precision of automatic merges: {f['merges_right']}/{f['merges_labelled']} = {f['precision']}")
    print(f"recall on labelled same-entity pairs: {f['same_merged']}/{f['same_pairs']} = {f['recall']}")
    print("automatic merges by rule: same / different / unsure")
    for kind, (same, different, unsure) in f["merges_by_kind"].items():
        print(f"  {kind}: {same} / {different} / {unsure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("collect", "sample", "report"))
    parser.add_argument("--embeddings", choices=("hashed", "minilm"), default="hashed")
    parser.add_argument("--out", type=Path, default=Path("resolution_raw.json"))
    parser.add_argument("--raw", type=Path, default=Path("resolution_raw.json"))
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    args = parser.parse_args()
    if args.step == "collect":
        from bench.realtext.cache import DEFAULT_DIR

        raw = asyncio.run(collect(args.embeddings, DEFAULT_DIR))
        args.out.write_text(json.dumps(raw, indent=1))
        print(json.dumps(counts(raw), indent=1))
    elif args.step == "sample":
        raw = json.loads(args.raw.read_text())
        old = json.loads(args.fixture.read_text()) if args.fixture.exists() else {"pairs": []}
        pairs = draw(raw, args.seed, {p["id"]: p for p in old["pairs"]})
        fixture = {"seed": args.seed, "counts": counts(raw), "figures": figures(pairs), "pairs": pairs}
        args.fixture.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        show(fixture)
    else:
        show(json.loads(args.fixture.read_text()))


if __name__ == "__main__":
    main()
