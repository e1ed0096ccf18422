"""Translation between LightRAG Server's request/response shapes and this service's services."""
