"""The Ollama- and OpenAI-compatible chat APIs: their routes, schemas, shared error rendering (routing.py) and
the answering behind them (answering/)."""
