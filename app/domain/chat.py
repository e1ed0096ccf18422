"""Chat messages as the providers exchange them, and the clean-up every model answer goes through."""

from __future__ import annotations

import re

Message = dict[str, str]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def strip_think(text: str) -> str:
    """Drop reasoning blocks some models emit before their answer."""
    text = _THINK.sub("", text)
    if "</think>" in text.lower():  # an unclosed opening tag was cut off by the provider
        text = text[text.lower().rindex("</think>") + len("</think>") :]
    return text.strip()
