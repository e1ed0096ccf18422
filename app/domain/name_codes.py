"""A code written in parentheses after a name whose letters it does not take ("Comorian Franc (KMF)", "Swiss Franc
(CHF)"; app/domain/name_matching.py::acronym_definitions reads them): which words before it are the name, and
when the resolver may take the code for the name's."""

from __future__ import annotations

from app.domain.name_matching import PERSON_TYPES, specific_type, spelled_out
from app.domain.name_spellings import PLACE_TYPES


def expansion_forms(expansion: str, acronym: str) -> list[str]:
    """The names an acronym's expansion may be, longest first: itself when it spells the acronym out, else it and
    its shorter tails (a code's name may follow other capitalised words: "Importers Swiss Franc (CHF)")."""
    words = expansion.split()
    return [expansion] if spelled_out(expansion, acronym) else [" ".join(words[i:]) for i in range(len(words))]


_NOT_BY_APPOSITION = PLACE_TYPES | PERSON_TYPES | {"organization", "organisation", "company", "institution"}


def acronym_fits(expansion: str, acronym: str, acronym_type: str, name_type: str) -> bool:
    """The acronym may stand for the name its expansion reached: it spells the expansion out, or it is a code after
    it ("Comorian Franc (KMF)") and both are of one specific type that is not a person's, a place's or an
    organisation's (name_matching.py::_apposed_code)."""
    kind = specific_type(acronym_type)
    if spelled_out(expansion, acronym):
        return True
    return kind is not None and kind == specific_type(name_type) and kind not in _NOT_BY_APPOSITION
