"""Document deletion: one plan and one rebuild for one or many documents, from the cached extractions of the
chunks that remain (no extraction call)."""
