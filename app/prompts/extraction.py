"""Entity/relation extraction prompts (our own wording, official wire format).

Layout for provider prompt-prefix caching: the system message holds everything that is the same for
every chunk of a project (role, rules, format, types, language, worked examples); the user message is a
short task with the chunk text last, in a fenced block. Gleaning continues the same conversation.
"""

from __future__ import annotations

import re

TUPLE_DELIMITER = "<|#|>"
COMPLETION_DELIMITER = "<|COMPLETE|>"

Message = dict[str, str]

_D = TUPLE_DELIMITER

_SYSTEM = """You build knowledge graphs. You read a passage and write down the things it talks about \
(entities) and how those things are connected (relations), as plain-text records that a program parses.

How to choose entities
- Take every specific, nameable thing the passage says something about: people, groups, places, \
events, products, methods, documents, quantities that matter, ideas that carry meaning.
- name: the name as the passage gives it, in its most complete form. Keep one spelling for one thing \
throughout your answer. {case_rule}
- type: pick the closest type from this list: {types}. If none fits, write Other.
- description: one or more sentences saying what the passage states about the entity and what it \
does there. Use only facts from the passage. Write in the third person and name things instead of \
using pronouns such as "he", "it" or "this".

How to choose relations
- A relation links exactly two entities that the passage connects directly and meaningfully.
- Both ends must also appear as entity records.
- Relations have no direction: write each connected pair once, never again in reverse order.
- When one statement ties three or more entities together (a meeting, a contract, a joint paper), \
break it into pairs. Connect the central entity to each participant, or each participant to the event.
- keywords: a few short phrases, separated by commas, that name the kind of connection \
(for example: employment, funding, part of).
- description: why and how the two are connected, according to the passage.
- Put the most important relations first.

Output format (the program reads it line by line, so follow it exactly)
- One record per line. Fields are separated by the marker {d} and nothing else.
- Entity line, 4 fields: entity{d}<name>{d}<type>{d}<description>
- Relation line, 5 fields: relation{d}<source name>{d}<target name>{d}<keywords>{d}<description>
- Write all entity lines first, then all relation lines.
- Never write the marker {d} inside a field, never break a record over two lines, and never wrap \
records in quotes, brackets, lists, tables or code blocks.
- At most {max_entities} entities and {max_records} records in total.
- After the last record write {complete} on its own line. Write nothing else: no headings, no notes.

Language
- Write types, keywords and descriptions in {language}. Keep proper names in the language and \
script in which the passage writes them.

Worked examples (the passages and records below are illustrations only; never copy them into an answer)

Example 1, a story
Passage:
```text
At the harbour in Valdora, Captain Mirela Stan handed the sealed charter to Tomas Reyk, the young \
clerk of the Salt Guild. Reyk had waited three days for it. The charter gave the guild the right to \
tax every ship entering the bay.
```
Records:
entity{d}Mirela Stan{d}Person{d}Mirela Stan is a ship captain who hands the sealed charter to Tomas \
Reyk at the harbour in Valdora.
entity{d}Tomas Reyk{d}Person{d}Tomas Reyk is the young clerk of the Salt Guild who waited three days \
to receive the charter.
entity{d}Salt Guild{d}Organization{d}The Salt Guild is a guild that gains the right to tax every ship \
entering the bay through the charter.
entity{d}Valdora{d}Location{d}Valdora is a harbour town where the charter changes hands.
entity{d}Sealed Charter{d}Content{d}The sealed charter grants the Salt Guild the right to tax ships \
entering the bay.
relation{d}Mirela Stan{d}Tomas Reyk{d}handover, delivery{d}Mirela Stan hands the sealed charter to \
Tomas Reyk.
relation{d}Tomas Reyk{d}Salt Guild{d}membership, employment{d}Tomas Reyk works as a clerk of the Salt \
Guild.
relation{d}Sealed Charter{d}Salt Guild{d}taxation rights, grant{d}The sealed charter gives the Salt \
Guild the right to tax ships entering the bay.
relation{d}Sealed Charter{d}Valdora{d}location, handover{d}The sealed charter is handed over at the \
harbour in Valdora.
{complete}

Example 2, technical text with one statement about several parties
Passage:
```text
The Kestrel database engine stores its indexes as log-structured merge trees. Version 4.2, released \
by Northwind Labs together with the University of Oslo, cut write latency by 40 percent.
```
Records:
entity{d}Kestrel{d}Artifact{d}Kestrel is a database engine that stores its indexes as log-structured \
merge trees.
entity{d}Log-Structured Merge Tree{d}Method{d}The log-structured merge tree is the data structure \
Kestrel uses for its indexes.
entity{d}Kestrel 4.2{d}Artifact{d}Kestrel 4.2 is a version of Kestrel that cut write latency by 40 \
percent.
entity{d}Northwind Labs{d}Organization{d}Northwind Labs released Kestrel 4.2 together with the \
University of Oslo.
entity{d}University of Oslo{d}Organization{d}The University of Oslo released Kestrel 4.2 together \
with Northwind Labs.
relation{d}Kestrel{d}Log-Structured Merge Tree{d}index structure, storage design{d}Kestrel stores \
its indexes as log-structured merge trees.
relation{d}Kestrel 4.2{d}Kestrel{d}version, release{d}Kestrel 4.2 is a release of the Kestrel \
engine that cut write latency by 40 percent.
relation{d}Kestrel 4.2{d}Northwind Labs{d}release, development{d}Northwind Labs released Kestrel 4.2.
relation{d}Kestrel 4.2{d}University of Oslo{d}release, development{d}The University of Oslo released \
Kestrel 4.2.
relation{d}Northwind Labs{d}University of Oslo{d}collaboration{d}Northwind Labs and the University \
of Oslo released Kestrel 4.2 together.
{complete}

Example 3, a passage with nothing to extract
Passage:
```text
See the previous page.
```
Records:
{complete}"""

_USER = """Extract the entities and relations from the passage below, following the rules and the \
record format of the instructions. Answer in {language} with records only and finish with {complete}.

Passage:
{fence}text
{chunk}
{fence}"""

_GLEAN = """Read the passage again. Some entities or relations may be missing from your answer, or \
some of your records may be broken (wrong number of fields, missing fields, wrong markers). Write \
ONLY those missing or broken records, corrected, in the same format. Do not repeat records that were \
already correct. If nothing is missing, write only {complete}. Finish with {complete}."""

_CORRECTIVE = """Your answer could not be read: it contains no record in the required format. Answer again \
with records only, one per line, exactly like this:
entity{d}<name>{d}<type>{d}<description>
relation{d}<source name>{d}<target name>{d}<keywords>{d}<description>
No other text. Finish with {complete}. If the passage names nothing, write only {complete}."""

_BACKTICKS = re.compile(r"`{3,}")
# Runs of marker characters in the chunk ("<|#|>", "<|COMPLETE|>", "<|>"…) are shown to the model with
# look-alike characters, so a description quoting the text cannot smuggle a delimiter into the answer.
_MARKER_RUN = re.compile(r"[<>|#\\\uff1c\uff1e\uff5c]{2,}")
_LOOKALIKE = str.maketrans(
    {"<": "\u2039", ">": "\u203a", "|": "\u00a6", "\uff1c": "\u2039", "\uff1e": "\u203a", "\uff5c": "\u00a6"}
)


def neutralize_markers(text: str) -> str:
    def swap(match: re.Match[str]) -> str:
        run = match.group(0)
        marker = "|" in run or "\uff5c" in run or ("#" in run and any(c in run for c in "<>\uff1c\uff1e"))
        return run.translate(_LOOKALIKE) if marker else run

    return _MARKER_RUN.sub(swap, text)


def _fence(text: str) -> str:
    """A backtick fence longer than any backtick run inside the text, so the chunk cannot close it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=2)
    return "`" * max(3, longest + 1)


def _case_rule(language: str) -> str:
    if language.strip().lower() in {"chinese", "japanese", "korean", "thai", "中文", "日本語", "한국어"}:
        return ""
    return "Use title case for names written in a script with upper and lower case."


def system_prompt(entity_types: list[str], language: str, *, max_entities: int = 40, max_records: int = 100) -> str:
    types = ", ".join(entity_types) if entity_types else "Other"
    return _SYSTEM.format(
        d=_D,
        complete=COMPLETION_DELIMITER,
        types=types,
        language=language,
        case_rule=_case_rule(language),
        max_entities=max_entities,
        max_records=max_records,
    )


def extraction_messages(chunk: str, entity_types: list[str], language: str) -> list[Message]:
    chunk = neutralize_markers(chunk)
    user = _USER.format(language=language, complete=COMPLETION_DELIMITER, fence=_fence(chunk), chunk=chunk)
    return [
        {"role": "system", "content": system_prompt(entity_types, language)},
        {"role": "user", "content": user},
    ]


def gleaning_messages(first_messages: list[Message], first_answer: str) -> list[Message]:
    """The previous conversation, its answer, and a request for what was missed or malformed."""
    return [
        *first_messages,
        {"role": "assistant", "content": first_answer},
        {"role": "user", "content": _GLEAN.format(complete=COMPLETION_DELIMITER)},
    ]


def corrective_messages(first_messages: list[Message], unusable_answer: str) -> list[Message]:
    """The conversation again, after an answer without any usable record, with a short reminder of the format."""
    return [
        *first_messages,
        {"role": "assistant", "content": unusable_answer},
        {"role": "user", "content": _CORRECTIVE.format(d=_D, complete=COMPLETION_DELIMITER)},
    ]
