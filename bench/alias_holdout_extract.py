"""Extract the real alias data of the holdout alias world (bench/alias_world_holdout.py) from PyPI packages into
bench/data/alias_holdout/aliases.json, once, so the bench needs neither the packages nor the network.

    python -m venv /tmp/holdout-venv && /tmp/holdout-venv/bin/pip install pycountry==26.2.16 nicknames==1.0.1 us==4.0.0
    /tmp/holdout-venv/bin/python -m bench.alias_holdout_extract   # from the repository root

Fields are copied as the packages give them (ISO 3166-1 names, official and common names and alpha-3 codes,
ISO 3166-3 withdrawn names, ISO 4217 currency names and codes, US states with postal and AP abbreviations,
English given names with their nicknames); which of them make an entity's forms is the world's business.
The versions and checksums are recorded in bench/data/alias_holdout/SOURCE.md.
"""

from __future__ import annotations

import csv
import hashlib
import json
from importlib.metadata import version
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "alias_holdout" / "aliases.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extract() -> dict:
    import nicknames
    import pycountry
    import us

    countries = [
        {k: getattr(c, k) for k in ("alpha_2", "alpha_3", "name", "official_name", "common_name") if hasattr(c, k)}
        for c in pycountry.countries
    ]
    withdrawn = [
        {k: getattr(c, k) for k in ("alpha_4", "name", "comment") if hasattr(c, k)}
        for c in pycountry.historic_countries
    ]
    currencies = [{"alpha_3": c.alpha_3, "name": c.name} for c in pycountry.currencies]
    states = [{"name": s.name, "postal": s.abbr, "ap": s.ap_abbr} for s in us.states.STATES]
    names_csv = Path(nicknames.__file__).parent / "names.csv"
    nicks: dict[str, list[str]] = {}
    with names_csv.open(newline="") as f:
        for row in csv.DictReader(f):
            if row["relationship"] == "has_nickname":
                nicks.setdefault(row["name1"], []).append(row["name2"])
    db = Path(pycountry.__file__).parent / "databases"
    sources = {
        "pycountry": {"version": version("pycountry"), "licence": "LGPL-2.1-only", "files": {}},
        "nicknames": {"version": version("nicknames"), "licence": "Apache-2.0", "files": {}},
        "us": {"version": version("us"), "licence": "BSD-3-Clause (Copyright (c) 2014, Sunlight Labs)", "files": {}},
    }
    for name in ("iso3166-1.json", "iso3166-3.json", "iso4217.json"):
        sources["pycountry"]["files"][f"pycountry/databases/{name}"] = _sha256(db / name)
    sources["nicknames"]["files"]["nicknames/names.csv"] = _sha256(names_csv)
    sources["us"]["files"]["us/states.py"] = _sha256(Path(us.states.__file__))
    return {
        "sources": sources,
        "countries": sorted(countries, key=lambda c: c["alpha_3"]),
        "withdrawn_countries": sorted(withdrawn, key=lambda c: c["alpha_4"]),
        "currencies": sorted(currencies, key=lambda c: c["alpha_3"]),
        "us_states": sorted(states, key=lambda s: s["postal"]),
        "nicknames": {k: sorted(set(v)) for k, v in sorted(nicks.items())},
    }


if __name__ == "__main__":
    OUT.write_text(json.dumps(extract(), indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(OUT, _sha256(OUT))
