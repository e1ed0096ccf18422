"""People written by a short form of their given name, or family name first with a comma, or by a short surname
alone (pure): the one person of that family name they fit is found in either order; two people a document
relates, names of their own, clips too short and two fitting people stay apart."""

from __future__ import annotations

from itertools import permutations

from app.domain.absorption import absorptions
from app.domain.document_names import DocumentNames
from app.domain.name_matching import given_names_first, tokens
from app.domain.name_nicknames import clipped, nickname_pair
from app.domain.name_shapes import person_name
from app.domain.name_variants import confusable
from app.domain.resolution import Known, resolve


def doc_of(*names: str, related: tuple[tuple[str, str], ...] = ()) -> DocumentNames:
    doc = DocumentNames()
    for name in names:
        doc.add(name.casefold(), name, "person")
    doc.related |= {(a.casefold(), b.casefold()) for a, b in related}
    return doc


def target(name: str, *project: str) -> str:
    nearby = {p.casefold(): (p, "person") for p in project}
    known = Known(entity_types={k: "person" for k in nearby}, nearby=nearby)
    return resolve(doc_of(name), known, {}, "auto").target(name.casefold())


def test_a_given_name_clipped_to_its_first_or_last_letters_is_its_short_form():
    assert clipped("emeka", "chukwuemeka") and clipped("seun", "oluwaseun") and clipped("maxi", "maximilian")
    assert not clipped("wei", "zhiwei")  # three letters say too little
    assert not clipped("tunde", "yetunde")  # two letters dropped: another name
    assert not clipped("bella", "isabella") and not clipped("tina", "christina")  # census given names of their own
    assert not clipped("wilhelm", "wilhelmina") and not clipped("marv", "marvella")  # a feminine name made from it
    assert nickname_pair("bill", "william") and nickname_pair("william", "bill")  # the common diminutives
    assert not nickname_pair("alex", "alexander")  # a census name, and Alexandra's too


def test_the_confusable_guard_lets_a_given_name_and_its_short_form_through():
    assert not confusable("Emeka Okoye", "person", "Chukwuemeka Okoye", "person")
    assert not confusable("Bill Hale", "person", "William Hale", "person")
    assert confusable("Tunde Eze", "person", "Yetunde Eze", "person")


def test_a_short_form_joins_the_one_person_of_that_family_name_in_either_order():
    assert target("Emeka Okoye", "Chukwuemeka Okoye") == "chukwuemeka okoye"
    assert target("Chukwuemeka Okoye", "Emeka Okoye") == "emeka okoye"
    assert target("Emeka Okoye", "Chukwuemeka Okoye", "Chukwuemeka Adeyemi") == "chukwuemeka okoye"
    assert target("Seun Okoye", "Oluwaseun Okoye", "Adeseun Okoye") == "seun okoye"  # two fit: ambiguous
    assert target("Emeka Okoye", "Chukwuemeka Eze") == "emeka okoye"  # another family name


def test_a_document_relating_a_short_form_and_a_full_name_names_two_people():
    for names in permutations(["Bob Everly", "Robert Everly"]):
        related = doc_of(*names, related=(("Bob Everly", "Robert Everly"),))
        result = resolve(related, Known(), {}, "auto")
        assert {result.target(n.casefold()) for n in names} == {"bob everly", "robert everly"}
        plain = resolve(doc_of(*names), Known(), {}, "auto")  # not related: one person
        assert len({plain.target(n.casefold()) for n in names}) == 1
    known = Known(entity_types={"bob everly": "person"}, nearby={"bob everly": ("Bob Everly", "person")})
    doc = doc_of("Bob Everly", "Robert Everly", related=(("Robert Everly", "Bob Everly"),))
    assert resolve(doc, known, {}, "auto").target("robert everly") == "robert everly"
    doc = doc_of("Emeka Okoye", "Chukwuemeka Okoye", related=(("Emeka Okoye", "Chukwuemeka Okoye"),))
    result = resolve(doc, Known(), {}, "auto")
    assert result.target("emeka okoye") == "emeka okoye" and result.target("chukwuemeka okoye") == "chukwuemeka okoye"


def test_a_name_written_family_name_first_with_a_comma_is_read_given_names_first():
    assert given_names_first("Kariuki, A. K.") == "A. K. Kariuki" and given_names_first("Zhou, Meilin") == "Meilin Zhou"
    assert given_names_first("Hale, Jr.") == "Hale, Jr." and given_names_first("Hale, John, Jr.") == "Hale, John, Jr."
    assert tokens("Kulkarni, S. E.", "person") == ["s", "e", "kulkarni"]
    assert target("Kariuki, A. K.", "Amani K. Kariuki") == "amani k. kariuki"
    assert target("Kariuki, A. K.", "Amani K. Kariuki", "Asha K. Kariuki") == "kariuki, a. k."  # two fit
    full = {"amani k. kariuki": ("Amani K. Kariuki", "person")}
    (absorbed,) = absorptions(full, {"kariuki, a. k.": ("Kariuki, A. K.", "person")}, set())  # the other order
    assert absorbed.target == "amani k. kariuki"


def test_a_short_surname_alone_of_a_person_fits_the_one_person_of_that_name():
    assert target("Hu", "Meilin Hu") == "meilin hu" and target("Eze", "Folake Eze") == "folake eze"
    assert target("Hu", "Meilin Hu", "Jun Hu") == "hu"  # two people of that surname
    (absorbed,) = absorptions({"folake eze": ("Folake Eze", "person")}, {"eze": ("Eze", "person")}, set())
    assert absorbed.target == "folake eze"


def test_a_capital_of_any_alphabet_starts_a_name():
    assert person_name("Østergaard") and person_name("Jürgen Østergaard") and person_name("Élodie Marchand")
    assert target("Østergaard", "Jürgen Østergaard") == "jürgen østergaard"
    assert not person_name("østergaard")
