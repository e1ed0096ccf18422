"""Resolution decided before the merge's key locks (services/ingest/name_resolution.py::anticipate) and only
checked under them: reused when the names' state is as it was read, taken again when another document
changed it in between, with the outcome of a decision taken under the locks either way. And the locks guessed
from what the process has seen (services/ingest/lock_guess.py): one reading, under them, when they cover what
it names; when they do not, that reading is the one decided on before the locks it names."""

from __future__ import annotations

from sqlalchemy import select

from app.db.tables import entity_aliases, entity_merge_ledger
from app.domain.cross_document import Ranges
from app.services.ingest.lock_guess import KnownKeys, LockGuesses
from app.services.ingest.name_resolution import NameResolution
from tests.ingest.test_pipeline import ingest, rows
from tests.ingest.test_resolution_ingest import graph, install


class _Watch:
    """Records, per document's resolution, each anticipated target of "ACME HOLDINGS" and whether each
    decision under the locks reused the anticipated one; `between` runs once after the first anticipation.
    `guessed`: the locks guessed (else read before them, as the update runner and the judge's mode do)."""

    def __init__(self, monkeypatch, between=None, guessed: bool = False) -> None:
        self.between = between
        self.anticipated: list[str] = []
        self.reused: list[bool] = []
        self.readings = 0
        anticipate, decide_locked = NameResolution.anticipate, NameResolution.decide_locked
        read = NameResolution._read

        async def counted_read(resolution: NameResolution, *args, **kwargs):
            self.readings += 1
            return await read(resolution, *args, **kwargs)

        if not guessed:  # no guess: the merge reads before the locks
            monkeypatch.setattr(LockGuesses, "of", lambda guesses, project_id: None)
        monkeypatch.setattr(NameResolution, "_read", counted_read)

        async def watched_anticipate(resolution: NameResolution, conn) -> None:
            await anticipate(resolution, conn)
            if "acme holdings" in resolution.doc.names and resolution.anticipated is not None:
                self.anticipated.append(resolution.anticipated.result.target("acme holdings"))
                if self.between is not None:
                    between, self.between = self.between, None
                    await between()

        def watched_decide_locked(resolution: NameResolution, known) -> None:
            try:
                decide_locked(resolution, known)
            finally:
                if "acme holdings" in resolution.doc.names:
                    self.reused.append(resolution.reused)

        monkeypatch.setattr(NameResolution, "anticipate", watched_anticipate)
        monkeypatch.setattr(NameResolution, "decide_locked", watched_decide_locked)


async def _ledger(app) -> list[tuple[str, str, bool]]:
    found = await rows(app, select(entity_merge_ledger))
    return sorted((r["entity_key"], r["merged_name"], r["retroactive"]) for r in found)


async def test_an_unchanged_state_reuses_the_decision_taken_before_the_locks(
    make_settings, start_app, fake_llm, monkeypatch
):
    app = await start_app(make_settings())
    install(fake_llm)
    await ingest(app, ["doc one"])
    watch = _Watch(monkeypatch)
    await ingest(app, ["doc two"])
    assert watch.anticipated == ["acme holdings ltd."]
    assert watch.reused == [True]
    assert watch.readings == 2  # before the locks and under them
    keys, pairs = await graph(app)
    assert keys == {"acme holdings ltd.", "dr. mira tolven"}
    assert pairs == {("acme holdings ltd.", "dr. mira tolven")}


async def test_a_document_merged_between_the_decision_and_the_locks_is_seen(
    make_settings, start_app, fake_llm, monkeypatch
):
    """Doc two decides while the project is empty ("ACME HOLDINGS" stays itself); doc one, merged before doc
    two takes its locks, creates "Acme Holdings Ltd.". Under the locks doc two's decision is taken again, so
    it merges into Acme Holdings Ltd. in its own merge (a ledger row that is not retroactive), as when the
    documents come one after the other."""
    app = await start_app(make_settings())
    install(fake_llm)

    async def doc_one_merges() -> None:
        [doc] = await ingest(app, ["doc one"])
        assert doc["status"] == "processed"

    watch = _Watch(monkeypatch, between=doc_one_merges)
    [two] = await ingest(app, ["doc two"])
    assert two["status"] == "processed"
    assert watch.anticipated[0] == "acme holdings"  # decided before doc one existed
    assert watch.reused[0] is False  # the state it was decided on had changed: decided again
    keys, pairs = await graph(app)
    assert keys == {"acme holdings ltd.", "dr. mira tolven"}
    assert pairs == {("acme holdings ltd.", "dr. mira tolven")}
    ledger = await _ledger(app)
    assert ("acme holdings ltd.", "ACME HOLDINGS", False) in ledger
    aliases = {r["alias_key"]: r["entity_key"] for r in await rows(app, select(entity_aliases))}
    assert aliases["acme holdings"] == "acme holdings ltd."


async def test_locks_guessed_from_what_the_process_saw_take_one_reading(
    make_settings, start_app, fake_llm, monkeypatch
):
    """Doc one's merge showed the process "Acme Holdings Ltd.": doc two's locks cover it, so its one reading is
    under them and the decision taken on it, with the outcome of the two readings above."""
    app = await start_app(make_settings())
    install(fake_llm)
    await ingest(app, ["doc one"])
    watch = _Watch(monkeypatch, guessed=True)
    await ingest(app, ["doc two"])
    assert watch.readings == 1
    assert watch.anticipated == []  # nothing decided before the locks
    keys, pairs = await graph(app)
    assert keys == {"acme holdings ltd.", "dr. mira tolven"}
    assert pairs == {("acme holdings ltd.", "dr. mira tolven")}
    assert ("acme holdings ltd.", "ACME HOLDINGS", False) in await _ledger(app)


async def test_a_guess_that_misses_a_named_key_retries_under_the_locks_it_names(
    make_settings, start_app, fake_llm, monkeypatch
):
    """Another process merged doc one (this one never saw "Acme Holdings Ltd."): doc two's guessed locks miss it,
    so the reading under them is only the reading decided on before the locks, and the decision is checked
    under the locks of everything that reading names, as when the locks were chosen by a reading."""
    app = await start_app(make_settings())
    install(fake_llm)
    await ingest(app, ["doc one"])
    monkeypatch.setattr(LockGuesses, "of", lambda self, project_id: KnownKeys())  # a process that saw nothing
    watch = _Watch(monkeypatch, guessed=True)
    await ingest(app, ["doc two"])
    assert watch.readings == 2
    assert watch.anticipated == ["acme holdings ltd."]  # decided on the first reading, after it
    assert watch.reused == [False, True]  # the guessed locks refused it; the second reading was the same
    keys, pairs = await graph(app)
    assert keys == {"acme holdings ltd.", "dr. mira tolven"}
    assert pairs == {("acme holdings ltd.", "dr. mira tolven")}
    assert ("acme holdings ltd.", "ACME HOLDINGS", False) in await _ledger(app)


def test_known_keys_guess_the_keys_in_a_reading_s_ranges() -> None:
    known = KnownKeys()
    known.learn(["acme holdings ltd.", "acme", "dr. mira tolven", "zed"])
    ranges = Ranges(frozenset({"acme holdings "}), frozenset({" tolven"[::-1]}), frozenset({"acme", "gone"}))
    assert known.near(ranges) == {"acme holdings ltd.", "acme", "dr. mira tolven"}


def test_lock_guesses_keep_the_projects_merged_into_last() -> None:
    guesses = LockGuesses()
    first = guesses.of("p0")
    for n in range(1, 17):
        guesses.of(f"p{n}")
    assert guesses.of("p1") is guesses.of("p1")  # remembered
    assert guesses.of("p0") is not first  # the least recently merged into was forgotten
