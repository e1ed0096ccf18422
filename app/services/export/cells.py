"""Cell hygiene for spreadsheet formats (csv, xlsx)."""

from __future__ import annotations

# A spreadsheet treats a cell starting with one of these as a formula (tab/CR can hide a following one).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")

EXCEL_CELL_LIMIT = 32_767  # characters (UTF-16 code units) per cell


def neutralise(value: str) -> str:
    """Prefix formula-looking text with `'` (OWASP CSV-injection advice) so no spreadsheet evaluates it."""
    return "'" + value if value.startswith(FORMULA_TRIGGERS) else value


def truncation_marker(original_units: int) -> str:
    return f" …[truncated: cell limit {EXCEL_CELL_LIMIT} of {original_units} characters]"


def fit_excel_cell(value: str) -> str:
    """Cut text longer than Excel's cell limit, ending it with a visible marker; shorter text is unchanged.

    Excel counts UTF-16 code units, so characters outside the BMP (emoji) count twice."""
    if len(value) * 2 <= EXCEL_CELL_LIMIT:
        return value
    encoded = value.encode("utf-16-le")
    units = len(encoded) // 2
    if units <= EXCEL_CELL_LIMIT:
        return value
    marker = truncation_marker(units)
    keep = EXCEL_CELL_LIMIT - len(marker.encode("utf-16-le")) // 2
    # A cut inside a surrogate pair leaves half a character: "ignore" drops it.
    return encoded[: keep * 2].decode("utf-16-le", errors="ignore") + marker
