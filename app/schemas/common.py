"""Field types every request schema shares: text that can be stored and searched, and lists with a cap.

Caps of lists are checked on the raw list before any item is validated: pydantic's own `max_length` is
checked only after every item has been turned into a model. BodyLimitMiddleware has already refused a body
holding more than MAX_REQUEST_JSON_VALUES values, so the list reaching a schema is bounded either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from app.core.limits import (  # noqa: F401  (re-exported: every schema takes its caps from here)
    MAX_CHAT_MESSAGES,
    MAX_CONTENT_PARTS,
    MAX_DOCUMENTS_ITEMS,
    MAX_ENTITY_TYPES,
    MAX_HISTORY_ITEMS,
    MAX_IDS,
    MAX_KEYWORDS,
)

_UNSAFE = re.compile("[\x00\ud800-\udfff]")


def _safe(value: str) -> str:
    if _UNSAFE.search(value):
        raise PydanticCustomError("string_unsafe", "Text must not contain NUL characters or lone surrogates")
    return value


# Text that PostgreSQL can store and compare, and every encoder can encode: no NUL, no lone surrogate.
SafeStr = Annotated[str, AfterValidator(_safe)]


@dataclass(frozen=True)
class MaxItems:
    """`Annotated[list[X], MaxItems(n)]`: a list of at most n items, refused as a whole before its items are
    validated; the schema says maxItems."""

    limit: int

    def _check(self, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) > self.limit:
            raise PydanticCustomError(
                "too_long",
                "List should have at most {max_length} items, not {actual_length}",
                {"field_type": "List", "max_length": self.limit, "actual_length": len(value)},
            )
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["maxItems"] = self.limit
        return json_schema
