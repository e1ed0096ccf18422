"""Chat protocols (Ollama, OpenAI) on top of the query service: model names ↔ projects, chat messages → a
query with history and a mode, and answers shaped the way each protocol's clients expect."""
