"""LightRAG service: documents to a knowledge graph on PostgreSQL + pgvector, queried in six modes."""
