"""Chat messages → a query: the last user message is the question (its mode prefix picks the mode), the
turns before it are the conversation history."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from app.adapters.chat.answering.modes import split_mode
from app.core.errors import InvalidInput
from app.schemas.query import HistoryMessage, QueryRequest

# Chat roles kept in the history, as the query service names them; tool calls and results are left out.
_HISTORY_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


@dataclass(frozen=True)
class ChatTurn:
    role: str
    content: str


@dataclass(frozen=True)
class ChatQuery:
    model: str  # as the client named it, echoed in every answer
    request: QueryRequest
    context_only: bool = False


def chat_query(model: str, project_id: str, turns: list[ChatTurn], *, max_history: int) -> ChatQuery:
    """The query the conversation asks; 422 `no_user_message` without a user turn, `empty_query` when it is
    blank (or only a mode prefix). Only the latest `max_history` earlier turns are kept."""
    last = next((i for i in range(len(turns) - 1, -1, -1) if turns[i].role == "user"), None)
    if last is None:
        raise InvalidInput(
            "The conversation has no user message: the last user message is the question", code="no_user_message"
        )
    question = split_mode(turns[last].content)
    if not question.text.strip():
        raise InvalidInput(
            "The user message has no question" + (" after its mode prefix" if question.prefixed else ""),
            code="empty_query",
        )
    history = [m for turn in turns[:last] if turn.role in _HISTORY_ROLES and (m := _history_message(turn)).content]
    history = history[-max_history:] if max_history else []
    try:
        request = QueryRequest(
            project_id=project_id,
            query=question.text.strip(),
            mode=question.mode,
            only_need_context=question.context_only,
            conversation_history=history,
        )
    except ValidationError as exc:
        raise InvalidInput(
            f"The conversation cannot be asked: {exc.errors()[0]['msg']}", code="invalid_conversation"
        ) from exc
    return ChatQuery(model, request, question.context_only)


def _history_message(turn: ChatTurn) -> HistoryMessage:
    content = split_mode(turn.content).text.strip() if turn.role == "user" else turn.content.strip()
    return HistoryMessage(role=_HISTORY_ROLES[turn.role], content=content)
