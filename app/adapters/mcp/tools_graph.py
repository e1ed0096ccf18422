"""The graph, read: `search_entities`, `get_entity`, `get_neighbours`, `find_path` (the curation, view and
path services, as GET /entities, /entities/{name} and /graph use them)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from app.container import Container
from app.services.graph.entities import CurationService
from app.services.graph.paths import PathService
from app.services.graph.view import GraphViewService
from app.web.auth import Principal

from .calls import Answer, Runtime, run_tool
from .params import Budget, EntityName, ProjectId

_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def register(server: MCPServer, runtime: Runtime) -> None:
    @server.tool(
        name="search_entities",
        description="Find entities (people, organisations, places, concepts...) whose name contains the text, "
        "highest-degree first; optionally of one type.",
        annotations=_READS,
    )
    async def search_entities(
        ctx: Context,
        name_contains: Annotated[str, Field(max_length=1000, description="Text in the name; empty: any.")] = "",
        project_id: ProjectId = "default",
        entity_type: Annotated[str | None, Field(max_length=200, description="e.g. person, organization.")] = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 20,
        max_tokens: Budget = 4000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            found = await CurationService(c).list_entities(project_id, name_contains or None, entity_type, limit, 0)
            data = {
                "entities": [
                    e.model_dump(mode="json", exclude={"created_at", "updated_at", "curated"}) for e in found.entities
                ],
                "total": found.total,
            }
            return Answer(data, lists=["entities"])

        return await run_tool(runtime, ctx, "search_entities", project_id, max_tokens, work)

    @server.tool(
        name="get_entity",
        description="One entity: its description, type, aliases, the chunks and documents it comes from, and "
        "its relations (heaviest first).",
        annotations=_READS,
    )
    async def get_entity(
        ctx: Context,
        name: EntityName,
        project_id: ProjectId = "default",
        relation_limit: Annotated[int, Field(ge=0, le=1000, description="Relations listed at most.")] = 50,
        max_tokens: Budget = 4000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            detail = await CurationService(c).get_entity(project_id, name, relation_limit)
            data = detail.model_dump(mode="json", exclude={"created_at", "updated_at", "source_ids"})
            for relation in data["relations"]:
                for noise in ("created_at", "updated_at", "curated"):
                    relation.pop(noise, None)
            notes = []
            if detail.relations_total > len(detail.relations):
                notes.append(f"listed {len(detail.relations)} of {detail.relations_total} relations (relation_limit)")
            return Answer(data, lists=["source_chunks", "relations"], texts=["description"], notes=notes)

        return await run_tool(runtime, ctx, "get_entity", project_id, max_tokens, work)

    @server.tool(
        name="get_neighbours",
        description="The entities around one entity, up to `depth` relations away (highest-degree first), with "
        "the relations among them.",
        annotations=_READS,
    )
    async def get_neighbours(
        ctx: Context,
        name: EntityName,
        project_id: ProjectId = "default",
        depth: Annotated[int, Field(ge=1, le=3, description="Hops from the entity.")] = 1,
        max_nodes: Annotated[int, Field(ge=1, le=1000, description="Entities returned at most.")] = 50,
        max_tokens: Budget = 4000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            graph = await GraphViewService(c).subgraph(project_id, name, depth, max_nodes)
            data = graph.model_dump(mode="json", exclude={"is_truncated"})
            notes = [f"stopped at max_nodes={max_nodes} entities"] if graph.is_truncated else []
            return Answer(data, lists=["edges", "nodes"], notes=notes)

        return await run_tool(runtime, ctx, "get_neighbours", project_id, max_tokens, work)

    @server.tool(
        name="find_path",
        description="The shortest chain of relations linking two entities: the entities in order and the "
        "relation between each consecutive two.",
        annotations=_READS,
    )
    async def find_path(
        ctx: Context,
        source: EntityName,
        target: EntityName,
        project_id: ProjectId = "default",
        max_hops: Annotated[int, Field(ge=1, le=6, description="Longest chain searched.")] = 4,
        max_tokens: Budget = 4000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            path = await PathService(c).shortest(project_id, source, target, max_hops)
            entities = [
                e.model_dump(mode="json", include={"name", "entity_type", "description"}) for e in path.entities
            ]
            relations = [
                r.model_dump(mode="json", include={"source", "target", "keywords", "description", "weight"})
                for r in path.relations
            ]
            found = bool(entities)
            data: dict = {"found": found, "hops": len(relations), "entities": entities, "relations": relations}
            if not found:
                data["reason"] = (
                    "the two entities are not connected"
                    if path.exhausted
                    else f"no chain of at most {max_hops} relations found"
                )
            texts = [f"entities.{i}.description" for i in range(len(entities))]
            texts += [f"relations.{i}.description" for i in range(len(relations))]
            return Answer(data, texts=texts[::-1])

        return await run_tool(runtime, ctx, "find_path", project_id, max_tokens, work)
