"""Streaming graph export (csv zip, xlsx, md, txt, json): one writer module per format, fed row batches."""

from app.services.export.formats import FORMATS, ExportFormat
from app.services.export.service import ExportDownload, ExportOptions, ExportService

__all__ = ["FORMATS", "ExportDownload", "ExportFormat", "ExportOptions", "ExportService"]
