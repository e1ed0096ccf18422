"""Which database failures mean "the server is not there for us right now" (answer 503, keep retrying)
rather than a bug; shared by the HTTP error handlers and the pipeline worker."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

# SQLSTATE classes meaning "the server is not there for us right now": connection exceptions (08),
# shutdown / starting up (57P01-57P03), too many connections (53300).
_UNAVAILABLE_SQLSTATES = ("08", "57P", "53300")


def _sqlstate(exc: BaseException) -> str | None:
    seen: BaseException | None = exc
    for _ in range(5):  # DBAPIError -> the adapter's error -> asyncpg's error
        if seen is None:
            return None
        state = getattr(seen, "sqlstate", None)
        if isinstance(state, str):
            return state
        seen = getattr(seen, "orig", None) or seen.__cause__
    return None


def is_connection_error(exc: BaseException) -> bool:
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    state = _sqlstate(exc)
    if state is not None and state.startswith(_UNAVAILABLE_SQLSTATES):
        return True
    # asyncpg surfaces a refused TCP connection or a missing unix socket as a bare OSError.
    return isinstance(exc, OSError)


def is_deadlock(exc: BaseException) -> bool:
    """The server aborted this transaction to break a deadlock (SQLSTATE 40P01): nothing of it was written,
    and the same work can be tried again."""
    return _sqlstate(exc) == "40P01"
