"""Mode prefixes, model names and the conversation → query mapping, without a server."""

from __future__ import annotations

import pytest

from app.adapters.chat.answering.conversation import ChatTurn, chat_query
from app.adapters.chat.answering.models import models_of, project_for_model
from app.adapters.chat.answering.modes import split_mode
from app.core.errors import InvalidInput, NotFound


@pytest.mark.parametrize(
    "text,mode,context_only,rest",
    [
        ("Who is Alice?", "mix", False, "Who is Alice?"),
        ("/local Who is Alice?", "local", False, "Who is Alice?"),
        ("  /GLOBAL\nthemes?", "global", False, "themes?"),
        ("/context who?", "mix", True, "who?"),
        ("/bypass", "bypass", False, ""),
        ("/localhost is a name", "mix", False, "/localhost is a name"),  # a prefix is a whole word
        ("/unknown x", "mix", False, "/unknown x"),
    ],
)
def test_mode_prefixes(text, mode, context_only, rest):
    moded = split_mode(text)
    assert (moded.mode, moded.context_only, moded.text) == (mode, context_only, rest)


def test_model_names_map_to_projects():
    assert project_for_model("lightrag", "lightrag") == "default"
    assert project_for_model("lightrag:handbook", "lightrag") == "handbook"
    assert project_for_model("lightrag:latest", "lightrag:latest") == "default"  # the plain name wins
    assert project_for_model("kb", "kb") == "default"
    for name in ("gpt-4o", "lightrag:", "lightrag:Bad Name", "lightrag"):
        with pytest.raises(NotFound):
            project_for_model(name, "kb")


def test_models_list_the_default_project_twice_and_nothing_hidden_by_the_plain_name():
    from datetime import UTC, datetime  # noqa: PLC0415

    now = datetime.now(UTC)
    names = [m.name for m in models_of([("default", now), ("latest", now), ("a", now)], "lightrag:latest")]
    assert names == ["lightrag:latest", "lightrag:default", "lightrag:a"]


def test_conversation_to_query_keeps_the_latest_history():
    turns = [
        ChatTurn("user", "/local one"),
        ChatTurn("assistant", "two"),
        ChatTurn("tool", "{}"),
        ChatTurn("developer", "three"),
        ChatTurn("user", "/naive four"),
        ChatTurn("assistant", "after"),
    ]
    query = chat_query("lightrag", "default", turns, max_history=2)
    request = query.request
    assert (request.query, request.mode, request.project_id) == ("four", "naive", "default")
    assert [(m.role, m.content) for m in request.conversation_history] == [("assistant", "two"), ("system", "three")]
    assert chat_query("m", "p", turns, max_history=0).request.conversation_history == []


@pytest.mark.parametrize(
    "turns,code",
    [
        ([], "no_user_message"),
        ([ChatTurn("assistant", "hi")], "no_user_message"),
        ([ChatTurn("user", " /mix ")], "empty_query"),
        ([ChatTurn("user", "")], "empty_query"),
    ],
)
def test_bad_conversations(turns, code):
    with pytest.raises(InvalidInput) as bad:
        chat_query("m", "p", turns, max_history=10)
    assert bad.value.code == code
