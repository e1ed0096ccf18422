"""One vocabulary of error codes (app/core/error_codes.py): every code the source answers with is in it, every
code in it is used, and the API description of the error body lists exactly it."""

from __future__ import annotations

import ast
from pathlib import Path

from app.core.error_codes import ERROR_CODES
from app.main import create_app

APP = Path(__file__).resolve().parents[2] / "app"


def _code_literals() -> dict[str, list[str]]:
    """code → where it appears: `code="x"` arguments, `code = "x"` class attributes, `{"code": "x"}` bodies and
    the values of `..._CODES` tables."""
    found: dict[str, list[str]] = {}
    for path in APP.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            values: list[ast.expr] = []
            if isinstance(node, ast.keyword) and node.arg == "code":
                values = [node.value]
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if "code" in names and node.value is not None:
                    values = [node.value]
                elif any(name.endswith("_CODES") for name in names) and isinstance(node.value, ast.Dict):
                    values = list(node.value.values)
            elif isinstance(node, ast.Dict):
                values = [
                    v
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value == "code"
                ]
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.setdefault(value.value, []).append(f"{path.relative_to(APP.parent)}:{node.lineno}")
    return found


def test_every_code_the_service_answers_with_is_in_the_vocabulary() -> None:
    unknown = {code: places for code, places in _code_literals().items() if code not in ERROR_CODES}
    assert not unknown, f"add these to app/core/error_codes.py: {unknown}"


def test_every_code_of_the_vocabulary_is_used() -> None:
    source = "\n".join(p.read_text() for p in APP.rglob("*.py") if p.name != "error_codes.py")
    unused = sorted(code for code in ERROR_CODES if f'"{code}"' not in source)
    assert not unused, f"no code raises these any more: {unused}"


def test_the_api_description_lists_the_vocabulary() -> None:
    spec = create_app().openapi()
    code = spec["components"]["schemas"]["ErrorBody"]["properties"]["code"]
    assert set(code["enum"]) == ERROR_CODES
