"""The model check: whether the configured LLM and embedding model are good enough to ingest with."""
