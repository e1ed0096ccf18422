"""LightRAG Server's HTTP API on this service: routes/, the request and response shapes (schemas.py) and the
translation to and from the native services (translate/)."""
