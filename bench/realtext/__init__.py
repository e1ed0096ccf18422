"""Offline real-text benchmark: GraphRAG-Bench Medical through the service and official LightRAG 1.5.7.

Run with `python -m bench.realtext` (needs the `bench` extra: `make bench-real`); not part of CI."""
