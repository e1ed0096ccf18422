"""The Model Context Protocol server: the knowledge graph as tools and resources for agents, over streamable
HTTP at /mcp (mounted by app/main.py) and over stdio (`lightrag-service mcp`), under the REST API's keys and
project scopes. Each tool calls the native services; nothing here holds query, graph or ingest logic."""
