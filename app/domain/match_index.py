"""The match-key index rebuilt from stored names (pure), for when the match-key rules change.

Resolution records `index_key(match_key(name, type))` → entity for the names it decides (app/domain/resolution.py),
so a later document writing another form of the name finds the entity. A change of the rules (possessives, letters
with a stroke, St./Mt., ordinals, years, family name first, diminutives, Roman numerals) gives stored names other
keys than the ones indexed: `missing_rows` lists, for each entity and each alias of one, the entry under today's
key, for the caller to add where no entry holds that key yet. Entries under older keys stay: nothing computes
them any more, and an entity reached through one is still the entity that name was resolved to.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.domain.aliases import SCOPE_SEPARATOR
from app.domain.name_matching import match_key
from app.domain.resolution import MATCH_INDEX, index_key


def missing_rows(
    entities: Iterable[tuple[str, str, str, str]], aliases: Iterable[tuple[str, str, str, str, str]]
) -> list[tuple[str, str, str, str]]:
    """(project, index key, entity key, display name) to add. `entities`: (project, key, name, type); `aliases`:
    (project, alias key, alias name, entity key, entity type) — scoped aliases and index entries are skipped (they
    hold in one document, or are what is rebuilt). An entity's own entry wins over an alias's, and the first
    listed wins among names sharing a key (as the first decided did at ingest)."""
    out: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    for project, key, name, etype in entities:
        match = match_key(name, etype)
        if match != key:
            out.setdefault((project, index_key(match)), (project, index_key(match), key, name))
    for project, alias_key, alias_name, key, etype in aliases:
        if alias_key.startswith(MATCH_INDEX) or SCOPE_SEPARATOR in alias_key:
            continue
        match = match_key(alias_name, etype)
        if match != key:
            out.setdefault((project, index_key(match)), (project, index_key(match), key, alias_name))
    return list(out.values())
