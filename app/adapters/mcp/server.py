"""The MCP server: its tools and resources, for one runtime (HTTP or stdio, read-only or not)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from . import resources, tools_documents, tools_graph, tools_query
from .calls import Runtime

INSTRUCTIONS = (
    "A knowledge graph built from a project's documents (entities, the relations between them, and the text "
    "chunks they come from). Use `query` for an answer with citations, `retrieve_context` to answer yourself "
    "from what the graph holds, and the entity tools to explore it. Every tool takes `project_id` "
    "(`list_projects`) and `max_tokens`: a result cut to fit says so in `truncated` and `truncation`."
)


def build_server(runtime: Runtime, version: str) -> MCPServer:
    server: MCPServer = MCPServer(
        "lightrag-service",
        title="LightRAG Service",
        instructions=INSTRUCTIONS,
        version=version,
        log_level="WARNING",
    )
    tools_query.register(server, runtime)
    tools_graph.register(server, runtime)
    tools_documents.register(server, runtime)
    resources.register(server, runtime)
    return server
