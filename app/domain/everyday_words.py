"""Everyday English words (pure): a capitalised one is still a common noun or adjective, not a name.

Extractors capitalise and type such words as names ("Kidney" a person, "Health" an organisation, "Eastern"
the start of "Eastern Cooperative Oncology Group"); resolution rules made for names must not read them as a
proper root or a person's surname or first name. Not a dictionary: the frequent nouns and adjectives that
head or modify compound terms, in general and technical (medical, legal, business) text.
"""

from __future__ import annotations

_WORDS = """
able about acute adult advanced african age agency air american annual area arm art asian association back bad
basic best big bile birth blood blue board body bone book brain breast british business call cancer candidate
care case cell center central centre chain change chest child children chronic city class clinical club common
community company control council country court cross current data day death design diagnostic diet disease
doctor drug early east eastern economic education end energy english european eye face family far fast federal
fever final financial fire first food foot force free front full future general global good great group guide
hair head health heart heavy help high home hospital house human image income information institute internal
international iron joint key kidney land large law lead left leg level life light line liver local low lung
lymph main major man market medical medicine middle mind model modern money mouth muscle national natural
nausea neck network new night node normal north northern nurse office oil old open oral order organ
organization pain paper part party patient patients peace people personal physical plan plant point police
policy poor primary private program project public quality race radiation rapid rare real red regional
research rest right risk river road royal rule safety school science sea second security senior service side
simple skin small social society south southern special spine spring stage standard state stem stomach strong
study support surgery system table team test therapy third throat time tissue total trade treatment tumor
union united unit upper urban value vomiting war water weight west western whole wind woman women word work
world
"""

EVERYDAY_WORDS = frozenset(_WORDS.split())


def is_everyday_word(word: str) -> bool:
    """`word` (any case, a plural "s" allowed) is an everyday English word."""
    folded = word.casefold()
    return folded in EVERYDAY_WORDS or (folded.endswith("s") and folded[:-1] in EVERYDAY_WORDS)
