"""Prompt texts, one module per LLM task."""
