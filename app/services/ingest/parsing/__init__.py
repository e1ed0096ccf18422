"""Uploaded files to document text: pure parsers per format, run in killable worker processes on upload."""

from app.services.ingest.parsing.formats import SUPPORTED_EXTENSIONS, ParseLimits, extract_text
from app.services.ingest.parsing.isolation import extract_text_isolated, worker_pids

__all__ = ["SUPPORTED_EXTENSIONS", "ParseLimits", "extract_text", "extract_text_isolated", "worker_pids"]
