"""Protocol adapters: the LightRAG Server-compatible API and the chat APIs (Ollama, OpenAI). Each holds its
routes, schemas and translation; they import the core, and nothing in the core imports them (the composition
root mounts their routes). They are the one place a request may call several services."""
