"""Where the service loses gold passages that official LightRAG returns, from a `--diagnose` run's `--out` file.

    .venv/bin/python -m bench.multihop.diagnose RUN.json [--official OTHER_RUN.json] [--examples 3]

For each budget and mode: the questions only one system answers with every gold passage, and each gold
passage official returned but the service did not, by reason, read from the service's wide ranking (the same
search with room for 100 chunks): `not a candidate` (no path of the service reaches it), `ranked out` (it
ranks beyond chunk_top_k), `no room` (it ranks within chunk_top_k but the token room or the near-duplicate
filter dropped it). `--official` takes official's rows from another run of the same dataset and sample (the
service-only run then needs no official side); the side-by-side table of the merged rows is printed first.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

REASONS = ("not a candidate", "ranked out", "no room")


def reason(passage: int, wide: list[int], chunk_top_k: int) -> str:
    if passage not in wide:
        return REASONS[0]
    return REASONS[1] if wide.index(passage) >= chunk_top_k else REASONS[2]


def losses(rows: list[dict[str, Any]], chunk_top_k: dict[str, int]) -> dict[tuple[str, str], dict[str, Any]]:
    """{(budget, mode): {lost, won, reasons: Counter, ranks: [wide rank or None], examples: [...]}}."""
    by_key: dict[tuple[str, str, str], dict[str, dict]] = {}
    for r in rows:
        by_key.setdefault((r["budget"], r["mode"], r["id"]), {})[r["system"]] = r
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for (budget, mode, qid), pair in by_key.items():
        service, official = pair.get("service"), pair.get("official")
        if service is None or official is None or "wide" not in service:
            continue
        entry = out.setdefault((budget, mode), {"lost": 0, "won": 0, "reasons": Counter(), "ranks": [], "examples": []})
        entry["lost"] += official["all_evidence"] and not service["all_evidence"]
        entry["won"] += service["all_evidence"] and not official["all_evidence"]
        for passage in service["gold"]:
            if passage in official["found"] and passage not in service["found"]:
                why = reason(passage, service["wide"], chunk_top_k[budget])
                entry["reasons"][why] += 1
                entry["ranks"].append(service["wide"].index(passage) if passage in service["wide"] else None)
                entry["examples"].append((qid, passage, why, official["found"].index(passage)))
    return out


def report(result: dict[str, Any], examples: int) -> str:
    from bench.realtext.__main__ import BUDGETS

    found = losses(result["rows"], {b: v["chunk_top_k"] for b, v in BUDGETS.items()})
    lines = [f"{'budget':8}{'mode':8}{'lost':>5}{'won':>5}  " + "".join(f"{r:>17}" for r in REASONS) + "  wide ranks"]
    for (budget, mode), e in sorted(found.items()):
        ranks = sorted(r for r in e["ranks"] if r is not None)
        lines.append(
            f"{budget:8}{mode:8}{e['lost']:5d}{e['won']:5d}  "
            + "".join(f"{e['reasons'][r]:17d}" for r in REASONS)
            + f"  {ranks[:12]}"
        )
        for qid, passage, why, official_rank in e["examples"][:examples]:
            lines.append(f"{'':16}{qid} passage {passage}: {why} (official's chunk #{official_rank + 1})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path)
    parser.add_argument("--official", type=Path, default=None, help="official's rows from this run instead")
    parser.add_argument("--examples", type=int, default=0)
    args = parser.parse_args()
    result = json.loads(args.run.read_text())
    if args.official:
        other = json.loads(args.official.read_text())
        if (other["args"]["dataset"], other["args"]["sample"]) != (result["args"]["dataset"], result["args"]["sample"]):
            raise SystemExit("the two runs differ in dataset or sample")
        result["rows"] = [r for r in result["rows"] if r["system"] != "official"]
        result["rows"] += [r for r in other["rows"] if r["system"] == "official"]
    from bench.multihop.scoring import summarise, table

    print(table(summarise(result["rows"])))
    print()
    print(report(result, args.examples))


if __name__ == "__main__":
    main()
