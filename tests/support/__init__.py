"""Helpers shared by the test packages: the embedded test database, fake provider servers, a loopback
uvicorn runner, graph builders and sample files. Fixtures that use them live in tests/conftest.py."""
