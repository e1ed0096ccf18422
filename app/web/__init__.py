"""The HTTP edge shared by every route: auth, middleware, error rendering, request dependencies, streaming
responses, upload limits, the OpenAPI document and the web UI."""
