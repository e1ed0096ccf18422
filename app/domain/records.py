"""What one extraction pass yields for one chunk, after parsing and normalisation."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EntityRecord:
    name: str  # normalised display name
    key: str  # entity_key(name): identity within the project
    entity_type: str  # normalised type ("unknown" when unusable)
    description: str
    chunk_id: str = ""
    file_path: str | None = None


@dataclass
class RelationRecord:
    src_name: str
    tgt_name: str
    src_key: str  # src_key < tgt_key always (undirected, stored sorted)
    tgt_key: str
    keywords: list[str]
    description: str
    weight: float = 1.0
    chunk_id: str = ""
    file_path: str | None = None


@dataclass
class ChunkExtraction:
    """Everything extracted from one chunk (first pass merged with gleaning)."""

    chunk_id: str
    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    malformed: int = 0  # records skipped as unparseable
    recovered: int = 0  # records read (before identical ones were dropped)
    completed: bool = False  # the answer wrote the completion marker
    no_usable_records: bool = False  # the answer held no usable record: prose, nothing, or only broken records
    retried: bool = False  # the first answer had no usable record and the model was asked again
    runaway_answers: int = 0  # answers cut by their max_tokens cap or repeating themselves (loops trimmed)
    truncated_names: int = 0  # names cut to the name length limit (characters, or bytes of the key)


NO_USABLE_RECORDS = "the model returned no usable records"


@dataclass
class ExtractionReport:
    """What extraction produced for one document, stored with it and shown by the API."""

    chunks: int = 0
    entities: int = 0  # distinct entities extracted (relation ends not counted)
    relations: int = 0  # distinct relations extracted
    unparseable_records: int = 0  # records skipped as unreadable
    empty_chunks: int = 0  # chunks that yielded no entity and no relation
    failed_chunks: int = 0  # chunks whose answers held no usable record, even after one corrective retry
    retried_chunks: int = 0  # chunks whose first answer held no usable record
    runaway_answers: int = 0  # answers cut by their token cap or looping (the records before the loop kept)
    truncated_names: int = 0  # names cut to the name length limit (characters, or bytes of the key)
    judge_pairs_unasked: int = 0  # judge candidates over its per-document cap, kept as suggestions (set by the judge)
    warning: str | None = None

    @classmethod
    def of(cls, extractions: list[ChunkExtraction]) -> ExtractionReport:
        report = cls(
            chunks=len(extractions),
            entities=len({e.key for x in extractions for e in x.entities}),
            relations=len({(r.src_key, r.tgt_key) for x in extractions for r in x.relations}),
            unparseable_records=sum(x.malformed for x in extractions),
            empty_chunks=sum(1 for x in extractions if not x.entities and not x.relations),
            failed_chunks=sum(1 for x in extractions if x.no_usable_records),
            retried_chunks=sum(1 for x in extractions if x.retried),
            runaway_answers=sum(x.runaway_answers for x in extractions),
            truncated_names=sum(x.truncated_names for x in extractions),
        )
        if report.chunks and report.failed_chunks == report.chunks:
            report.warning = NO_USABLE_RECORDS
        elif report.failed_chunks:
            report.warning = f"{report.failed_chunks} of {report.chunks} chunks: {NO_USABLE_RECORDS}"
        elif report.chunks and not report.entities and not report.relations:
            report.warning = "the model found no entities or relations"
        elif report.runaway_answers:
            report.warning = (
                f"{report.runaway_answers} answers ran away (cut by LLM_MAX_TOKENS_EXTRACT or looping); "
                "records before the cut were kept"
            )
        elif report.truncated_names:
            report.warning = (
                f"{report.truncated_names} names were too long and were cut (at most "
                "ENTITY_NAME_MAX_LENGTH characters and 1,024 bytes of UTF-8)"
            )
        return report

    def as_dict(self) -> dict[str, int | str | None]:
        return dict(vars(self))
